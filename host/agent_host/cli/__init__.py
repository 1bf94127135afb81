"""The `agent-host` command line: one module per command (click), everything shown in `render`.

stdout carries only results (a guest's answer, a tool's result, a table, a built component's
path, the WIT), so they can be piped; logs, progress, guest output and errors go to stderr.
Errors are one line (`agent-host: error: ...` plus a hint), the traceback only under `--debug`.
Exit codes come from `errors.ExitCode` (mapped in `root`). Commands call the application API
(`agent_host.app.host`, `agent_host.app.runs`, `agent_host.app.inventory`, `agent_host.cache`),
imported inside the commands that need it: `--help`, `--version`, `new`, `config` (without
`--connect`) and `wit` load neither wasmtime nor the MCP SDK. From this package's first line on, a
Ctrl-C that no command handles yet (while the rest is imported, ~0.1 s) is a quiet stop:
`quiet_interrupt`, the `sys.excepthook` set here.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType

INTERRUPTED = 130
"""`status_codes.INTERRUPTED`, written here: importing it (it loads `typing`) would come before the hook."""


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
    made = sys.modules.get("agent_host._support.scratch")
    if made is not None:
        made.remove()
    os._exit(INTERRUPTED)


def _interrupted(signum: int, frame: object) -> None:
    """SIGINT before a command installs its own handling (`cli.signals`): a quiet exit at once, never
    a `KeyboardInterrupt` raised inside whatever is being imported (a library that catches it, or
    meets it in a callback, prints its own traceback: pydantic's schema build did)."""
    quiet_interrupt(KeyboardInterrupt, KeyboardInterrupt(), None)


_previous_hook = sys.excepthook
sys.excepthook = quiet_interrupt
if os.path.basename(sys.argv[0]) == "agent-host" or sys.argv[0].endswith(os.path.join("agent_host", "__main__.py")):
    import signal  # the command itself (the console script, python -m): not a program importing the package

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        try:
            signal.signal(signal.SIGINT, _interrupted)
        except ValueError:  # imported on a thread other than the main one: signals are not ours to set
            pass

from agent_host.cli.root import entry as entry  # noqa: E402  (the hook first: importing the rest takes ~0.1 s)
from agent_host.cli.root import main as main  # noqa: E402

__all__ = ("entry", "main")
