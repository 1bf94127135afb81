"""Running prepared agents on Ray actors: the driver's side of `--executor ray`.

`RayExecutor.run_all` ships each component once (`shipping`), then runs the agents on a pool of
`AgentWorker` actors (one per `[host] ray_cpus` CPUs of the cluster, never more than the agents;
started while the components are shipped),
one agent per actor at a time, in the order given; results keep that order. A driver thread feeds
each actor and, as a run's events arrive, appends its audit lines to the one audit log, writes its
output to stderr and its log records to the driver's log. An actor that dies ends its agent as
`crashed` with Ray's reason, or, for a `restartable` agent, runs it again on a new actor up to
`[host] max_restarts` times. `stop_all` (signal-handler safe) stops every running guest; agents not
started end `interrupted`; actors still running `KILL_GRACE` seconds later are killed. However it
ends, every actor is closed (its stdio servers exit) and killed before `run_all` returns.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, TextIO

from agent_host._support.paths import cache_dir
from agent_host._support.rotation import LogBounds
from agent_host._support.stopping import StopToken
from agent_host.app.runs import AgentRun, Finished
from agent_host.cluster.actors import Actors
from agent_host.cluster.connection import Cluster, import_ray
from agent_host.cluster.messages import AuditLine, Ended, Event, Job, LogLine, Output
from agent_host.cluster.shipping import Shipment, ship
from agent_host.cluster.worker import APPROVALS
from agent_host.config import Config
from agent_host.errors import ExitCode, HostError, Interrupted, UsageError, WorkerFailure
from agent_host.model import RunResult, RunStatus
from agent_host.runtime.engine import Runtime
from agent_host.session.audit_log import AuditLog
from agent_host.session.cassette import Playback, Recording, Tapes

logger = logging.getLogger(__name__)


KILL_GRACE: Final = 3.0
"""Seconds actors get, after a stop request, to end their runs before they are killed."""

JOIN_POLL: Final = 0.2
"""Seconds between the main thread's looks at the feeding threads (it stays responsive to signals)."""

REASON_CHARS: Final = 240
"""Characters of Ray's explanation kept in a crashed agent's outcome."""


@dataclass
class _Slot:
    """One actor of the pool (None until needed, and again after it died)."""

    actor: Any = None


def check_fit(config: Config, cluster: Cluster, approve: str) -> None:
    """Raise `UsageError` unless agents can run on `cluster` as `config` says: `approve` is `all` or
    `deny` (no person is at a worker), the cluster has CPUs, and one machine has `[host] ray_cpus`."""
    if approve not in APPROVALS:
        raise UsageError(
            f"--approve {approve}: agents on Ray run where nobody can answer a prompt",
            hint="use --approve deny (the default) or --approve all, or run with --executor local",
        )
    if cluster.cpus <= 0:
        raise UsageError(f"the Ray cluster at {cluster.address} has no CPUs for agents")
    if config.host.ray_cpus > cluster.node_cpus:
        raise UsageError(
            f"[host] ray_cpus = {config.host.ray_cpus:g}: no machine of the Ray cluster at {cluster.address} "
            f"has that many CPUs (the largest has {cluster.node_cpus:g}), so no agent could ever start",
            hint=f"lower ray_cpus to {cluster.node_cpus:g} or less",
        )


def pool_size(config: Config, cluster: Cluster) -> int:
    """Actors that fit `cluster` at `[host] ray_cpus` each (at least one)."""
    return max(1, int(cluster.cpus / config.host.ray_cpus))


def event_handler(audit: AuditLog | None, output: TextIO | None) -> Callable[[Event], None]:
    """What the driver does with a worker's events but `Ended` and `GuestLog`: audit lines into
    `audit`, guest output to `output` (default: stderr), log records into the driver's log."""

    def handle(event: Event) -> None:
        if isinstance(event, AuditLine):
            if audit is not None:
                audit.write_line(event.line)
        elif isinstance(event, Output):
            stream = output if output is not None else sys.stderr
            stream.write(event.text)
            stream.flush()
        elif isinstance(event, LogLine):
            record = logging.makeLogRecord(
                {
                    "name": event.logger,
                    "levelno": event.level,
                    "levelname": logging.getLevelName(event.level),
                    "msg": event.message,
                }
            )
            logging.getLogger(event.logger).handle(record)

    return handle


