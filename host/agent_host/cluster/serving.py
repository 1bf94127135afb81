"""`RayAgents`: `agent-host serve --executor ray` runs its agents' calls on Ray actors.

The serving side of `--executor ray` (`executor` is the `run` side; both use `check_fit`, the same
`AgentWorker` actors and `[host]` keys: `ray_address`, `ray_cpus`, `max_restarts` does not apply:
a call is not run twice). Each offered component is shipped once, before serving. Actors are made
as calls need them, up to one per `[host] ray_cpus` CPUs of the cluster; one call runs on an actor
at a time, and more calls wait for one to be free. A call's worker sends its events as `run`'s do:
audit lines go into the serve host's audit log, guest output to stderr, host log records to the
log, and the guest's log lines to the caller (`Job.logs`). A call the client cancels stops its
guest on the actor (`AgentWorker.cancel`) and waits for its end (at most `STOP_WAIT` seconds, then
the actor is killed); an actor that dies during a call ends it as `crashed` (an `unavailable`
answer naming Ray's reason) and is replaced by the next call. `close` closes and kills every actor.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.to_thread

from agent_host._support.stopping import StopToken
from agent_host.app.host import Host
from agent_host.cluster.actors import Actors
from agent_host.cluster.connection import Cluster, import_ray
from agent_host.cluster.executor import check_fit, event_handler, pool_size, ray_reason
from agent_host.cluster.messages import AuditLine, Ended, GuestLog, Job
from agent_host.cluster.shipping import Shipment, ship
from agent_host.config import Config
from agent_host.errors import WorkerFailure
from agent_host.model import RunResult, RunStatus
from agent_host.serve.agents import STOP_WAIT, LogSink, Offer, stopped
from agent_host.serve.limit_log import LimitLog
from agent_host.session.audit_budget import AuditBudget

logger = logging.getLogger(__name__)


class RayAgents:
    """Where `serve`'s agents run with `--executor ray` (see the module docstring; an `AgentRunner`)."""

    def __init__(
        self,
        host: Host,
        config: Config,
        cluster: Cluster,
        offers: Sequence[Offer],
        *,
        approve: str = "deny",
        stop: StopToken | None = None,
        output: TextIO | None = None,
    ) -> None:
        """Ships every offered component now. Raises `UsageError` when the agents cannot run on
        `cluster` (`check_fit`), `HostError` when a component cannot be shipped."""
        check_fit(config, cluster, approve)
        self._ray = import_ray()
        self._actors = Actors(config, approve)
        self._audit = host.audit
        self._handle = event_handler(host.audit, output)
        self._limit_log = LimitLog(logger)
        token = stop if stop is not None else StopToken()
        self._shipped: dict[Path, Shipment] = {}
        for offer in offers:
            if offer.wasm not in self._shipped:
                self._shipped[offer.wasm] = ship(host.runtime, offer.wasm, token)
        self._slots = anyio.CapacityLimiter(pool_size(config, cluster))
        self._idle: list[Any] = []

    async def run(
        self, offer: Offer, given: str, on_log: LogSink | None, audit_budget: AuditBudget | None = None
    ) -> RunResult:
        job = Job(offer.name, offer.settings, given, self._shipped[offer.wasm], (), logs=on_log is not None)
        async with self._slots:
            actor = self._idle.pop() if self._idle else await anyio.to_thread.run_sync(self._new_actor)
            ended = threading.Event()
            kept = True
            try:
                attempt = self._attempt
                return await anyio.to_thread.run_sync(
                    attempt, actor, job, on_log, ended, audit_budget, abandon_on_cancel=True
                )
            except anyio.get_cancelled_exc_class():
                actor.cancel.remote("the client cancelled the call")
                with anyio.CancelScope(shield=True):
                    kept = await anyio.to_thread.run_sync(ended.wait, STOP_WAIT, abandon_on_cancel=True)
                stopped(self._limit_log, offer.name, kept)
                raise
            except self._ray.exceptions.RayError as exc:
                kept = False
                logger.warning("agent %s: its Ray worker died during a call: %s", offer.name, ray_reason(exc))
                return RunResult(offer.name, RunStatus.CRASHED, f"its Ray worker died: {ray_reason(exc)}", 0.0)
            finally:
                if kept:
                    self._idle.append(actor)
                else:
                    self._forget(actor)

    def _attempt(
        self,
        actor: Any,
        job: Job,
        on_log: LogSink | None,
        ended: threading.Event,
        audit_budget: AuditBudget | None,
    ) -> RunResult:
        """In a worker thread: one run of `job` on `actor`, its events handled as they arrive (its
        audit lines charged to `audit_budget`). Raises Ray's errors (`HostError` when the worker could
        not start the agent)."""
        started = time.monotonic()
        try:
            for ref in actor.run.remote(job):
                for event in self._ray.get(ref):
                    if isinstance(event, Ended):
                        if event.failure is not None:
                            raise WorkerFailure(event.failure)
                        return event.outcome
                    if isinstance(event, GuestLog):
                        if on_log is not None:
                            on_log(event.level, event.message)
                    elif isinstance(event, AuditLine) and self._audit is not None:
                        self._audit.write_line(event.line, audit_budget)
                    else:
                        self._handle(event)
            raise self._ray.exceptions.RayError(f"agent {job.agent}: its run ended without an outcome")
        finally:
            ended.set()
            logger.debug("agent %s ran on Ray in %.3f s", job.agent, time.monotonic() - started)

    def _new_actor(self) -> Any:
        return self._actors.new()

    def _forget(self, actor: Any) -> None:
        self._actors.forget(actor)

    def ready(self) -> Mapping[str, int]:
        """None made ahead here: each actor makes its guests."""
        return {}

    def close(self) -> None:
        """Close every actor (its host's stdio servers exit), then kill it (idempotent)."""
        self._idle.clear()
        self._actors.close()
