"""The edge of every guest `agent-host build` makes: the guest's own `WitWorld`, with failures kept.

`agent-host build` compiles a generated module, `WitWorld = agentlib.entry.world(app)`, in place of
the guest's module (the dev runner does the same): the module's `WitWorld` wrapped, or, without
one, its `@agent` function as one (`agentlib.agent`). `run` behaves as written, except at the
boundary, where componentize-py would panic and lose the reason:

- an `Err` whose value is not a str (an uncaught error of a host import, or agentlib's
  `ToolingError`) leaves `run` as `Err("code: message (raised at FILE:LINE)")`, FILE:LINE being
  the guest's own line that called;
- a value that is not a str leaves as `Err("run() must return str, got TYPE (FILE:LINE)")`;
- any other exception (`SystemExit` from `sys.exit()` and `KeyboardInterrupt` too) is printed on
  stderr in Python's own format, with only the guest's frames,
  paths relative to its folder and the source lines (`keep_sources`), and leaves `run` as
  `Err("TYPE: message (at FILE:LINE)")`: the agent failed, as a JavaScript guest's uncaught error
  does (exit 1; traps stay for the host's limits). A `MemoryError` first releases what the failed
  run held. If even the report fails, the guest exits with `UNCAUGHT_EXIT` (a trap).
`Err(str)` and a returned str pass through untouched.
"""

from __future__ import annotations

import json
import linecache
import os
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import wit_world
from componentize_py_types import Err
from wit_world.imports import types

from agentlib.agent import registered
from agentlib.errors import code_name

__all__ = ("failure", "keep_sources", "world", "wrap")

UNCAUGHT_EXIT = 70
"""The guest's exit status after an uncaught exception was reported (EX_SOFTWARE)."""

_INTERNAL = ("wit_world", "componentize_py", "agentlib", "_agent_host_dev", "_agent_host_entry")
"""Modules whose frames are never "the guest's line" (bindings, this library, the dev runner)."""

_INTERNAL_FILES = (
    "wit_world",
    "componentize_py_types",
    "componentize_py_runtime",
    "agentlib",
    "_agent_host_dev",
    "_agent_host_entry",
)
"""Folders and file-name starts of frames that are not the guest's own."""

_STDLIB = "/" + os.__file__.split("/")[1] + "/"
"""Where the standard library's frames come from: the top folder of its files (inside the component
`/python/`; the stdlib's code objects name `/python/...` paths of several depths)."""

_PLACE = re.compile(r"^/(\d+|\.agent-host/src)/")
"""The folder part of a guest file's name: componentize-py numbers the folders on its path; the dev
runner reads the guest's source from /.agent-host/src."""


def world(module: ModuleType) -> type:
    """The `WitWorld` of the guest's `module`: its own class, else its `@agent` function as one,
    wrapped (`wrap`). Raises `ImportError` when it has neither."""
    guest = getattr(module, "WitWorld", None)
    if isinstance(guest, type):
        return wrap(guest)
    found = registered()
    if found is None:
        raise ImportError(
            f"module {module.__name__} has no @agent function (from agentlib import agent; @agent def run(input): ...) "
            "and no class WitWorld"
        )

    class WitWorld(wit_world.WitWorld):  # type: ignore[misc]
        def run(self, input: str) -> str:
            return found(input)

        def describe(self) -> str | None:
            schema = found.input_schema()
            return json.dumps(schema) if schema is not None else None

    WitWorld.__module__ = module.__name__
    return wrap(WitWorld)


