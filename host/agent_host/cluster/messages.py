"""What travels between the driver and a worker: the job, and the events of its run.

Plain picklable data. A run's events arrive in the order they happened, in batches: audit lines,
guest output, log records, and last `Ended` with the outcome. `WorkerFailure` stands on the driver
for a `HostError` the worker met starting the agent (its reference and exit code are the outcome's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_host.config import AgentConfig
from agent_host.model import RunResult
from agent_host.runtime.engine import Shipped
from agent_host.session.cassette import Tape


@dataclass(frozen=True)
class Job:
    """One agent to run on a worker."""

    agent: str
    settings: AgentConfig | None
    """Its `[agents.NAME]` table; None for a guest run by its path (the `[host]` defaults apply)."""
    input: str
    component: Shipped
    allow: Sequence[str]
    """Toolings granted as by `--allow`."""
    record: bool = False
    """Record the run's tape (`run --record`: it comes back in `Ended`, the driver writes the file)."""
    replay: Tape | None = None
    """Answer the guest from this tape (`run --replay`)."""
    logs: bool = False
    """Send the guest's log lines back as `GuestLog` events (`serve`: they reach the caller)."""


@dataclass(frozen=True)
class AuditLine:
    """One line of the audit log, as the worker's host recorded it."""

    line: str


@dataclass(frozen=True)
class Output:
    """Guest output (complete lines, prefixed with the agent's name as locally)."""

    text: str


@dataclass(frozen=True)
class LogLine:
    """A log record of the worker's host, at a level the driver shows."""

    logger: str
    level: int
    message: str


@dataclass(frozen=True)
class GuestLog:
    """One log line of the guest (WIT level, message), for a job that asked for them (`Job.logs`)."""

    level: str
    message: str


@dataclass(frozen=True)
class Ended:
    """The run's outcome; `failure` is the message of the error that kept it from starting."""

    outcome: RunResult
    failure: str | None = None
    tape: Tape | None = None
    """What the run recorded, when its job asked for it."""


Event = AuditLine | Output | LogLine | GuestLog | Ended