class RayExecutor:
    """Runs agents on a Ray cluster the driver is connected to (`connection.ray_cluster`)."""

    def __init__(
        self,
        config: Config,
        cluster: Cluster,
        *,
        approve: str = "deny",
        stop: StopToken | None = None,
        cache: Path | None = None,
        output: TextIO | None = None,
        tapes: Tapes | None = None,
    ) -> None:
        """`approve` is `all` or `deny`: no person is at a worker (`UsageError` for another choice).
        Raises `ConfigError` when the audit log cannot be opened. `tapes`: the cassette the runs are
        recorded into (each worker records, the tape comes back with the outcome) or replayed from
        (each job carries its agent's tape)."""
        check_fit(config, cluster, approve)
        self._config = config
        self._tapes = tapes
        self._cluster = cluster
        self._approve = approve
        self.stop = stop if stop is not None else StopToken()
        self._cache = cache if cache is not None else cache_dir()
        self._output = output
        settings = config.host
        bounds = LogBounds(settings.audit_log_max, settings.audit_log_keep)
        self._audit = (
            AuditLog(settings.audit_log, include_arguments=settings.audit_arguments, bounds=bounds)
            if settings.audit_log
            else None
        )
        self._ray = import_ray()
        self._actors = Actors(config, approve)

    def run_all(self, runs: Sequence[AgentRun], allow: Iterable[str] = ()) -> list[Finished]:
        """Run every prepared agent (with `allow` granted as by `--allow`) and wait for all of them;
        results in the order of `runs` (see the module docstring)."""
        allow = tuple(allow)
        results: dict[int, Finished] = {}
        try:
            startable = sum(1 for run in runs if run.failure is None and run.component is not None)
            slots = [_Slot(self._new_actor()) for _ in range(min(startable, self.pool_size))]  # they start meanwhile
            shipped = self._ship(runs, results)
            todo = [(index, run, shipped[run.component]) for index, run in enumerate(runs) if index not in results]
            lock = threading.Lock()

            def feed(slot: _Slot) -> None:
                while True:
                    with lock:
                        if not todo:
                            return
                        index, run, shipment = todo.pop(0)
                    try:
                        job = self._job(run, shipment, allow)
                    except HostError as exc:  # a replayed cassette without this agent's tape
                        results[index] = Finished(RunResult.not_started(run.name, exc), exc)
                        continue
                    try:
                        results[index] = self._run(slot, run, job)
                    except Exception as exc:  # boundary: one agent's failure must not lose the others' results
                        logger.exception("internal error running agent %s on Ray", run.name)
                        text = f"internal host error: {type(exc).__name__}: {exc}"
                        results[index] = Finished(RunResult(run.name, RunStatus.TRAP, text, 0.0))

            threads = [threading.Thread(target=feed, args=(s,), name=f"ray-feed-{n}") for n, s in enumerate(slots)]
            for thread in threads:
                thread.start()
            for thread in threads:
                while thread.is_alive():
                    thread.join(JOIN_POLL)
        finally:
            self._close_actors()
            if self._audit is not None:
                self._audit.close()
        return [results[index] for index in range(len(runs))]

    @property
    def pool_size(self) -> int:
        """Actors that fit the cluster at `[host] ray_cpus` each (at least one)."""
        return pool_size(self._config, self._cluster)

    def stop_all(self, reason: str, signum: int | None = None) -> None:
        """Stop every running guest, start no other, kill actors still running `KILL_GRACE` seconds
        later. Safe in a signal handler: the remote calls are made on a thread of their own."""
        self.stop.stop(reason, signum)
        threading.Thread(target=self._stop_actors, args=(reason,), name="ray-stop", daemon=True).start()

    def _ship(self, runs: Sequence[AgentRun], results: dict[int, Finished]) -> dict[Path | None, Shipment]:
        """Each component compiled once and shipped; a run that cannot start gets its result now."""
        shipped: dict[Path | None, Shipment] = {}
        failed: dict[Path, HostError] = {}
        with Runtime(self._cache) as runtime:
            for index, run in enumerate(runs):
                failure = run.failure
                if failure is None and run.component is not None and run.component not in shipped:
                    try:
                        shipped[run.component] = ship(runtime, run.component, self.stop)
                    except HostError as exc:
                        failed[run.component] = exc
                if failure is None and run.component is not None:
                    failure = failed.get(run.component)
                if failure is None and run.component is None:
                    failure = UsageError(f"agent {run.name} has no component")
                if failure is not None:
                    results[index] = Finished(RunResult.not_started(run.name, failure), failure)
        return shipped

    def _run(self, slot: _Slot, run: AgentRun, job: Job) -> Finished:
        """Run `job` on the slot's actor (a new one when it has none), again on a new actor after a
        crash while the agent is restartable and restarts remain."""
        started = time.monotonic()
        restarts = 0
        limit = self._config.host.max_restarts if run.settings is not None and run.settings.restartable else 0
        while True:
            if self.stop.stopped:
                exc = Interrupted(f"not started: {self.stop.reason}", signum=self.stop.signum)
                return Finished(RunResult.not_started(run.name, exc), exc)
            if slot.actor is None:
                slot.actor = self._new_actor()
            try:
                done = self._attempt(slot.actor, job)
                if restarts:  # the time of every attempt
                    done = replace(done, outcome=replace(done.outcome, duration=time.monotonic() - started))
                return done
            except self._ray.exceptions.RayError as exc:
                self._forget(slot.actor)
                slot.actor = None
                status = _status_of(exc, self._ray.exceptions)
                reason = ray_reason(exc)
                duration = time.monotonic() - started
                if status != RunStatus.CRASHED:
                    text = f"internal error on the Ray worker: {reason}"
                    return Finished(RunResult(run.name, status, text, duration))
                if self.stop.stopped:
                    stopped = f"stopped: {self.stop.reason}"
                    return Finished(RunResult(run.name, RunStatus.TRAP, stopped, duration, tripped="stopped"))
                if restarts < limit:
                    restarts += 1
                    logger.warning(
                        "agent %s: its Ray worker died (%s); running it again (restart %d of %d)",
                        run.name,
                        reason,
                        restarts,
                        limit,
                    )
                    continue
                after = f" (after {restarts} restart{'s' if restarts > 1 else ''})" if restarts else ""
                text = f"its Ray worker died{after}: {reason}"
                return Finished(RunResult(run.name, RunStatus.CRASHED, text, duration, code=ExitCode.TRAP))

    def _job(self, run: AgentRun, shipment: Shipment, allow: tuple[str, ...]) -> Job:
        """The job of `run`; with a replayed cassette, its agent's tape (`CassetteError`: none)."""
        replay = self._tapes.player(run.name).tape if isinstance(self._tapes, Playback) else None
        record = isinstance(self._tapes, Recording)
        return Job(run.name, run.settings, run.input, shipment, allow, record=record, replay=replay)

    def _attempt(self, actor: Any, job: Job) -> Finished:
        """One run of `job` on `actor`, handling its events as they arrive. Raises Ray's errors."""
        handle = self._handler()
        for ref in actor.run.remote(job):
            events: list[Event] = self._ray.get(ref)
            for event in events:
                if isinstance(event, Ended):
                    if event.tape is not None and isinstance(self._tapes, Recording):
                        self._tapes.cassette.agents[job.agent] = event.tape  # the file is written on the driver
                    failure = WorkerFailure(event.failure) if event.failure is not None else None
                    return Finished(event.outcome, failure)
                handle(event)
        raise self._ray.exceptions.RayError(f"agent {job.agent}: its run ended without an outcome")

    def _handler(self) -> Callable[[Event], None]:
        return event_handler(self._audit, self._output)

    def _new_actor(self) -> Any:
        actor = self._actors.new()
        if self.stop.stopped:  # the request came while it was being made
            actor.stop.remote(self.stop.reason or "stopped")
        return actor

    def _forget(self, actor: Any) -> None:
        self._actors.forget(actor)

    def _stop_actors(self, reason: str) -> None:
        for actor in self._actors.live():
            actor.stop.remote(reason)
        time.sleep(KILL_GRACE)
        for actor in self._actors.live():
            self._ray.kill(actor, no_restart=True)

    def _close_actors(self) -> None:
        self._actors.close()


def _status_of(exc: BaseException, exceptions: Any) -> RunStatus:
    """`trap` for an error raised by the worker's own code (a host bug), `crashed` for the rest."""
    statuses: Mapping[type[BaseException], RunStatus] = {exceptions.RayTaskError: RunStatus.TRAP}
    return next((status for kind, status in statuses.items() if isinstance(exc, kind)), RunStatus.CRASHED)


def ray_reason(exc: BaseException) -> str:
    """Ray's explanation of `exc` on one line: its message without the indented `key: value`
    lines, cut to `REASON_CHARS`."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip() and not line.startswith(("\t", " "))]
    text = " ".join(lines) or type(exc).__name__
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"
