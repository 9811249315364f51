"""The one JSON / YAML reader and the strict number and JSON helpers (issue 13, items 4 and 6)."""

from __future__ import annotations

import itertools
import json
import math

import pytest

from memgauge._util.jsonout import dumps_strict
from memgauge._util.numbers import parse_finite_float, parse_int
from memgauge.data.parsing import MAX_ALIASES, ParseError, load_yaml, loads_json


def _bomb(levels: int, width: int) -> str:
    """A "billion laughs" document: `width ** levels` strings once every alias is copied."""
    names = [chr(ord("a") + i) for i in range(levels)]
    lines = [f"{names[0]}: &{names[0]} [{','.join(['lol'] * width)}]"]
    for prev, cur in itertools.pairwise(names):
        lines.append(f"{cur}: &{cur} [{','.join(['*' + prev] * width)}]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_without_expanding_it() -> None:
    bomb = _bomb(9, 9)  # 387,420,489 strings: minutes and gigabytes for anything walking it
    with pytest.raises(ParseError, match="expands to more than 10 MB") as caught:
        load_yaml(bomb)
    assert caught.value.line == 7  # where the expansion passes 10 MB


def test_too_many_aliases_are_refused_even_when_small() -> None:
    text = "a: &a x\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n"
    with pytest.raises(ParseError, match=f"more than {MAX_ALIASES} aliases"):
        load_yaml(text)
    value, _ = load_yaml("a: &a x\nb: [" + ", ".join(["*a"] * MAX_ALIASES) + "]\n")
    assert value["b"] == ["x"] * MAX_ALIASES


def test_recursive_alias_is_refused() -> None:
    with pytest.raises(ParseError, match="recursive alias"):
        load_yaml("a: &a [1, *a]\n")


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [("name: a\nx: 1\nname: b\n", 3, "name"), ("top:\n  k: 1\n  k: 2\n", 3, "k")],
)
def test_yaml_duplicate_keys_are_refused_with_line_and_key(text: str, line: int, key: str) -> None:
    with pytest.raises(ParseError, match=f"duplicate key '{key}'") as caught:
        load_yaml(text)
    assert caught.value.line == line


def test_yaml_merge_keys_still_override() -> None:
    value, _ = load_yaml("base: &b {a: 1, c: 3}\nx:\n  <<: *b\n  a: 2\n")
    assert value["x"] == {"a": 2, "c": 3}


@pytest.mark.parametrize("number", [".nan", ".inf", "-.Inf", "1.0e+999", "99999999999999999999"])
def test_yaml_numbers_are_finite_64_bit(number: str) -> None:
    with pytest.raises(ParseError) as caught:
        load_yaml(f"name: x\nvalue: {number}\n")
    assert caught.value.line == 2


def test_yaml_and_json_nesting_is_bounded() -> None:
    with pytest.raises(ParseError, match="nested deeper than 100 levels"):
        load_yaml("x: " + "[" * 150 + "]" * 150 + "\n")
    with pytest.raises(ParseError, match="nested deeper than 100 levels") as caught:
        loads_json('{"a": 1,\n "b": ' + "[" * 200_000 + "]" * 200_000 + "}")
    assert caught.value.line == 2
    assert loads_json("[" * 100 + "]" * 100) is not None


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('{"a": 1,\n "b": 1e999}', 2, "1e999 overflows to infinity"),
        ("[1,\n 2,\n -Infinity]", 3, "-Infinity is not valid JSON"),
        ('{"s": "NaN",\n "n": NaN}', 2, "NaN is not valid JSON"),
        ('{"a": 1,\n "b": {"a": 2},\n "a": 3}', 3, "duplicate key 'a'"),
        ('{"n":\n 123456789012345678901234567890}', 2, "integers must fit in 64 bits"),
        ('["ok",\n "\\ud800"]', 2, "lone UTF-16 surrogate"),
    ],
)
def test_json_is_strict_with_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ParseError, match=words.replace("(", r"\(")) as caught:
        loads_json(text)
    assert caught.value.line == line


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('["ok", "\ud800"]', "lone UTF-16 surrogate"),  # the character itself, no escape
        ('["ok", "\\uDFFF"]', "lone UTF-16 surrogate"),  # an upper-case escape
        ('["caf\u00e9", "\\udbff"]', "lone UTF-16 surrogate"),  # beside other text
        ("[" * 101 + "]" * 101, "nested deeper than 100 levels"),
        ('{"a": "\\u0000"}', "NUL character"),
    ],
)
def test_json_text_scans_never_skip_a_problem(text: str, words: str) -> None:
    """The walk of a parsed value is skipped when scans of its text show it fine: each kind of
    problem the walk finds must still be found."""
    with pytest.raises(ParseError, match=words):
        loads_json(text)


