"""The `agent-host` command line: one module per command (click), everything shown in `render`.

stdout carries only results (a guest's answer, a tool's result, a table, a built component's
path, the WIT), so they can be piped; logs, progress, guest output and errors go to stderr.
Errors are one line (`agent-host: error: ...` plus a hint), the traceback only under `--debug`.
Exit codes come from `status_codes` (mapped in `root`). Commands call the application API
(`host.app`, `host.runs`, `host.inventory`, `host.cache`), imported inside the commands that need
it: `--help`, `--version`, `new`, `config` (without `--connect`) and `wit` load neither wasmtime
nor the MCP SDK.
"""

from host.cli.root import entry as entry
from host.cli.root import main as main

__all__ = ("entry", "main")
