"""Evaluators that need no LLM, each on cases worked out by hand, and the script evaluator
against a real subprocess fed hostile output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memgauge.errors import UsageError
from memgauge.scorers import (
    EvalContext,
    Regex,
    ScriptEvaluator,
    SemanticSimilarity,
    TokenF1,
    evaluator_from_spec,
    locomo_f1,
    mem0_f1,
    to_spec,
)

PY = sys.executable


def score(
    spec: object, output: object, expected: object = None
) -> tuple[float | None, bool | None]:
    s = evaluator_from_spec(spec).evaluate(EvalContext(output=output, expected=expected))  # type: ignore[arg-type]
    return s.value, s.passed


@pytest.mark.parametrize(
    ("spec", "output", "expected", "passed"),
    [
        ("exact", " Paris ", "Paris", True),
        ("exact", "paris", "Paris", False),
        ({"exact": {"case_sensitive": False}}, "PARIS", "Paris", True),
        ("exact", "Lyon", ["Paris", "Lyon"], True),  # any of several expected values
        ("contains", "The capital is Paris.", "Paris", True),
        ("contains", "The capital is paris.", "Paris", False),
        ("icontains", "The capital is PARIS.", "paris", True),
        ("icontains", "Straße", "STRASSE", True),  # Unicode case folding
        ({"contains": {"negate": True}}, "I have no idea", "Paris", True),
        ({"icontains": {"value": "sorry", "negate": True}}, "Sorry, I can't", None, False),
        ({"regex": r"^\d{4}-\d{2}-\d{2}$"}, "2023-05-07", None, True),
        ({"regex": {"value": "^yes", "flags": "i"}}, "YES it is", None, True),
        ({"regex": {"value": "not mentioned", "negate": True}}, "not mentioned", None, False),
    ],
)
def test_text_evaluators(spec: object, output: str, expected: object, passed: bool) -> None:
    value, ok = score(spec, output, expected)
    assert ok is passed
    assert value == (1.0 if passed else 0.0)


def test_text_evaluator_without_expected_is_a_failure_not_a_zero() -> None:
    s = evaluator_from_spec("contains").evaluate(EvalContext(output="x"))
    assert s.value is None
    assert s.error is not None


def test_bad_regex_is_a_usage_error_at_build_and_a_failure_from_item_data() -> None:
    with pytest.raises(UsageError, match="does not compile"):
        Regex(value="(")
    with pytest.raises(UsageError, match="flags"):
        Regex(value="a", flags="x")
    s = Regex().evaluate(EvalContext(output="a", expected="("))
    assert s.value is None
    assert "does not compile" in (s.error or "")


def test_locomo_f1_follows_locomo_normalisation_and_stemming() -> None:
    # "running" and "runs" stem to "run"; "the", "and", commas and punctuation are dropped
    assert locomo_f1("The dog, and the cat were running!", "dog cat runs") == pytest.approx(
        2 * (3 / 4) * (3 / 3) / (3 / 4 + 1)
    )
    assert locomo_f1("7 May 2023", "7 May 2023") == 1.0
    assert locomo_f1("", "anything") == 0.0
    # multiset: a repeated word counts once per occurrence on each side
    assert locomo_f1("paris paris", "paris") == pytest.approx(2 * 0.5 * 1 / 1.5)
    multi = TokenF1(multi_answer=True).evaluate(
        EvalContext(output="hiking, painting", expected="painting, hiking, swimming")
    )
    assert multi.value == pytest.approx(2 / 3)  # two of three gold parts found


def test_mem0_f1_uses_sets_and_simple_tokens() -> None:
    assert mem0_f1("paris paris", "paris") == 1.0  # sets: duplicates do not count
    assert mem0_f1("Running, dogs!", "running dogs") == 1.0
    assert mem0_f1("the dogs", "dog") == 0.0  # no stemming
    assert mem0_f1("", "x") == 0.0
    v = TokenF1(variant="mem0", threshold=0.5).evaluate(EvalContext(output="a b", expected="a c"))
    assert v.value == pytest.approx(0.5)
    assert v.passed is True
    with pytest.raises(UsageError):
        TokenF1(variant="mem0", multi_answer=True)


def test_semantic_similarity_with_the_offline_model() -> None:
    ev = SemanticSimilarity(threshold=0.6)
    close = ev.evaluate(
        EvalContext(output="The user adopted a dog called Max", expected="User has a dog named Max")
    )
    far = ev.evaluate(
        EvalContext(output="Quarterly revenue grew", expected="User has a dog named Max")
    )
    assert close.passed is True
    assert far.passed is False
    assert close.value is not None
    assert far.value is not None
    assert close.value > far.value
    assert str(close.reason).endswith('against "User has a dog named Max"')
    broken = SemanticSimilarity(embedder="nonsense").evaluate(EvalContext(output="a", expected="b"))
    assert broken.value is None
    assert "unknown embedder" in (broken.error or "")


def test_retrieval_measure_per_item() -> None:
    v, _ = score({"retrieval": "RR@10"}, ["x", "m2", "m1"], {"m1": 3, "m2": 1})
    assert v == pytest.approx(1 / 3)  # m2 is below the threshold 2
    v, _ = score({"retrieval": {"measure": "Recall@2"}}, [{"id": "a"}, {"id": "b"}], ["b", "c"])
    assert v == 0.5
    s = evaluator_from_spec("retrieval").evaluate(EvalContext(output="not a list", expected=["a"]))
    assert s.value is None


def test_specs_round_trip_and_reject_unknowns() -> None:
    ev = evaluator_from_spec({"token_f1": {"variant": "mem0", "threshold": 0.5}})
    assert to_spec(ev) == {"token_f1": {"variant": "mem0", "threshold": 0.5}}
    assert to_spec(evaluator_from_spec("exact")) == {"exact": {}}
    assert to_spec(evaluator_from_spec({"regex": "^a"})) == {"regex": {"value": "^a"}}
    with pytest.raises(UsageError, match="unknown evaluator 'bleu'"):
        evaluator_from_spec("bleu")
    with pytest.raises(UsageError, match=r"exact.nonsense: unknown key \(it takes case_sensitive"):
        evaluator_from_spec({"exact": {"nonsense": 1}})


HOSTILE = '"; touch PWNED; echo " $(touch PWNED2) `touch PWNED3` ; rm -rf ~ ; echo \''


@pytest.mark.parametrize("via", ["stdin", "file", "env"])
def test_script_gets_hostile_output_as_data_never_as_shell(via: str, tmp_path: Path) -> None:
    script = tmp_path / "check.py"
    script.write_text(
        "import os, sys\n"
        f"via = {via!r}\n"
        "if via == 'stdin':\n    text = sys.stdin.read()\n"
        "elif via == 'env':\n    text = os.environ['MEMGAUGE_OUTPUT']\n"
        "else:\n    text = open(sys.argv[1], encoding='utf-8').read()\n"
        "open('received.txt', 'w', encoding='utf-8').write(text)\n"
        "print('checked')\nprint(0.75)\n"
    )
    args = [PY, str(script)] + (["{output_file}"] if via == "file" else [])
    ev = ScriptEvaluator(command=args, via=via, cwd=str(tmp_path))  # type: ignore[arg-type]
    s = ev.evaluate(EvalContext(output=HOSTILE, expected="x"))
    assert s.error is None, s.reason
    assert s.value == 0.75
    assert s.passed is True
    assert (tmp_path / "received.txt").read_text(encoding="utf-8") == HOSTILE
    assert not any((tmp_path / n).exists() for n in ("PWNED", "PWNED2", "PWNED3"))
    assert Path.home().exists()


def test_script_exit_code_stderr_timeout_and_bad_scores(tmp_path: Path) -> None:
    fail = ScriptEvaluator(
        command=[PY, "-c", "import sys; sys.stderr.write('bad answer\\n'); sys.exit(3)"]
    )
    s = fail.evaluate(EvalContext(output="x"))
    assert s.value == 0.0
    assert s.passed is False
    assert s.detail["exit_code"] == 3
    assert "bad answer" in s.detail["stderr"]
    assert "bad answer" in s.reason
    slow = ScriptEvaluator(command=[PY, "-c", "import time; time.sleep(30)"], timeout=0.5)
    t = slow.evaluate(EvalContext(output="x"))
    assert t.value is None
    assert "timed out after 0.5 s" in (t.error or "")
    big = ScriptEvaluator(command=[PY, "-c", "print(7)"]).evaluate(EvalContext(output="x"))
    assert big.value is None
    assert "outside [0, 1]" in (big.error or "")
    missing = ScriptEvaluator(command="no-such-program-here --flag").evaluate(
        EvalContext(output="x")
    )
    assert missing.value is None
    assert "cannot run" in (missing.error or "")
    with pytest.raises(UsageError, match="empty"):
        ScriptEvaluator(command="")


def test_script_string_command_is_split_not_shelled(tmp_path: Path) -> None:
    ev = ScriptEvaluator(command=f"{PY} -c 'import sys; print(sys.argv[1:])' ; touch {tmp_path}/X")
    s = ev.evaluate(EvalContext(output=""))
    # the ; and touch arrive as arguments to python, not as a second command
    assert s.passed is True
    assert s.detail["stdout"] == f"[';', 'touch', '{tmp_path}/X']\n"
    assert not (tmp_path / "X").exists()
