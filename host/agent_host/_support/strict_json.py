"""Strict JSON: the one parser of JSON text a guest (or a client) hands the host, and its inverse.

`parse(text)` accepts the JSON every peer of the host can take back: RFC 8259 JSON nested at most
`MAX_DEPTH` deep, integers of at most `MAX_INTEGER_DIGITS` digits, no `NaN`/`Infinity` (nor a
number too large for a float), no lone UTF-16 surrogate (`"\\ud800"`: no UTF-8 text can hold it).
Anything else raises `JsonTextError` (a `ValueError`, never a `RecursionError`) naming the problem
and where: line and column for text that is not JSON, the path (`$.a[0]`) for a value outside the
rules. `loads` takes bytes too (UTF-8 only), `check` a value parsed elsewhere, and `dumps` writes a
value under the same rules. The parsed value is walked (iteratively: no input makes it recurse) only
when the text could break a rule (many brackets, a surrogate escape, a refused number).

This module imports nothing from the rest of the package.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Final

MAX_DEPTH: Final = 128
"""Arrays and objects nested in one another at most (the MCP SDK's serializer stops at ~250 levels,
Python's recursion at ~1000: deeper values would fail in the host, not at the guest's door)."""

MAX_INTEGER_DIGITS: Final = 1000
"""Digits of one integer at most (Python refuses to convert integers past 4300 digits)."""

MAX_WHERE: Final = 80
"""Characters of a path named in an error (a path 128 levels deep is cut)."""

_LONG_NUMBER: Final = re.compile(rf"(?<![0-9])[0-9]{{{MAX_INTEGER_DIGITS + 1}}}")
"""A run of digits longer than an integer may be (in a string or a number: the hook decides). Tried
only where a run starts (the look-behind fails at once inside one), so the search is linear."""

_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
"""An escape of a UTF-16 surrogate (maybe half of a valid pair: the walk decides)."""


NOT_A_NUMBER: Final[Mapping[str, str]] = {
    "NaN": "NaN is not a JSON number",
    "Infinity": "Infinity is not a JSON number (nor is a number too large for a float, such as 1e999)",
    "-Infinity": "-Infinity is not a JSON number (nor is a number too large for a float, such as -1e999)",
}
"""The problem of each number JSON has no form for, by its name: one table whether the text said
`Infinity` or `1e999` (a peer that parsed the text first, as the MCP SDK does, sees infinity for both)."""


def _not_a_number(value: float) -> str:
    return NOT_A_NUMBER["NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"]


class JsonTextError(ValueError):
    """JSON text (or a value) outside the strict rules: `problem` says what, `where` where."""

    def __init__(self, problem: str, where: str) -> None:
        if len(where) > MAX_WHERE:
            where = where[: MAX_WHERE - 3] + "..."
        super().__init__(f"{problem} at {where}")
        self.problem = problem
        self.where = where


class _Rejected:
    """Stands in the parsed value for a number the rules refuse; the walk reports it with its path."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def parse(text: str) -> object:
    """The value of JSON `text` under the strict rules (see the module docstring).

    Raises `JsonTextError` naming the problem and where it is.
    """
    rejected: list[_Rejected] = []

    def constant(name: str) -> _Rejected:
        found = _Rejected(NOT_A_NUMBER.get(name, f"{name} is not a JSON number"))
        rejected.append(found)
        return found

    def integer(digits: str) -> int | _Rejected:
        count = len(digits) - digits.startswith("-")
        if count > MAX_INTEGER_DIGITS:
            found = _Rejected(f"an integer of {count} digits (more than {MAX_INTEGER_DIGITS})")
            rejected.append(found)
            return found
        return int(digits)

    def number(literal: str) -> float | _Rejected:
        value = float(literal)
        if not math.isfinite(value):
            found = _Rejected(_not_a_number(value))
            rejected.append(found)
            return found
        return value

    hooks: dict[str, Callable[[str], object]] = {"parse_constant": constant, "parse_float": number}
    if _LONG_NUMBER.search(text):  # else every integer is short: Python's own parsing is faster
        hooks["parse_int"] = integer
    try:
        value = json.loads(text, **hooks)  # type: ignore[arg-type]
    except json.JSONDecodeError as exc:
        raise JsonTextError(f"not JSON ({exc.msg})", f"line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise JsonTextError(f"nested more than {MAX_DEPTH} levels deep", "the outermost value") from None
    if rejected or text.count("[") + text.count("{") > MAX_DEPTH or _SURROGATE_ESCAPE.search(text):
        _walk(value)
    return value


def loads(data: str | bytes | bytearray) -> object:
    """`parse`, for text given as bytes too (RFC 8259: UTF-8; `json.loads` would guess UTF-16 and
    UTF-32). Raises `JsonTextError`."""
    if isinstance(data, str):
        return parse(data)
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonTextError(f"not UTF-8 text ({exc.reason})", f"byte {exc.start}") from None
    return parse(text)


def check(value: object) -> None:
    """Raise `JsonTextError` for the first part of `value` (parsed JSON from elsewhere: dicts with
    string keys, lists, str, int, float, bool, None) outside the rules, naming its path."""
    _walk(value)


def dumps(value: object) -> str:
    """`value` as JSON text under the strict rules (non-ASCII kept as is); `JsonTextError` otherwise."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise JsonTextError(f"nested more than {MAX_DEPTH} levels deep", "the outermost value") from None
    except ValueError as exc:  # NaN or Infinity, or a circular reference (the walk names where)
        _walk(value)
        raise JsonTextError(str(exc), "the value") from None
    except TypeError as exc:  # a Python value JSON has no form for
        raise JsonTextError(str(exc), "the value") from None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            _walk(value)  # names the path of the lone surrogate
            raise JsonTextError("text that no UTF-8 text can hold", "the value") from None
    if text.count("[") + text.count("{") > MAX_DEPTH:
        _walk(value)
    return text


_Place = tuple["_Place | None", "str | int"] | None
"""Where a value sits: None for the whole value, else (the place of its container, its key or
index). Each value walked holds one such pair: its path is made into text only when reported."""


def _path(place: _Place) -> str:
    """The path (`$.a[0]['b c']`) of `place`, its text cut to at most `MAX_WHERE` characters."""
    parts: list[str | int] = []
    while place is not None:
        place, key = place
        parts.append(key)
    parts.reverse()
    text = "$"
    for key in parts:
        text += f"[{key}]" if isinstance(key, int) else f".{key}" if _plain(key) else f"[{key[:40]!r}]"
        if len(text) > MAX_WHERE:
            break  # JsonTextError cuts it: the rest is never made
    return text


_Frame = tuple[Iterator[tuple[str | int, object]], _Place, int]
"""A container being walked: its remaining (key or index, value) entries, its place, its depth."""

_BIG: Final = 10**300
"""Integers within ±`_BIG` have fewer than `MAX_INTEGER_DIGITS` digits: no need to count them."""


def _walk(value: object) -> None:
    """Raise `JsonTextError` for the first part of `value` outside the rules, in document order
    (iterative: any depth). Memory is bounded by the depth, not the size, of `value`: the walk holds
    one iterator per container it is inside, and makes the text of one path only, the one it reports.
    Time is linear in the size: a plain value costs a type test (`_check_item` for the others)."""
    _check_item(value, None, 0)
    frames: list[_Frame] = []
    _enter(frames, value, None, 0)
    while frames:
        entries, place, depth = frames[-1]
        for key, item in entries:
            kind = type(item)
            if kind is str:
                if not item.isascii():  # type: ignore[attr-defined]
                    _check_text(item, (place, key))
            elif kind is int:
                if not -_BIG < item < _BIG:  # type: ignore[operator]
                    _check_item(item, (place, key), depth + 1)
            elif kind is dict or kind is list:
                inner: _Place = (place, key)
                _check_item(item, inner, depth + 1)
                _enter(frames, item, inner, depth + 1)
                break  # walk it now (document order); this container's iterator resumes after
            elif item is not None and kind is not bool and kind is not float:
                _check_item(item, (place, key), depth + 1)
            elif kind is float and not math.isfinite(item):  # type: ignore[arg-type]
                _check_item(item, (place, key), depth + 1)
        else:
            frames.pop()


def _enter(frames: list[_Frame], item: object, place: _Place, depth: int) -> None:
    """Push the entries of `item` when it is a container (its keys checked first)."""
    if isinstance(item, dict):
        for key in item:
            if not isinstance(key, str):
                raise JsonTextError(f"an object key that is a {type(key).__name__}, not a string", _path(place))
            if not key.isascii():
                _check_text(key, place, " (a key)")
        frames.append((iter(item.items()), place, depth))
    elif isinstance(item, list):
        frames.append((enumerate(item), place, depth))


def _check_item(item: object, place: _Place, depth: int) -> None:
    """Raise `JsonTextError` when `item` itself (not what it holds) is outside the rules."""
    if isinstance(item, dict | list):
        if depth >= MAX_DEPTH:
            raise JsonTextError(f"nested more than {MAX_DEPTH} levels deep", _path(place))
    elif isinstance(item, str):
        _check_text(item, place)
    elif isinstance(item, _Rejected):
        raise JsonTextError(item.problem, _path(place))
    elif isinstance(item, float):
        if not math.isfinite(item):
            raise JsonTextError(_not_a_number(item), _path(place))
    elif isinstance(item, bool) or item is None:
        return
    elif isinstance(item, int):
        if _too_many_digits(item):
            raise JsonTextError(f"an integer of more than {MAX_INTEGER_DIGITS} digits", _path(place))
    else:
        raise JsonTextError(f"a {type(item).__name__}, which is not a JSON value", _path(place))


_LOG10_2: Final = math.log10(2)


def _too_many_digits(value: int) -> bool:
    """Whether `value` has more than `MAX_INTEGER_DIGITS` digits (without making its text when far off)."""
    estimate = value.bit_length() * _LOG10_2  # the digit count is within 1 of it
    if estimate < MAX_INTEGER_DIGITS - 1:
        return False
    if estimate > MAX_INTEGER_DIGITS + 1:
        return True
    return len(str(abs(value))) > MAX_INTEGER_DIGITS


def _plain(key: object) -> bool:
    return isinstance(key, str) and key.isidentifier() and len(key) <= 40


def _check_text(text: object, place: _Place, what: str = "") -> None:
    if isinstance(text, str) and not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            code = ord(text[exc.start])
            raise JsonTextError(
                f"a lone UTF-16 surrogate (\\u{code:04x}) that no UTF-8 text can hold",
                f"{_path(place)}{what}, character {exc.start}",
            ) from None
