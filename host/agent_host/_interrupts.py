"""A Ctrl-C before a command handles signals itself is a quiet stop: exit 130, one line, no traceback.

`install` sets `quiet_interrupt` as `sys.excepthook` and, when this process is the `agent-host`
command itself (the console script, `python -m agent_host`), a SIGINT handler that exits at once
instead of raising `KeyboardInterrupt` inside whatever is being imported (a library that catches
it, or meets it in a callback, prints its own traceback: pydantic's schema build did). The package
root calls it first thing, so the window before it is the interpreter's own start-up; `cli.signals`
replaces the handler while a command runs. Imports nothing of the package, nor `typing`.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType

INTERRUPTED = 130
"""`ExitCode.INTERRUPTED`, written here: importing it (it loads `typing`) would come before the hook."""

_previous_hook = sys.excepthook


def quiet_interrupt(kind: type[BaseException], value: BaseException, traceback: TracebackType | None) -> None:
    """`sys.excepthook` of the command line: an uncaught `KeyboardInterrupt` exits 130 quietly."""
    if not issubclass(kind, KeyboardInterrupt):
        _previous_hook(kind, value, traceback)
        return
    try:
        sys.stderr.write("agent-host: cancelled by user\n")
        sys.stderr.flush()
        if "--json" in sys.argv[1:]:  # the document `--json` promises (see `render.error_document`)
            sys.stdout.write('{"error": {"code": "interrupted", "message": "cancelled by user", "data": null}}\n')
            sys.stdout.flush()
    except (OSError, ValueError):  # a closed stream: nothing more to say
        pass
    remove = getattr(sys.modules.get("agent_host._support.scratch"), "remove", None)
    if callable(remove):  # a module still being imported has none yet
        try:
            remove()
        except Exception:
            pass
    os._exit(INTERRUPTED)


def _interrupted(signum: int, frame: object) -> None:
    quiet_interrupt(KeyboardInterrupt, KeyboardInterrupt(), None)


def is_the_command() -> bool:
    """Whether this process is the `agent-host` command (not a program importing the package)."""
    first = sys.argv[0] if sys.argv else ""
    return os.path.basename(first) == "agent-host" or first.endswith(os.path.join("agent_host", "__main__.py"))


def install() -> None:
    """Set the hook, and the SIGINT handler when this is the command and SIGINT is Python's default
    (see the module docstring). Idempotent."""
    sys.excepthook = quiet_interrupt
    if not is_the_command():
        return
    import signal

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        try:
            signal.signal(signal.SIGINT, _interrupted)
        except ValueError:  # imported on a thread other than the main one: signals are not ours to set
            pass