def wrap(guest: type) -> type:
    """A subclass of the guest's `WitWorld` whose `run` keeps every failure readable."""

    class WitWorld(guest):  # type: ignore[misc, valid-type]
        def run(self, input: str) -> str:
            try:
                value = super().run(input)
            except Err as declined:
                if isinstance(declined.value, str):
                    raise
                raise Err(f"{_describe(declined.value)} (raised at {_where(declined.__traceback__)})") from None
            except MemoryError as exhausted:
                where = _release(exhausted.__traceback__)
                del exhausted
                sys.stderr.write(f"Traceback (most recent call last):\nMemoryError: raised at {where}\n")
                sys.stderr.flush()
                raise Err(f"MemoryError (at {where})") from None
            except (Exception, SystemExit, KeyboardInterrupt) as uncaught:  # sys.exit() too: the run failed
                raise failure(uncaught) from None
            if not isinstance(value, str):
                got = "None" if value is None else type(value).__name__
                raise Err(f"run() must return str, got {got} ({_where_defined(guest)})")
            return value

        def describe(self) -> str | None:
            """The JSON Schema of the input (world `described-agent`); None for a guest that says none."""
            own = getattr(super(), "describe", None)
            try:
                return own() if callable(own) else None
            except Exception:  # a schema it cannot say is no schema: the input is then free text
                return None

    WitWorld.__name__ = WitWorld.__qualname__ = "WitWorld"
    WitWorld.__module__ = guest.__module__
    return WitWorld


def keep_sources(folder: str) -> None:
    """Keep the text of every `.py` file under `folder` in `linecache`, so that tracebacks show the
    guest's source lines although the files are not in the component. Called at build time (the
    files are readable then); entries without a modification time are never dropped by linecache."""
    for path in sorted(Path(folder).rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.splitlines(keepends=True)
        linecache.cache[str(path)] = (len(text), None, lines, str(path))


def failure(exc: BaseException) -> Err[str]:
    """`Err("TYPE: message (at FILE:LINE)")` for an exception that escaped `run`, after its traceback
    is printed on stderr (the guest's frames only); if even that fails, the guest exits (`_die`)."""
    try:
        report = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        _own_frames(report)
        sys.stderr.write("Traceback (most recent call last):\n" if not report.stack else "")
        sys.stderr.write("".join(report.format()))
        sys.stderr.flush()
        message = str(exc)
        where = _where(exc.__traceback__)
        if isinstance(exc, SyntaxError) and exc.filename:  # where the source is broken, not where it was read
            where = f"{_short(str(exc.filename))}:{exc.lineno}"
            message = exc.msg
    except BaseException:
        _die(exc)
        raise
    named = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return Err(f"{named} (at {where})")


def _die(exc: BaseException) -> None:
    """Report `exc` on stderr as Python does, with the guest's frames only, and exit; if even that
    fails, raise it (componentize-py reports it then)."""
    try:
        report = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        _own_frames(report)
        sys.stderr.write("Traceback (most recent call last):\n" if not report.stack else "")
        sys.stderr.write("".join(report.format()))
        sys.stderr.flush()
    except BaseException:
        raise exc from None
    os._exit(UNCAUGHT_EXIT)


def _own_frames(report: traceback.TracebackException) -> None:
    """Keep only the guest's own frames (relative paths), in `report` and the exceptions chained to it."""
    seen: set[int] = set()
    pending = [report]
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        frames = [frame for frame in item.stack if _is_guest_file(frame.filename)]
        for frame in frames:
            frame.filename = _short(frame.filename)
        item.stack = traceback.StackSummary.from_list(frames)
        if getattr(item, "filename", None):  # a SyntaxError: where the source is broken
            item.filename = _short(str(item.filename))
        pending.extend(chained for chained in (item.__cause__, item.__context__) if chained is not None)


def _is_guest_file(filename: str) -> bool:
    if filename.startswith(("<", _STDLIB)):
        return False
    parts = filename.replace("\\", "/").split("/")
    return not any(part in _INTERNAL_FILES for part in parts) and not parts[-1].startswith(_INTERNAL_FILES)


def _describe(error: Any) -> str:
    """'code: message' for a WIT `error` record (also what a `ToolingError` carries), else the value's repr."""
    if isinstance(error, types.Error):
        return f"{code_name(error.code)}: {error.message}"
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
    """`/0/app.py` or `/.agent-host/src/app.py` as `app.py`."""
    return _PLACE.sub("", filename)
