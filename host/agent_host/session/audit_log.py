"""The audit log: one JSON line per tooling operation, appended to the file `[host] audit_log` names.

Refused operations are logged too; an asynchronous call when it ends. Every line is bounded
(`audit_line`). A line charged to a budget (`audit_budget`: a run's, a `serve` client's) is written
only within it, else counted, and one `audit-budget` line tells the count (`end`, `tell`, or before
the budget's next line). Writes are serialized by a lock, a line at a time, so guests never
interleave a line; a failed write is reported once on the host's log. The file is bounded
(`rotation.RotatingFile`: `[host] audit_log_max`, `audit_log_keep`, a line never split); with
`include_arguments` (secrets) it is created with mode 0600, an existing one tightened to it. A
forwarding log (`forward`: a Ray worker's) hands each line to a callable; the driver appends such
lines to its file with `write_line`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Final

from agent_host._support.rotation import AUDIT_LOG_BOUNDS, DEFAULT_MODE, PRIVATE_MODE, LogBounds, RotatingFile
from agent_host.errors import ConfigError, ErrorCode
from agent_host.session import audit_line
from agent_host.session.audit_budget import AuditBudget, Refused, spend

logger = logging.getLogger(__name__)

BUDGET_OPERATION: Final = "audit-budget"
"""The `operation` of the line telling how many lines a budget counted instead of writing them."""


def summary(budget: AuditBudget, refused: Refused) -> bytes:
    """The `audit-budget` line telling that `budget` counted `refused` (see `AuditLog.end`)."""
    return audit_line.encode(
        {
            "time": audit_line.now(),
            "agent": budget.agent,
            "tooling": None,
            "operation": BUDGET_OPERATION,
            "target": budget.target,
            "argument_bytes": 0,
            "outcome": ErrorCode.LIMIT_EXCEEDED.value,
            "duration_ms": 0,
            "lines_not_written": refused.lines,
            "bytes_not_written": refused.bytes,
            "reason": budget.reason,
        }
    )


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
        budget: AuditBudget | None = None,
        details: Mapping[str, str | int | None] | None = None,
    ) -> None:
        """Append one line (nothing after `close`), charged to `budget` when given; `details` adds
        keys of the operation's own (a chat's `provider`, `model`, `input_tokens`, `output_tokens`).

        The line is an object with `time` (UTC, ISO 8601, milliseconds), `agent`, `tooling`,
        `operation` (the WIT function: `get`, `list-tools`, `call-tool`, `call-tool-blocking`,
        `list-resources`, `read-resource`, `subscribe-resource`, ...), `target` (tool name or URI, or
        null), `argument_bytes`, `outcome` (`ok` or the error code) and `duration_ms`. The arguments
        themselves are written only with `[host] audit_arguments = true` (`include_arguments`; key
        `arguments`, the JSON text as sent). Each string is cut to its bound first (`audit_line`: a
        cut field is followed by `KEY_chars`, its full length). A failed write is logged once and not
        raised.
        """
        entry: dict[str, object] = {
            "time": audit_line.now(),
            "agent": agent,
            "tooling": tooling,
            "operation": operation,
            "target": target,
            "argument_bytes": argument_bytes,
            "outcome": outcome,
            "duration_ms": round(duration * 1000, 3),
        }
        if details:
            entry.update(details)
        if self.include_arguments and arguments is not None:
            entry["arguments"] = arguments
        self._write(audit_line.encode(entry), budget)

    def write_line(self, line: str, budget: AuditBudget | None = None) -> None:
        """Append `line` (one JSON object and a newline, as `record` makes them: a Ray worker's),
        charged to `budget` when given: as it is when it is one line within `MAX_LINE_BYTES`, else an
        `audit-line-replaced` line in its place (`audit_line.forwarded`)."""
        self._write(audit_line.forwarded(line), budget)

    def end(self, budget: AuditBudget) -> None:
        """The run `budget` was given to has ended: one `audit-budget` line (not charged) tells the
        lines it counted, if any; a line it refuses from now on (an asynchronous call that ends
        after its run) is told at once. Idempotent."""
        with self._lock:
            budget.ended = True
            self._tell(budget)

    def tell(self, budgets: Iterable[AuditBudget]) -> None:
        """One `audit-budget` line (not charged) for each of `budgets` that counted lines not told
        yet (a `serve` client's allowance when the server stops)."""
        with self._lock:
            for budget in budgets:
                self._tell(budget)

    def _tell(self, budget: AuditBudget) -> None:
        refused = budget.refused
        if refused is not None:
            budget.told()
            self._emit(summary(budget, refused))

    def _write(self, data: bytes, budget: AuditBudget | None) -> None:
        with self._lock:
            for line in [data] if budget is None else self._charged(data, budget):
                self._emit(line)

    def _charged(self, data: bytes, budget: AuditBudget) -> list[bytes]:
        """Under the lock: the lines to write for line `data` charged to `budget`'s chain: the
        `audit-budget` line of each refilling budget of the chain that counted lines (charged to that
        budget and those after it), then `data`; none when a budget lacks the bytes: the line is
        counted on it (and told at once when its run has ended)."""
        chain = budget.chain()
        notes = {b: summary(b, refused) for b in chain if b.refill and (refused := b.refused) is not None}
        charges: list[tuple[AuditBudget, int]] = []
        cost = len(data)
        for b in chain:
            cost += len(notes.get(b, b""))
            charges.append((b, cost))
        refusing = spend(charges)
        if refusing is not None:
            if refusing.refused is None and not refusing.ended:
                logger.warning("audit log: %s; its lines are counted, not written", refusing.reason)
            refusing.count(len(data))
            if refusing.ended:
                self._tell(refusing)
            return []
        for b in notes:
            b.told()
        return [*notes.values(), data]

    def _emit(self, data: bytes) -> None:
        """Under the lock: hand `data` (whole lines) to the forward, or append it to the file."""
        if self._forward is not None:
            self._forward(data.decode("utf-8"))
            return
        if self._file is None:
            return
        try:
            self._file.write(data)
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
