"""Log records on stderr as the command line shows them.

Host records read `agent-host: message` (`agent-host: warning: message` from WARNING up); a
guest's log messages (`host.guest`) are shown as they came, `[NAME] LEVEL: message` at every level;
tracebacks only with `--debug`. Levels: the host's INFO by default, WARNING with `-q` (the guest's
output stays), DEBUG with `-v`; libraries' logs with `-vv` or `--debug`; the MCP SDK's otherwise
silenced (the host reports transport faults itself, in one line). Records go to `sys.stderr` as it
is when written.
"""

from __future__ import annotations

import logging
import sys


def setup(*, debug: bool, verbose: int, quiet: bool) -> None:
    """Replace the root logger's handlers with one stderr handler at the levels above."""
    handler = _StderrHandler()
    handler.setFormatter(_Formatter(tracebacks=debug))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    libraries = debug or verbose >= 2
    root.setLevel(logging.DEBUG if libraries else logging.WARNING)
    host = logging.DEBUG if debug or verbose else logging.WARNING if quiet else logging.INFO
    logging.getLogger("agent_host").setLevel(host)
    logging.getLogger("agent_host.guest").setLevel(logging.INFO if quiet else logging.NOTSET)
    logging.getLogger("mcp").setLevel(logging.DEBUG if libraries else logging.CRITICAL)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to `sys.stderr` as it is at each record (a live progress display replaces it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


class _Formatter(logging.Formatter):
    def __init__(self, *, tracebacks: bool) -> None:
        super().__init__()
        self._tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        if record.name == "agent_host.guest":
            return record.getMessage()  # already `[NAME] LEVEL: message` (session.guest_log)
        text = f"agent-host: {record.getMessage()}"
        if record.levelno >= logging.WARNING:
            text = f"agent-host: {record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and self._tracebacks:
            text += "\n" + self.formatException(record.exc_info)
        return text
