"""The policy's globs over names and resource URIs, matched only against texts without dot segments.

An allow-list glob matches text (`fnmatch`, case sensitive), while a server resolves a URI as a
path: `demo://readme/../note` matched `demo://read*` and named `demo://note`. So a text with a dot
segment (`.` or `..` between `/` or `\\`, RFC 3986 section 5.2.4), also percent-encoded however many
times (`%2e%2E`, `%252e`, `..%2f`), or with a percent-encoding that is not UTF-8 (an overlong `.`
such as `%c0%ae`), matches no glob; refusals say why (`hazard`). Every glob of the policy over tool
names, tooling names and resource URIs goes through `matches`.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Final
from urllib.parse import unquote

MAX_DECODINGS: Final = 8
"""Rounds of percent-decoding a text gets before its segments are looked at; a text still changing
after that many matches no glob."""

_SEPARATORS: Final = re.compile(r"[/\\]")


def hazard(text: str) -> str | None:
    """What makes `text` match no glob (`a dot segment '..'`, ...), or None when nothing does."""
    decoded = text
    for _ in range(MAX_DECODINGS):
        found = next((part for part in _SEPARATORS.split(decoded) if part in (".", "..")), None)
        if found is not None:
            return f"a dot segment {found!r}" + ("" if decoded == text else " once percent-decoded")
        if "%" not in decoded:
            return None
        try:
            once = unquote(decoded, errors="strict")
        except UnicodeDecodeError:
            return "a percent-encoding that is not UTF-8"
        if once == decoded:
            return None
        decoded = once
    return f"percent-encodings nested more than {MAX_DECODINGS} deep"


def matches(text: str, glob: str) -> bool:
    """Whether `glob` matches `text`: never when `text` has a `hazard` (see the module docstring)."""
    return fnmatch.fnmatchcase(text, glob) and hazard(text) is None
