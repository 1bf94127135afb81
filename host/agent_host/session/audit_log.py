"""The audit log: one JSON line per tooling operation, appended to the file `[host] audit_log` names.

Operations refused before they reach a server (denied, invalid arguments, limits) are logged too.
An asynchronous call is logged when it ends (a cancelled one with outcome `cancelled`). Writes are
serialized by a lock and flushed line by line, so concurrent guests never interleave a line and a
crash loses at most the line being written. A write that fails is reported once on the host's log
and the host goes on. The file is bounded (`rotation.RotatingFile`: rotated at `[host]
audit_log_max`, `audit_log_keep` old files kept, a line never split); with `include_arguments` (the
arguments may hold secrets) it is created with mode 0600, and an existing one is tightened to it.
A forwarding log (`forward`: a Ray worker's) hands each line to a callable instead; the driver
appends such lines to its file with `write_line`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from agent_host._support.rotation import AUDIT_LOG_BOUNDS, DEFAULT_MODE, PRIVATE_MODE, LogBounds, RotatingFile
from agent_host.errors import ConfigError

logger = logging.getLogger(__name__)


class AuditLog:
    """An open audit log file. Thread-safe."""

    def __init__(
        self,
        path: Path | None,
        *,
        include_arguments: bool = False,
        forward: Callable[[str], None] | None = None,
        bounds: LogBounds = AUDIT_LOG_BOUNDS,
    ) -> None:
        """Open `path` for appending, creating its folder; raises `ConfigError` when that fails. With
        `forward` instead (and `path` None) no file is opened: each line goes to `forward`, called
        under the log's lock, so lines arrive in the order they were recorded."""
        if (path is None) == (forward is None):
            raise ValueError("an audit log needs a path or a forward, not both")
        self.path = path
        self.include_arguments = include_arguments
        self._lock = threading.Lock()
        self._failed = False
        self._forward = forward
        self._file: RotatingFile | None = None
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = RotatingFile(path, bounds, mode=PRIVATE_MODE if include_arguments else DEFAULT_MODE)
        except OSError as exc:
            raise ConfigError(f"cannot open the audit log {path}: {exc.strerror or exc}") from None

    def record(
        self,
        *,
        agent: str,
        tooling: str | None,
        operation: str,
        target: str | None,
        argument_bytes: int,
        outcome: str,
        duration: float,
        arguments: str | None = None,
    ) -> None:
        """Append one line (nothing after `close`).

        The line is an object with `time` (UTC, ISO 8601, milliseconds), `agent`, `tooling`,
        `operation` (the WIT function: `get`, `list-tools`, `call-tool`, `call-tool-blocking`,
        `list-resources`, `read-resource`, `subscribe-resource`, ...), `target` (tool name or URI, or
        null), `argument_bytes`, `outcome` (`ok` or the error code) and `duration_ms`. The arguments
        themselves are written only with `[host] audit_arguments = true` (`include_arguments`; key
        `arguments`, the JSON text as sent). A failed write is logged once and not raised.
        """
        entry: dict[str, object] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "agent": agent,
            "tooling": tooling,
            "operation": operation,
            "target": target,
            "argument_bytes": argument_bytes,
            "outcome": outcome,
            "duration_ms": round(duration * 1000, 3),
        }
        if self.include_arguments and arguments is not None:
            entry["arguments"] = arguments
        self.write_line(json.dumps(entry, ensure_ascii=False) + "\n")

    def write_line(self, line: str) -> None:
        """Append `line` (one JSON object and a newline, as `record` makes them) as it is."""
        with self._lock:
            if self._forward is not None:
                self._forward(line)
                return
            if self._file is None:
                return
            try:
                self._file.write(line.encode("utf-8", errors="backslashreplace"))
            except OSError as exc:
                if not self._failed:
                    self._failed = True
                    logger.error("cannot write the audit log %s: %s", self.path, exc)

    def close(self) -> None:
        with self._lock:
            self._forward = None
            if self._file is not None:
                self._file.close()
                self._file = None
