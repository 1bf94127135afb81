"""`host.strict_json`: RFC 8259 JSON only, every refusal naming what and where.

Provenance: issue 20, point 8 (a body nested very deep was a RecursionError, a lone surrogate a
failure of every writer downstream, `NaN`/`Infinity` reached tools as `null`) and point 3 (the same
values in a guest's arguments).
"""

from __future__ import annotations

import json

import pytest

from host import strict_json
from host.strict_json import MAX_DEPTH, MAX_INT_DIGITS, StrictJsonError


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (b'{"a": NaN}', "NaN is not a JSON number"),
        (b'{"a": Infinity}', "Infinity is not a JSON number"),
        (b"[-Infinity]", "-Infinity is not a JSON number"),
        (b"1e400", "1e400 is out of range of a double"),
        (b'{"a": "\\ud800"}', "at $.a: the string holds a lone surrogate (U+D800 at character 0)"),
        (b'{"b": ["x", "\\udc00"]}', "at $.b[1]: the string holds a lone surrogate"),
        (b'{"\\ud800": 1}', "at $: a key: the string holds a lone surrogate"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH}"),
        (b"[" * 100_000 + b"]" * 100_000, f"nested deeper than {MAX_DEPTH}"),
        (b"-" + b"9" * (MAX_INT_DIGITS + 1), f"{MAX_INT_DIGITS + 1} digits, more than {MAX_INT_DIGITS}"),
        (b"9" * 10_000, "more than"),
        (b'"\xff"', "not UTF-8"),
        (b"\xef\xbb\xbf{}", "not JSON"),
        (b"{", "not JSON"),
    ],
)
def test_text_that_is_not_strict_json_is_refused_naming_what_is_wrong(text: bytes, named: str) -> None:
    with pytest.raises(StrictJsonError) as caught:
        strict_json.loads(text)
    assert named in str(caught.value)
    str(caught.value).encode("utf-8")  # the message itself can be written anywhere


def test_strict_json_is_parsed_as_json_is() -> None:
    text = '{"a": [1, -2.5e3, "\\u00e9\\ud83d\\ude00", true, null], "b": {"c": ' + "9" * MAX_INT_DIGITS + "}}"
    assert strict_json.loads(text) == json.loads(text)
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert strict_json.loads(nested.encode()) == json.loads(nested)


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({"a": float("nan")}, "at $.a: nan is not a JSON number"),
        ([float("inf")], "at $[0]: inf is not a JSON number"),
        ({"a": 10**2000}, "at $.a: the integer has more than"),
        ({"k": "\udfff"}, "lone surrogate"),
        ({1: "x"}, "an object key must be a string, not int"),
        ({"a": {1, 2}}, "a set is not a JSON value"),
    ],
)
def test_a_parsed_value_is_checked_the_same_way(value: object, named: str) -> None:
    with pytest.raises(StrictJsonError) as caught:
        strict_json.check(value)
    assert named in str(caught.value)


def test_a_value_nested_deeper_than_the_interpreter_allows_is_checked_without_recursion() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(StrictJsonError, match=f"nested deeper than {MAX_DEPTH}"):
        strict_json.check(deep)
