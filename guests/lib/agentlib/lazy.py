"""`Taken`: a host resource (a tooling, a provider) named now and taken at its first use.

A guest module's top level runs while the guest is built, when no host import can be called; so
`tooling("demo")` and `provider("llm")` only keep the name, and the WIT `get` runs when the handle
is first needed, inside `run`. The handle is kept for the run (taken again if it was dropped);
`close()`, or leaving a `with` block, drops it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar

__all__ = ("Taken",)


class _Handle(Protocol):
    def kind(self) -> str: ...


_H = TypeVar("_H", bound=_Handle)


class Taken(Generic[_H]):
    """A handle taken with `get(name)` at its first use (see the module docstring)."""

    def __init__(self, name: str, get: Callable[[str], _H]) -> None:
        self._name = name
        self._get = get
        self._handle: _H | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def handle(self) -> _H:
        """The WIT handle, taken now if not yet. Raises `ToolingError` (`not-found`, `denied`, ...)."""
        if self._handle is None or getattr(self._handle, "handle", 0) is None:
            self._handle = self._get(self._name)
        return self._handle

    @property
    def kind(self) -> str:
        """What it is, as the host says (`kind()`: "mcp", "python", "mock"; "openai", "anthropic", "mock")."""
        return self.handle.kind()

    def close(self) -> None:
        """Drop the handle (what was opened through it ends); the next use takes a new one."""
        handle: Any
        handle, self._handle = self._handle, None
        if handle is not None and getattr(handle, "handle", 0) is not None:
            handle.__exit__(None, None, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
