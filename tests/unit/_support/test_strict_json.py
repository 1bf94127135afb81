"""Strict JSON: what `strict_json.parse` accepts and refuses, and `dumps` under the same rules.

A lone surrogate, nesting past Python's recursion or the SDK's serializer, integers past Python's digit
limit and NaN/Infinity are refused at the door, each naming the problem and where; never a
RecursionError or a bare ValueError.
"""

from __future__ import annotations

import pytest

from agent_host._support.strict_json import (
    MAX_DEPTH,
    MAX_INTEGER_DIGITS,
    NOT_A_NUMBER,
    JsonTextError,
    check,
    dumps,
    loads,
    parse,
)


def test_ordinary_json_parses_as_the_json_module_does() -> None:
    text = '{"a": [1, -2.5, "\\u00e9t\\u00e9", "\\ud83d\\ude00", true, null], "b": {"c": ""}}'
    assert parse(text) == {"a": [1, -2.5, "été", "😀", True, None], "b": {"c": ""}}
    assert parse("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    assert parse("9" * MAX_INTEGER_DIGITS) == int("9" * MAX_INTEGER_DIGITS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{a}", "not JSON (Expecting property name enclosed in double quotes) at line 1, column 2"),
        ('{"a": "\\ud800"}', "a lone UTF-16 surrogate (\\ud800) that no UTF-8 text can hold at $.a, character 0"),
        ('{"\\udc00x": 1}', "a lone UTF-16 surrogate (\\udc00) that no UTF-8 text can hold at $ (a key), character 0"),
        (
            '["ok", {"b c": ["x\\ude00"]}]',
            "surrogate (\\ude00) that no UTF-8 text can hold at $[1]['b c'][0], character 1",
        ),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} levels deep at $[0][0]"),
        ("[" * 200_000 + "]" * 200_000, f"nested more than {MAX_DEPTH} levels deep at the outermost value"),
        ("-" + "1" * (MAX_INTEGER_DIGITS + 1), f"an integer of {MAX_INTEGER_DIGITS + 1} digits"),
        ('{"n": NaN}', "NaN is not a JSON number at $.n"),
        ("[1, -Infinity]", NOT_A_NUMBER["-Infinity"] + " at $[1]"),
        ("[1e999]", NOT_A_NUMBER["Infinity"] + " at $[0]"),
    ],
)
def test_json_outside_the_rules_is_refused_naming_the_problem_and_where(text: str, message: str) -> None:
    with pytest.raises(JsonTextError) as caught:
        parse(text)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_path_too_long_to_read_is_cut() -> None:
    with pytest.raises(JsonTextError) as caught:
        parse("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert caught.value.where.endswith("...") and len(caught.value.where) <= 80


def test_dumps_writes_what_parse_would_read_back_and_refuses_the_rest() -> None:
    assert dumps({"a": ["été", 1.5]}) == '{"a": ["été", 1.5]}'
    for value, message in [
        ({"x": float("nan")}, "NaN is not a JSON number at $.x"),
        ([float("-inf")], NOT_A_NUMBER["-Infinity"] + " at $[0]"),
        ({"t": "a\ud800"}, "a lone UTF-16 surrogate (\\ud800) that no UTF-8 text can hold at $.t"),
        ({"s": {1, 2}}, "Object of type set is not JSON serializable"),
    ]:
        with pytest.raises(JsonTextError) as caught:
            dumps(value)
        assert message in str(caught.value)
    circular: list[object] = []
    circular.append(circular)
    with pytest.raises(JsonTextError, match="nested more than"):
        dumps(circular)


# `loads` (bytes, for serve's bodies) and `check` (values parsed elsewhere, for serve's MCP arguments).
# A body nested very deep is refused, not a RecursionError; a lone surrogate is refused before it can
# fail every writer downstream; `NaN`/`Infinity` are refused rather than reaching tools as `null`.


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b'{"a": NaN}', "NaN is not a JSON number at $.a"),
        (b'{"a": Infinity}', "Infinity is not a JSON number"),
        (b"[-Infinity]", "-Infinity is not a JSON number"),
        (b"1e400", "too large for a float, such as 1e999"),
        (b'{"a": "\\ud800"}', "lone UTF-16 surrogate (\\ud800) that no UTF-8 text can hold at $.a"),
        (b'{"\\ud800": 1}', "at $ (a key)"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} levels deep"),
        (b"[" * 100_000 + b"]" * 100_000, f"nested more than {MAX_DEPTH} levels deep"),
        (b"-" + b"9" * (MAX_INTEGER_DIGITS + 1), f"more than {MAX_INTEGER_DIGITS}"),
        (b'"\xff"', "not UTF-8 text"),
        (b"\xef\xbb\xbf{}", "not JSON"),
        (b"{", "not JSON"),
    ],
)
def test_bytes_that_are_not_strict_json_are_refused_naming_what_is_wrong(data: bytes, named: str) -> None:
    with pytest.raises(JsonTextError) as caught:
        loads(data)
    assert named in str(caught.value)
    str(caught.value).encode("utf-8")  # the message itself can be written anywhere


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({"a": float("nan")}, "NaN is not a JSON number at $.a"),
        ([float("inf")], NOT_A_NUMBER["Infinity"] + " at $[0]"),
        ({"a": 10**2000}, f"an integer of more than {MAX_INTEGER_DIGITS} digits at $.a"),
        ({"k": "\udfff"}, "lone UTF-16 surrogate"),
        ({1: "x"}, "an object key that is a int, not a string"),
        ({"a": {1, 2}}, "a set, which is not a JSON value at $.a"),
    ],
)
def test_a_parsed_value_is_checked_the_same_way(value: object, named: str) -> None:
    with pytest.raises(JsonTextError) as caught:
        check(value)
    assert named in str(caught.value)


def test_a_value_nested_deeper_than_the_interpreter_allows_is_checked_without_recursion() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(JsonTextError, match=f"nested more than {MAX_DEPTH} levels deep"):
        check(deep)
    check({"ok": [1, 2.5, "é", None, True, 10**999]})