def test_json_accepts_what_json_allows() -> None:
    assert loads_json('{"a": [1, 2.5, -0.0, 1e-999, 9223372036854775807], "b": "NaN"}') == {
        "a": [1, 2.5, -0.0, 0.0, 2**63 - 1],
        "b": "NaN",
    }


@pytest.mark.parametrize("text", ["1_0", "\u0661\u0662", "\uff12", " 5", "5 ", "+", "nan", "inf"])
def test_python_only_number_forms_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not an integer"):
        parse_int(text)
    with pytest.raises(ValueError, match="is not a number"):
        parse_finite_float(text)


def test_ascii_numbers_are_read() -> None:
    assert parse_int("-12") == -12
    assert parse_int("+3") == 3
    assert parse_finite_float("0.5") == 0.5
    assert parse_finite_float("-1.5E-3") == -0.0015
    assert parse_finite_float(".5") == 0.5
    with pytest.raises(ValueError, match="overflows to infinity"):
        parse_finite_float("1e999")
    with pytest.raises(ValueError, match="64 bits"):
        parse_int("9223372036854775808")


def test_an_integers_value_decides_whether_it_fits_not_its_leading_zeros() -> None:
    """`0000000000000000000001`, 22 digits of which 21 are zeros, is 1: it was out of range,
    as was every number written with more than 19 digits."""
    assert parse_int("0000000000000000000001") == 1
    assert parse_int("-00000009223372036854775808") == -(2**63)
    assert parse_int("+" + "0" * 5000 + "7") == 7  # past int()'s 4300 digits
    for past in ("9223372036854775808", "000" + "1" * 20, "-" + "0" * 3 + "9" * 25):
        with pytest.raises(ValueError, match="64 bits"):
            parse_int(past)


def test_strict_dumps_writes_null_for_non_finite() -> None:
    value = {"mean": math.nan, "ci": (1.0, math.inf), "n": [-math.inf, 2], "s": "NaN"}
    text = dumps_strict(value, sort_keys=True)

    def refuse(name: str) -> None:
        raise ValueError(name)

    assert json.loads(text, parse_constant=refuse) == {
        "ci": [1.0, None],
        "mean": None,
        "n": [None, 2],
        "s": "NaN",
    }


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"id": "q1"}\n', None),  # (the control: accepted)
        ('{"a": 1,\n "id": "q\\u00001"}', 2),
        ('[\n"ok",\n{"k\\u0000": 1}]', 3),
    ],
)
def test_json_refuses_a_nul_character_with_its_line(text: str, line: int | None) -> None:
    """PostgreSQL refuses NUL in any text; JSON can hold one only through its escape."""
    if line is None:
        assert loads_json(text) == {"id": "q1"}
        return
    with pytest.raises(ParseError, match="NUL character") as err:
        loads_json(text)
    assert err.value.line == line


def test_an_escaped_backslash_before_u0000_is_no_nul() -> None:
    assert loads_json('{"path": "C:\\\\u0000"}') == {"path": "C:\\u0000"}


@pytest.mark.parametrize("escape", ["\\0", "\\x00", "\\u0000"])
def test_yaml_refuses_a_nul_escape_with_its_line(escape: str) -> None:
    with pytest.raises(ParseError, match="NUL character") as err:
        load_yaml(f'a: 1\nname: "x{escape}y"\n')
    assert err.value.line == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": "b', "Unterminated string starting at column 7"),
        ('{"a": "b\x01"}', "Invalid control character at column 9"),
    ],
)
def test_a_syntax_error_names_its_column_once(text: str, message: str) -> None:
    # json's own messages for these end in "at" before its location: "starting at at column 9"
    with pytest.raises(ParseError) as caught:
        loads_json(text)
    assert caught.value.message == message


def test_json_lines_are_read_by_one_decoder_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []

    class Counted(json.JSONDecoder):
        def __init__(self, **kw: object) -> None:
            made.append(kw)
            super().__init__(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "JSONDecoder", Counted)
    lines = ['{"id": "m1", "n": 3, "x": 0.5}', '[1, {"a": null}]', '"text"']
    assert [loads_json(t) for t in lines] == [
        {"id": "m1", "n": 3, "x": 0.5},
        [1, {"a": None}],
        "text",
    ]
    assert made == []  # a dataset's 10,000 lines built 10,000 decoders and scanners


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('\ufeff{"a": 1}', "Unexpected UTF-8 BOM (decode using utf-8-sig) at column 1"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'; a key may appear once per object"),
        ('{"a": NaN}', "NaN"),
        ('{"a": 1', "Expecting ',' delimiter at column 8"),
    ],
)
def test_a_refused_line_says_what_it_said_before(text: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        loads_json(text)
    assert message in caught.value.message
    assert caught.value.line == 1
