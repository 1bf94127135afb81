"""Strict JSON: what `strict_json.parse` accepts and refuses, and `dumps` under the same rules.

Provenance: issue 20, point 3 (a lone surrogate, nesting past Python's recursion or the SDK's
serializer, integers past Python's digit limit and NaN/Infinity must be refused at the door, each
naming the problem and where; never a RecursionError or a bare ValueError).
"""

from __future__ import annotations

import pytest

from host.strict_json import MAX_DEPTH, MAX_INTEGER_DIGITS, JsonTextError, dumps, parse


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
        ("[1, -Infinity]", "-Infinity is not a JSON number at $[1]"),
        ("[1e999]", "the number 1e999 is too large for a float at $[0]"),
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
        ([float("-inf")], "-Infinity is not a JSON number at $[0]"),
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
