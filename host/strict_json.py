"""Strict JSON (RFC 8259) for values that come from outside: `loads` parses text, `check` a parsed value.

Python's `json` accepts more than RFC 8259 and makes values other code cannot carry: `NaN`,
`Infinity` and `-Infinity` (and `1e400`, which overflows to infinity), strings holding a lone
surrogate (`"\\ud800"`: valid JSON text, but no UTF-8 encoding exists, so every writer downstream
fails), nesting deep enough to raise `RecursionError`, and integers whose digits cost quadratic time
(refused with `ValueError` past Python's `int` digit limit). Here each of these is a `StrictJsonError`
(a `ValueError`) whose message names what is wrong, where (`$.a[2]`) and the bound: at most
`MAX_DEPTH` nested arrays/objects, integers of at most `MAX_INT_DIGITS` digits, finite numbers,
strings (object keys too) of Unicode scalar values only. The walk is iterative: no input makes it
recurse. Standalone: it imports nothing of the host, so any layer may use it.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

MAX_DEPTH: Final = 100
"""Most arrays and objects nested in one another (the value itself at depth 1)."""

MAX_INT_DIGITS: Final = 1000
"""Most decimal digits of one integer (Python's own `int` parsing limit is 4300)."""

_LOG10_2: Final = math.log10(2)


class StrictJsonError(ValueError):
    """A text or value that is not strict JSON; the message says what, where and how to fix it."""


def _constant(name: str) -> Any:
    raise StrictJsonError(f"{name} is not a JSON number (RFC 8259 has no NaN or Infinity); send a finite number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJsonError(f"the number {text[:40]} is out of range of a double; send a finite number")
    return value


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise StrictJsonError(f"an integer has {digits} digits, more than {MAX_INT_DIGITS}; send it as a string")
    return int(text)


def loads(text: str | bytes | bytearray) -> Any:
    """Parse `text` (bytes: UTF-8) as strict JSON. Raises `StrictJsonError` naming what is wrong;
    text that is not JSON at all raises it too, with the parser's position."""
    try:
        if not isinstance(text, str):
            text = bytes(text).decode("utf-8")  # RFC 8259: UTF-8 (json.loads would guess UTF-16 and -32 too)
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except StrictJsonError:
        raise
    except RecursionError:
        raise StrictJsonError(f"the value is nested deeper than {MAX_DEPTH} arrays/objects") from None
    except UnicodeDecodeError as exc:
        raise StrictJsonError(f"the text is not UTF-8 (byte {exc.start}: {exc.reason})") from None
    except ValueError as exc:  # json.JSONDecodeError, or Python's own int digit limit
        raise StrictJsonError(f"the text is not JSON: {exc}") from None
    check(value)
    return value


PATH_KEY_CHARS: Final = 40
"""Characters of one object key shown in a path (the rest is cut with `...`)."""

PATH_PARTS: Final = 8
"""Steps of a path shown (a deeper one ends with `...`)."""


def _key(key: str) -> str:
    shown = key if len(key) <= PATH_KEY_CHARS else key[:PATH_KEY_CHARS] + "..."
    return shown.encode("utf-8", "backslashreplace").decode("utf-8")  # a message must itself be encodable


def _path(parts: tuple[str | int, ...]) -> str:
    shown = "".join(f"[{part}]" if isinstance(part, int) else f".{_key(part)}" for part in parts[:PATH_PARTS])
    return "$" + shown + ("..." if len(parts) > PATH_PARTS else "")


def _scalar_problem(value: object) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            surrogate = f"U+{ord(value[exc.start]):04X} at character {exc.start}"
            return f"the string holds a lone surrogate ({surrogate}), which has no UTF-8 form"
        return None
    if isinstance(value, int):
        estimate = value.bit_length() * _LOG10_2  # the digits are within 1 of it: no string made when far off
        if estimate > MAX_INT_DIGITS + 1 or (estimate > MAX_INT_DIGITS - 1 and len(str(abs(value))) > MAX_INT_DIGITS):
            return f"the integer has more than {MAX_INT_DIGITS} digits; send it as a string"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{value} is not a JSON number; send a finite number"
    return f"a {type(value).__name__} is not a JSON value"


def check(value: object) -> None:
    """Raise `StrictJsonError` naming the first part of `value` (parsed JSON: dicts, lists, str,
    int, float, bool, None) that strict JSON cannot carry, with its path."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict | list):
            if len(where) >= MAX_DEPTH:
                raise StrictJsonError(f"at {_path(where)}: the value is nested deeper than {MAX_DEPTH} arrays/objects")
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        kind = type(key).__name__
                        raise StrictJsonError(f"at {_path(where)}: an object key must be a string, not {kind}")
                    problem = _scalar_problem(key)
                    if problem is not None:
                        raise StrictJsonError(f"at {_path(where)}: a key: {problem}")
                    stack.append((child, (*where, key)))
            else:
                stack.extend((child, (*where, index)) for index, child in enumerate(item))
            continue
        problem = _scalar_problem(item)
        if problem is not None:
            raise StrictJsonError(f"at {_path(where)}: {problem}")
