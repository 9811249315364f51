"""A default lives in one place: the bootstrap's resamples and confidence level are
`memgauge._util.numbers.N_RESAMPLES` and `CONFIDENCE`, an A/B test's graduation rules and
Beta-Binomial threshold `memgauge.stats.sequential.DEFAULT_GRADUATION` and `PROB_THRESHOLD`, and
every function, field, option and settings mapping that takes them defaults to those names,
never to a copy of the number (a copy is a second place to change, and a path that keeps the
old value when the first one moves)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from tests.conftest import SourceTree

from memgauge.stats import bootstrap

SRC = Path(__file__).resolve().parents[1] / "src" / "memgauge"
NAMES = {"n_resamples", "resamples", "confidence"}
#: an A/B test's decision defaults, written out only where they are defined
AB_NAMES = {"prob_threshold", "improvement", "max_latency_increase", "graduation_threshold"}
AB_OWNER = SRC / "stats" / "sequential.py"
AB_OPTIONS = {"--improvement", "--max-latency-increase", "--prob-threshold"}


def _number(node: ast.expr) -> bool:
    """Whether `node` is a number written out (True and False are not)."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def _literal_defaults(
    tree: ast.AST,
    names: set[str] = NAMES,
    options: set[str] = frozenset({"--resamples"}),
    written: Callable[[ast.expr], bool] = _number,
) -> list[tuple[int, str]]:
    """(line, name) of each parameter, dataclass field, settings key or option (`options`) in
    `tree` named in `names` whose default is `written` out (a number, by default)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = list(
                zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
            )
            pairs += [
                (a, d)
                for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                if d is not None
            ]
            found += [(d.lineno, a.arg) for a, d in pairs if a.arg in names and written(d)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id in names and node.value is not None and written(node.value):
                found.append((node.lineno, node.target.id))
        elif isinstance(node, ast.Dict):
            found += [
                (v.lineno, k.value)
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and k.value in names
                if written(v)
            ]
        elif isinstance(node, ast.Call) and any(
            isinstance(a, ast.Constant) and a.value in options for a in node.args
        ):
            found += [
                (k.lineno, "option")
                for k in node.keywords
                if k.arg == "default" and written(k.value)
            ]
    return found


def test_the_bootstraps_defaults_are_named_not_copied(source_tree: SourceTree) -> None:
    copies = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        for line, name in _literal_defaults(source_tree(path))
    ]
    assert copies == []


def test_the_names_are_the_one_default() -> None:
    from memgauge._util.numbers import CONFIDENCE, N_RESAMPLES  # the one place

    assert (bootstrap.N_RESAMPLES, bootstrap.CONFIDENCE) == (N_RESAMPLES, CONFIDENCE)
    assert (N_RESAMPLES, CONFIDENCE) == (1000, 0.95)


def test_an_ab_tests_decision_defaults_are_named_not_copied(source_tree: SourceTree) -> None:
    copies = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        if path != AB_OWNER
        for line, name in _literal_defaults(
            source_tree(path), AB_NAMES | {"min_samples"}, AB_OPTIONS
        )
        # min_samples is also the SPRT's own (informative pairs, 30) and the watch's (20)
        if name != "min_samples" or _is_graduation_min(path, line)
    ]
    assert copies == []


def _is_graduation_min(path: Path, line: int) -> bool:
    """Whether the `min_samples` default at `line` is the graduation rules' 100."""
    return "100" in path.read_text(encoding="utf-8").splitlines()[line - 1]


#: the tests' defaults as numbers (`memgauge._util.numbers`: ALPHA, BETA, POWER, MDE): a name
#: of these with another default (a fusion's `alpha`, say) is another quantity
TEST_DEFAULTS = {
    "alpha": 0.05,
    "beta": 0.2,
    "power": 0.8,
    "min_power": 0.8,
    "delta": 0.05,
    "sprt_delta": 0.05,
}
TEST_OPTIONS = {"--alpha", "--beta", "--power", "--delta", "--sprt-delta"}


