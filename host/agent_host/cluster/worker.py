"""The Ray actor that runs agents on a worker: a whole `Host` (runtime, bridge, toolings) of its own.

`AgentWorker` runs one agent at a time: `run` is a streaming generator that yields what the run
produces as it happens, in batches (`messages`): audit lines (the host's audit log forwards them),
guest output, log records at the driver's levels, and last `Ended`. A stdio tooling is started on
this worker when an agent first uses it and kept for the next agents, as one host does locally.
`stop` (on the actor's second thread) stops the running guest and starts none after; `close` closes
the host: calls are cancelled upstream and stdio servers exit. Nothing here prints.
"""

from __future__ import annotations

import io
import logging
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final, TextIO, cast

from agent_host._support import scratch
from agent_host.app.host import Host
from agent_host.cluster.messages import AuditLine, Ended, Event, GuestLog, Job, LogLine, Output
from agent_host.config import Config
from agent_host.errors import HostError
from agent_host.model import RunResult
from agent_host.policy.approval import ApproveAll, Approver, DenyAll
from agent_host.runtime.guest import GuestThread
from agent_host.session.audit_log import AuditLog
from agent_host.session.cassette import Cassette, Playback, Recording, Tapes

BATCH_INTERVAL: Final = 0.05
"""Seconds between looks at whether the running guest has ended, should its wake-up be missed."""

ON_A_WORKER: Final = (
    "no one approves calls on a Ray worker: run with `--approve all`, or with `--executor local --approve ask`"
)

APPROVALS: Final[Mapping[str, Callable[[], Approver]]] = {"all": ApproveAll, "deny": lambda: DenyAll(ON_A_WORKER)}
"""The `--approve` choices a worker can honour: no person is at a worker's terminal."""


class AgentWorker:
    """One worker's host; the executor makes it a Ray actor with two threads (`run` and `stop`)."""

    def __init__(self, config: Config, approve: str, levels: Mapping[str, int]) -> None:
        """`approve` is an `APPROVALS` key; `levels` are the driver's logger levels (by logger name,
        "" the root), which this process adopts: what would not be shown there is not sent."""
        self._events: queue.SimpleQueue[Event] = queue.SimpleQueue()
        _forward_logs(self._events, levels)
        settings = config.host
        audit = None
        if settings.audit_log is not None:
            forward = self._audit_line
            audit = AuditLog(None, include_arguments=settings.audit_arguments, forward=forward)
        self._host = Host(config, approver=APPROVALS[approve](), audit=audit)
        self._output = cast(TextIO, _Output(self._events))
        self._guest: GuestThread | None = None
        """The guest of the job running now (the last one)."""

    def run(self, job: Job) -> Iterator[list[Event]]:
        """Run `job`'s agent to its end, yielding its events in batches (see the module docstring)."""
        host = self._host
        host.tapes = _tapes(job, host.config.secrets)  # one agent at a time: its tape, or none
        try:
            policy = host.policy(job.agent, job.settings, job.allow)
            on_log = self._guest_log if job.logs else None
            guest = host.start(
                job.component, job.input, agent=job.agent, policy=policy, output=self._output, on_log=on_log
            )
            self._guest = guest
        except HostError as exc:
            yield [*self._drain(), Ended(RunResult.not_started(job.agent, exc), str(exc))]
            return
        threading.Thread(target=self._watch, args=(guest,), name=f"ended-{job.agent}", daemon=True).start()
        while True:
            batch = self._drain(wait=BATCH_INTERVAL)
            outcome = guest.join(0)
            if outcome is not None:
                tape = host.tapes.cassette.agents.get(job.agent) if isinstance(host.tapes, Recording) else None
                yield [*batch, *self._drain(), Ended(outcome, tape=tape)]
                return
            if batch:
                yield batch

    def _watch(self, guest: GuestThread) -> None:
        """Wake `run` as soon as `guest` ends (else a short agent would hold the actor for a whole
        `BATCH_INTERVAL`)."""
        try:
            guest.join()
        finally:
            self._events.put(_ENDED)

    def cancel(self, reason: str) -> None:
        """Stop the running guest (its outcome: a trap with `reason`); later jobs run as usual (`serve`:
        a call its client cancelled)."""
        guest = self._guest
        if guest is not None:
            guest.stop(reason)

    def _guest_log(self, level: str, message: str) -> None:
        self._events.put(GuestLog(level, message))

    def stop(self, reason: str) -> None:
        """Stop the running guest (its outcome: a trap with `reason`) and start no other."""
        self._host.stop_all(reason)

    def close(self) -> None:
        """Close the host (toolings: stdio servers exit; runtime, bridge), then remove this process's
        temporary folder: the actor is killed next, and a killed process removes nothing."""
        try:
            self._host.close()
        finally:
            scratch.remove()

    def _audit_line(self, line: str) -> None:
        self._events.put(AuditLine(line))

    def _drain(self, wait: float = 0.0) -> list[Event]:
        """The events queued now, after waiting up to `wait` seconds for a first one (the end of the
        guest wakes it too): an event leaves as soon as it is made, so little is lost if the process
        dies."""
        events: list[Event] = []
        try:
            if wait:
                events.append(self._events.get(timeout=wait))
            while True:
                events.append(self._events.get_nowait())
        except queue.Empty:
            return [event for event in events if event is not _ENDED]


def _tapes(job: Job, secrets: frozenset[str]) -> Tapes | None:
    """What the host records into or replays from for `job` (see `messages.Job`)."""
    if job.replay is not None:
        return Playback(Cassette({job.agent: job.replay}), Path(f"the cassette of agent {job.agent}"), secrets)
    return Recording(secrets) if job.record else None


_ENDED: Final = AuditLine("")
"""Queued when the running guest ends; never sent."""


class _Output(io.TextIOBase):
    """The guest's output sink: each write is an `Output` event."""

    def __init__(self, events: queue.SimpleQueue[Event]) -> None:
        super().__init__()
        self._events = events

    def write(self, text: str) -> int:
        self._events.put(Output(text))
        return len(text)


class _Forwarder(logging.Handler):
    """Sends this process's log records (Ray's own excepted) to the driver as `LogLine` events."""

    def __init__(self, events: queue.SimpleQueue[Event]) -> None:
        super().__init__()
        self._events = events

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "ray" or record.name.startswith("ray."):
            return
        self._events.put(LogLine(record.name, record.levelno, record.getMessage()))


def _forward_logs(events: queue.SimpleQueue[Event], levels: Mapping[str, int]) -> None:
    for name, level in levels.items():
        logging.getLogger(name or None).setLevel(level)
    logging.getLogger().addHandler(_Forwarder(events))
