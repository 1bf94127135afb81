"""The `agent-host` command line: one module per command (click), everything shown in `render`.

stdout carries only results (a guest's answer, a tool's result, a table, a built component's
path, the WIT), so they can be piped; logs, progress, guest output and errors go to stderr.
Errors are one line (`agent-host: error: ...` plus a hint), the traceback only under `--debug`.
Exit codes come from `errors.ExitCode` (mapped in `root`). Commands call the application API
(`agent_host.app.host`, `agent_host.app.runs`, `agent_host.app.inventory`, `agent_host.cache`),
imported inside the commands that need it: `--help`, `--version`, `new`, `config` (without
`--connect`) and `wit` load neither wasmtime nor the MCP SDK. From this package's first line on, a
Ctrl-C that no command handles yet (while the rest is imported, ~0.1 s) is a quiet stop
(`agent_host._interrupts`, installed by the package root first).
"""

from __future__ import annotations

from agent_host import _interrupts

_interrupts.install()  # again: `python -m agent_host` names itself only once its __main__ runs

from agent_host.cli.root import entry as entry  # noqa: E402  (the hook first: importing the rest takes ~0.1 s)
from agent_host.cli.root import main as main  # noqa: E402

__all__ = ("entry", "main")
