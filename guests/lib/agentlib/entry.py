"""The edge of every guest `agent-host build` makes: the guest's own `WitWorld`, with failures kept.

`agent-host build` compiles a generated module, `WitWorld = agentlib.entry.wrap(app.WitWorld)`, in
place of the guest's module. `run` behaves as written, except where componentize-py would panic at
the boundary and lose the reason ("'Error' object is not an instance of 'str'", a Rust panic and
"wasm `unreachable`"):

- an `Err` whose value is not a str (an error of a host import that nobody caught) leaves `run` as
  `Err("CODE: MESSAGE (raised at FILE:LINE)")`, FILE:LINE being the guest's own line that called;
- a value that is not a str leaves as `Err("run() must return str, got TYPE (FILE:LINE)")`;
- a `MemoryError` first releases what the failed run held (the locals of its frames), then is
  raised again as `MemoryError("raised at FILE:LINE")`: the guest traps with a readable traceback,
  and the host reports the memory limit that was reached.

Everything else (a returned str, `Err(str)`, any other exception) passes through untouched.
"""

from __future__ import annotations

import re
import traceback
from types import TracebackType
from typing import Any

from componentize_py_types import Err

__all__ = ("wrap",)

_INTERNAL = ("wit_world", "componentize_py", "agentlib")
"""Modules whose frames are never "the guest's line"."""


def wrap(guest: type) -> type:
    """A subclass of the guest's `WitWorld` whose `run` keeps every failure readable."""

    class WitWorld(guest):  # type: ignore[misc, valid-type]
        def run(self, input: str) -> str:
            try:
                value = super().run(input)
            except Err as failure:
                if isinstance(failure.value, str):
                    raise
                raise Err(f"{_describe(failure.value)} (raised at {_where(failure.__traceback__)})") from None
            except MemoryError as exhausted:
                where = _release(exhausted.__traceback__)
                del exhausted
                raise MemoryError(f"raised at {where}") from None
            if not isinstance(value, str):
                got = "None" if value is None else type(value).__name__
                raise Err(f"run() must return str, got {got} ({_where_defined(guest)})")
            return value

    WitWorld.__name__ = WitWorld.__qualname__ = "WitWorld"
    WitWorld.__module__ = guest.__module__
    return WitWorld


def _describe(error: Any) -> str:
    """'code: message' for a WIT `error` record, else the value's repr."""
    code, message = getattr(error, "code", None), getattr(error, "message", None)
    if code is not None and isinstance(message, str):
        return f"{getattr(code, 'name', str(code)).lower().replace('_', '-')}: {message}"
    return repr(error)


def _where(tb: TracebackType | None) -> str:
    """FILE:LINE of the innermost frame of `tb` that is the guest's own code."""
    found = "unknown place"
    while tb is not None:
        frame = tb.tb_frame
        if not str(frame.f_globals.get("__name__", "")).startswith(_INTERNAL):
            found = f"{_short(frame.f_code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _where_defined(guest: type) -> str:
    code = getattr(getattr(guest, "run", None), "__code__", None)
    return f"{_short(code.co_filename)}:{code.co_firstlineno}" if code is not None else guest.__module__


def _release(tb: TracebackType | None) -> str:
    """Clear the locals of the failed run's frames (freeing what it allocated); where it failed."""
    traceback.clear_frames(tb)
    return _where(tb)


def _short(filename: str) -> str:
    """`/0/app.py` (componentize-py numbers the folders on its path) as `app.py`."""
    return re.sub(r"^/\d+/", "", filename)
