"""The text of one audit line, bounded whatever its fields hold.

`encode(entry)` makes one line: each string field longer than its bound (`MAX_FIELD_CHARS`, the
arguments `MAX_ARGUMENTS_CHARS`) is cut before anything else is done with it (sliced, never escaped
whole), ends with `…[cut: N characters]`, and `KEY_chars` gives its full length. Escaping writes at
most 6 bytes per character, so a line is under `MAX_LINE_BYTES` by construction; one over it all the
same (a line forwarded from a Ray worker: `forwarded`) is replaced by an `audit-line-replaced` line
holding its cut head. Pure functions, no state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

MAX_FIELD_CHARS: Final = 8192
"""Characters of one string field of an audit line (agent, tooling, operation, target, outcome,
reason ...) written whole; longer ones are cut. The longest legitimate target, a resource URI
(`admission.MAX_URI_CHARS`), fits."""

MAX_ARGUMENTS_CHARS: Final = 32 * 1024
"""Characters of a call's arguments (JSON text, with `[host] audit_arguments = true`) written whole;
longer ones are cut (`argument_bytes` and `arguments_chars` give their size)."""

MAX_LINE_BYTES: Final = 512 * 1024
"""Bytes of one audit line, its newline included, whatever its fields hold (every field cut, each
character escaped to at most 6 bytes: under 440 KiB); a line over it is replaced, never written."""

ESCAPED_BYTES: Final = 6
"""The most bytes one character of a field takes in a line (`\\u0001`, a lone surrogate `\\udc80`)."""

CHARS_SUFFIX: Final = "_chars"
"""Appended to a cut field's key to name the field giving its full length in characters."""

FIELD_LIMITS: Final[Mapping[str, int]] = {"arguments": MAX_ARGUMENTS_CHARS}
"""The bound of each string field that is not `MAX_FIELD_CHARS`."""

REPLACED: Final = "audit-line-replaced"
"""The `operation` of a line written in place of one that could not be written (see `replaced`)."""


def now() -> str:
    """The `time` of a line written now: UTC, ISO 8601, milliseconds (`2025-01-31T12:00:00.000Z`)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def cut(value: str, limit: int) -> str:
    """`value` whole when it has at most `limit` characters, else its first `limit` followed by
    `…[cut: N characters]` (N: its full length). Slices only: costs the same for any length."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}…[cut: {len(value)} characters]"


def utf8_size(text: str) -> int:
    """Bytes of `text` in UTF-8 (a lone surrogate counted as 3); without encoding an ASCII string."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def bounded(entry: Mapping[str, object]) -> dict[str, object]:
    """`entry` with every string field cut to its bound (`FIELD_LIMITS`, else `MAX_FIELD_CHARS`), a
    `KEY_chars` field after each one cut."""
    fields: dict[str, object] = {}
    for key, value in entry.items():
        if isinstance(value, str):
            limit = FIELD_LIMITS.get(key, MAX_FIELD_CHARS)
            fields[key] = cut(value, limit)
            if len(value) > limit:
                fields[key + CHARS_SUFFIX] = len(value)
        else:
            fields[key] = value
    return fields


LINE_BREAKS: Final = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
"""Characters JSON leaves as they are in a string but that a reader splitting lines as Python does
(`str.splitlines`) takes for line ends: written escaped, so that a line stays one line for every reader."""

_LINE_BREAK_TABLE: Final = str.maketrans(LINE_BREAKS)


def _text(fields: Mapping[str, object]) -> bytes:
    line = json.dumps(fields, ensure_ascii=False).translate(_LINE_BREAK_TABLE) + "\n"
    return line.encode("utf-8", errors="backslashreplace")


def encode(entry: Mapping[str, object]) -> bytes:
    """One audit line of `entry` (a JSON object and a newline, UTF-8): its fields `bounded`, at most
    `MAX_LINE_BYTES` (else `replaced`)."""
    data = _text(bounded(entry))
    return data if len(data) <= MAX_LINE_BYTES else replaced(data.decode("utf-8"), "limit-exceeded")


def replaced(line: str, outcome: str) -> bytes:
    """The line written in place of `line`: operation `REPLACED`, `outcome` why (`limit-exceeded`:
    over `MAX_LINE_BYTES`; `protocol`: not one line), and `line`, its head (`MAX_FIELD_CHARS`)."""
    entry = {
        "time": now(),
        "agent": None,
        "tooling": None,
        "operation": REPLACED,
        "target": None,
        "argument_bytes": 0,
        "outcome": outcome,
        "duration_ms": 0,
        "line": line,
    }
    return _text(bounded(entry))


def forwarded(line: str) -> bytes:
    """`line`, made elsewhere (a Ray worker), as it is written here: whole when it is one line ending
    with a newline, within `MAX_LINE_BYTES`; else `replaced`. Its length is looked at before anything
    else, so a huge line costs nothing more than its slice."""
    if len(line) > MAX_LINE_BYTES:  # a character is at least one byte
        return replaced(line, "limit-exceeded")
    data = line.encode("utf-8", errors="backslashreplace")
    if len(data) > MAX_LINE_BYTES:
        return replaced(line, "limit-exceeded")
    if not line.endswith("\n") or "\n" in line[:-1]:
        return replaced(line, "protocol")
    return data
