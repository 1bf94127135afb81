"""The one exception agentlib raises: `ToolingError`, a host import's failure with its WIT code.

Every WIT function that can fail raises `componentize_py_types.Err` whose `value` is a
`types.Error`. agentlib's functions raise `ToolingError` instead: a subclass of `Err` with the same
`value` (so `except Err` and `agentlib.entry` treat it as before), plus `code` in kebab case exactly
as the WIT names it (`not-found`, `limit-exceeded`), `message`, `data`, and `str()` =
"code: message". `raising` (a decorator) is the one place that turns an `Err` into it; an `Err` whose value is
not a `types.Error` (a guest's own `Err("text")`) passes through untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from componentize_py_types import Err
from wit_world.imports import types

__all__ = ("ToolingError", "code_name", "raising")


def code_name(code: types.ErrorCode) -> str:
    """The WIT name of an `error-code` (`types.ErrorCode.NOT_FOUND` -> "not-found").

    componentize-py names each enum case by upper-casing its WIT name with `-` as `_`; this is the
    exact inverse, for every case (WIT names are lower-case kebab).
    """
    return code.name.lower().replace("_", "-")


class ToolingError(Err[types.Error]):
    """A failure of a host import: `code` (kebab case, as in the WIT), `message` (written for a
    person: what to change), `data` (JSON text or None; for `tool-failed`, the whole MCP result).

    `str(error)` is "code: message". `error.value` is the WIT record (`types.Error`) and
    `error.error_code` its enum value, to compare with `types.ErrorCode.*`. Build one from an
    `error` envelope's payload with `ToolingError(error)`.
    """

    def __init__(self, error: types.Error) -> None:
        super().__init__(error)

    @property
    def code(self) -> str:
        return code_name(self.value.code)

    @property
    def error_code(self) -> types.ErrorCode:
        return self.value.code

    @property
    def message(self) -> str:
        return self.value.message

    @property
    def data(self) -> str | None:
        return self.value.data

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


P = ParamSpec("P")
R = TypeVar("R")


def raising(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, raising `ToolingError` where it raised an `Err` carrying a `types.Error`.

    A decorator, not a context manager: contextlib re-raises by assigning `__traceback__`, which
    the frozen `Err` refuses, and its frames would stand between the guest's line and the error.
    """

    @functools.wraps(function)
    def translated(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except ToolingError:
            raise
        except Err as failure:
            if isinstance(failure.value, types.Error):
                raise ToolingError(failure.value) from None
            raise

    return translated