def test_the_tests_significance_power_and_effect_are_named_not_copied(
    source_tree: SourceTree,
) -> None:
    """alpha 0.05, beta 0.20, power 0.80 and seed 002's 0.05 minimum detectable effect were
    written out in 30 places (the SPRT, the paired and multi-system tests, sample-size, the
    gate's power warning, the A/B API, their options); each is now one name."""

    def a_test_default(node: ast.expr) -> bool:
        return _number(node) and isinstance(node, ast.Constant) and node.value in {0.05, 0.2, 0.8}

    copies = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        for line, name in _literal_defaults(
            source_tree(path),
            set(TEST_DEFAULTS),
            TEST_OPTIONS,
            a_test_default,
        )
    ]
    assert copies == []


def test_a_sequential_tests_bounds_default_is_named_not_copied(source_tree: SourceTree) -> None:
    def ville(node: ast.expr) -> bool:
        return isinstance(node, ast.Constant) and node.value == "ville"

    copies = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        for line, name in _literal_defaults(
            source_tree(path),
            {"bounds", "sprt_bounds"},
            {"--sprt-bounds", "--bounds"},
            ville,
        )
    ]
    assert copies == []


def test_the_test_defaults_are_their_values() -> None:
    from memgauge._util.numbers import ALPHA, BETA, MDE, POWER
    from memgauge.stats.sequential import DEFAULT_BOUNDS, SPRT

    assert (ALPHA, BETA, POWER, MDE, DEFAULT_BOUNDS) == (0.05, 0.2, 0.8, 0.05, "ville")
    assert (SPRT(delta=MDE).alpha, SPRT(delta=MDE).beta) == (ALPHA, BETA)


def test_a_runs_failure_budget_is_named_not_copied(source_tree: SourceTree) -> None:
    """max_failure_rate's 0.1 was written out in seven places (the suite builders, the API's,
    the CLI's fallback, the option's help) and the audit's 0.5 in two: each is now one name,
    `MAX_FAILURE_RATE` and `AUDIT_MAX_FAILURE_RATE`."""
    from memgauge._util.numbers import AUDIT_MAX_FAILURE_RATE, MAX_FAILURE_RATE
    from memgauge.runs.suite import Suite

    copies = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        for line, name in _literal_defaults(source_tree(path), {"max_failure_rate"})
    ]
    assert copies == []
    assert Suite.model_fields["max_failure_rate"].default == MAX_FAILURE_RATE
    assert (MAX_FAILURE_RATE, AUDIT_MAX_FAILURE_RATE) == (0.1, 0.5)


def test_the_reference_memorys_modes_are_written_once(source_tree: SourceTree) -> None:
    """`lexical`, `dense`, `hybrid` were written out together in four places (the `-s`
    grammar, the reference memory's type and check, the demo's systems, the file sniffer): they
    are `memgauge._util.builtins.REFERENCE_MODES`, beside the built-in subject kinds."""
    modes = {"lexical", "dense", "hybrid"}
    copies = [
        f"{path.relative_to(SRC)}:{node.lineno}"
        for path in sorted(SRC.rglob("*.py"))
        for node in ast.walk(source_tree(path))
        if isinstance(node, ast.Tuple | ast.Set | ast.List)
        if modes <= {e.value for e in node.elts if isinstance(e, ast.Constant)}
    ]
    assert copies == ["_util/builtins.py:" + str(_line_of("ReferenceMode = "))]
    from memgauge._util.builtins import REFERENCE_MODES

    assert REFERENCE_MODES == ("lexical", "dense", "hybrid")


def _line_of(text: str) -> int:
    lines = (SRC / "_util" / "builtins.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(text))


def test_the_agent_metrics_cutoff_is_named_not_copied(source_tree: SourceTree) -> None:
    """K = 5 was written out in `evaluate --agent-k`, `evaluate_suite` and the `ir` aggregate;
    each is now `memgauge.metrics.agent.DEFAULT_AGENT_K`, the value the README states."""
    copies = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        for line, name in _literal_defaults(source_tree(path), {"agent_k"}, {"--agent-k"})
    ]
    assert copies == []
