"""Text a guest or a server wrote, made safe to print on the operator's terminal and log.

`printable(text)` escapes every character that could forge a line or drive a terminal: the C0
controls but tab (so a newline cannot start a line that looks like the host's), DEL, the C1
controls (ESC-less CSI), and the Unicode line separators and bidirectional overrides; each becomes
its `\\xNN`/`\\uNNNN` escape. It cuts the text to `limit` characters first, with a marker saying how
many were cut. Standalone: it imports nothing of the host.
"""

from __future__ import annotations

import re
from typing import Final

DEFAULT_LIMIT: Final = 16 * 1024
"""Characters of one line kept by default (as the host log cuts a guest's log message)."""

_UNSAFE: Final = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def cut(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """`text` cut to `limit` characters with a marker saying how many were cut (nothing escaped:
    for a client of `serve`, which gets it as JSON)."""
    if len(text) > limit:
        return text[:limit] + f"... [{len(text) - limit} characters cut]"
    return text


def printable(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """`text` cut to `limit` characters (with a marker) and with its unsafe characters escaped."""
    if len(text) > limit:
        return _UNSAFE.sub(_escape, text[:limit]) + f"... [{len(text) - limit} characters cut]"
    return _UNSAFE.sub(_escape, text)
