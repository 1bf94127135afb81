"""Checking the shape of what a server answered: the SDKs build answers without validating them.

A field of the wrong type (a server that does not speak the protocol as it claims) is `protocol`,
naming the provider and the field, never a Python error reaching the guest as `internal`.
"""

from __future__ import annotations

from typing import TypeVar

from agent_host.errors import ErrorCode, ToolingError

_T = TypeVar("_T")


def expect(value: object, kind: type[_T], where: str, what: str) -> _T:
    """`value` when it is a `kind` (a bool is no int); `protocol` naming `what` otherwise."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise ToolingError(ErrorCode.PROTOCOL, f"{where} answered with {what} of the wrong type")
    return value


def text(value: object, where: str, what: str) -> str | None:
    """`value` when it is text or absent (None); `protocol` naming `what` otherwise."""
    return None if value is None else expect(value, str, where, what)


def count(value: object) -> int | None:
    """`value` when it is a whole number >= 0 (a token count); None otherwise."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
