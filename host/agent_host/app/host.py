"""The composition root: config → bridge → toolings, providers → runtime.

`Host` owns the audit log (when configured), a private log folder (server stderr files), the bridge
(its loop thread, every tooling connection and model provider) and, created on first need, the runtime (engine,
linker, epoch ticker); `Host.close` releases them all. Guests share the tooling connections of
their host; each runs on its own thread under its own `AgentPolicy`. Once a stop was requested
(`Host.stop_all`) no guest starts.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio

from agent_host._support import scratch
from agent_host._support.paths import cache_dir
from agent_host._support.rotation import LogBounds
from agent_host._support.stopping import StopToken
from agent_host.app.client import AsyncToolingClient, ToolingClient
from agent_host.app.server_answers import PolicyAnswers
from agent_host.config import AgentConfig, Config
from agent_host.errors import UsageError
from agent_host.model import RunResult as RunResult
from agent_host.policy.approval import Approver, DenyAll
from agent_host.policy.grants import AgentPolicy
from agent_host.policy.pins import Pins
from agent_host.policy.validation import ArgumentValidator
from agent_host.providers import ProviderSet
from agent_host.runtime.engine import Runtime, Shipped
from agent_host.runtime.guest import GuestThread, describe_alone, start_guest
from agent_host.runtime.pool import InstancePool
from agent_host.session import GuestSession, LogSink, SessionCore
from agent_host.session.audit_budget import AuditBudget, run_budget
from agent_host.session.audit_log import AuditLog
from agent_host.session.bridge import Bridge
from agent_host.session.cassette import Playback, Recording, Tapes
from agent_host.session.inbox import Inbox
from agent_host.session.recorded import RecordingSession, ReplayingSession
from agent_host.toolings import ToolingSet

logger = logging.getLogger(__name__)

_S = TypeVar("_S", bound=GuestSession)

JOIN_POLL = 0.2
"""Seconds between checks while waiting for guests (keeps the main thread responsive to signals)."""

CLOSE_WAIT = 5.0
"""Seconds `close` waits for guests still running (each stopped) to end, so that each removes its
temporary folder; one that does not end by then is left to the process's exit (logged)."""


class Host:
    """One host process's toolings, bridge and runtime. A context manager: leaving it calls `close`."""

    def __init__(
        self,
        config: Config,
        *,
        cache: Path | None = None,
        keep_logs: bool = False,
        approver: Approver | None = None,
        stop: StopToken | None = None,
        audit: AuditLog | None = None,
        tapes: Tapes | None = None,
    ) -> None:
        """`audit`, when given, receives the audit records instead of the file `[host] audit_log`
        names (a Ray worker forwards them to the driver). `tapes`, when given, is a cassette every
        guest `start`ed records into (`Recording`) or replays from (`Playback`, no tooling is then
        used: `session.recorded`)."""
        self.config = config
        self.approver: Approver = approver if approver is not None else DenyAll()
        self.validator = ArgumentValidator()
        self.cache = cache if cache is not None else cache_dir()
        self.stop = stop if stop is not None else StopToken()
        """Set by `stop_all` (or by whoever passed it in): nothing new starts once it is set."""
        self._keep_logs = keep_logs
        self.tapes = tapes
        # The pins and the audit log come first: they are the steps here that can fail on bad configuration.
        self.pins = Pins.of(config)
        """The pinned tool definitions of the `pin_tools` toolings (in `agent-host.lock` beside the config)."""
        settings = config.host
        if audit is None and settings.audit_log is not None:
            bounds = LogBounds(settings.audit_log_max, settings.audit_log_keep)
            audit = AuditLog(settings.audit_log, include_arguments=settings.audit_arguments, bounds=bounds)
        self.audit = audit
        self.log_dir = Path(tempfile.mkdtemp(prefix="agent-host-logs-")) if keep_logs else scratch.make("logs-")
        """The servers' stderr logs: in the process's temporary folder (`agent_host._support.scratch`), or, kept
        (`keep_logs`), a folder of its own that outlives the process."""
        self.bridge = Bridge()
        self.providers = ProviderSet(config.providers)
        """The `[provider.NAME]` providers, each created on first use (on the bridge loop)."""
        answers = PolicyAnswers(config, self.approver, self.validator, self.audit, self.providers)
        self.toolings = ToolingSet(
            config.toolings,
            nursery=self.bridge.nursery,
            log_dir=self.log_dir,
            requests=answers,
            server_log=LogBounds(settings.server_log_max, settings.server_log_keep),
        )
        self._runtime: Runtime | None = None
        self._running: list[GuestThread] = []
        self._pools: list[InstancePool] = []
        self._lock = threading.RLock()
        """Reentrant: `stop_all` may run in a signal handler on a thread that holds it."""
        self._closed = False

    @property
    def runtime(self) -> Runtime:
        """The runtime (engine, linker, epoch ticker), created on first use."""
        if self._runtime is None:
            self._runtime = Runtime(self.cache)
        return self._runtime

    def policy(self, agent: str, settings: AgentConfig | None = None, allow: Iterable[str] = ()) -> AgentPolicy:
        """The grants and limits of `agent` with the table `settings` (None: none), plus the
        toolings `allow` names (globs, like `--allow`); see `policy.AgentPolicy.resolve`."""
        return AgentPolicy.resolve(self.config, agent, settings, allow)

    def agent_policy(self, agent: str, allow: Iterable[str] = ()) -> AgentPolicy:
        """The policy `agent` gets when none is given (`session`, `start`): its `[agents.NAME]`
        table when the config has one, else `[host] allow`, else no tooling (deny by default;
        the embedded default configuration grants `demo`), plus what `allow` names. Raises
        `UsageError` when an `allow` value matches no configured tooling."""
        return self.policy(agent, self.config.agents.get(agent), allow)

    def session(
        self,
        agent: str,
        policy: AgentPolicy | None = None,
        on_log: LogSink | None = None,
        *,
        allow: Iterable[str] = (),
        audit_budget: AuditBudget | None = None,
    ) -> GuestSession:
        """A session for agent `agent` under `policy`, by default the agent's own (`agent_policy`,
        deny by default, with what `allow` names granted besides; `allow=["*"]`: every configured
        tooling). `allow` with a `policy` is a `UsageError`: the policy decides alone. Its audit
        lines are charged to a budget of `[host] audit_run_max`, or to `audit_budget` alone when
        given (a long-lived session of `serve`: a client's allowance, or one that refills)."""
        if policy is None:
            policy = self.agent_policy(agent, allow)
        elif allow:
            raise UsageError("Host.session: pass either policy or allow, not both (allow is part of a policy)")
        return self._new_session(GuestSession, agent, policy, on_log, charged=audit_budget)

    def tooling(
        self, name: str, *, agent: str, policy: AgentPolicy | None = None, allow: Iterable[str] = ()
    ) -> ToolingClient:
        """Tooling `name` for a blocking program, acting as agent `agent` under `policy` (by default
        the agent's own, `agent_policy`, with what `allow` names granted besides: as `session`).
        Connects now: `ToolingError` (`not-found`, `denied`, `unavailable`) when it cannot be had.
        Close it (or use `with`): that cancels what it opened. See `app.client`."""
        return ToolingClient(self.session(agent, policy, allow=allow), name)

    def atooling(
        self, name: str, *, agent: str, policy: AgentPolicy | None = None, allow: Iterable[str] = ()
    ) -> AsyncToolingClient:
        """`tooling` for a coroutine on an asyncio loop: `async with host.atooling(name) as client`
        connects (and raises as `tooling` does) and closes it at the end of the block."""
        return AsyncToolingClient(self.session(agent, policy, allow=allow), name)

    def core(self, agent: str, policy: AgentPolicy) -> SessionCore:
        """Operations of `agent` under `policy` as coroutines for the bridge loop (`Bridge.run`):
        for callers on an event loop, such as `serve`'s proxied tools (see `session.core`)."""
        return SessionCore(
            agent,
            self.toolings,
            policy,
            audit=self.audit,
            validator=self.validator,
            approver=self.approver,
            pins=self.pins,
        )

    def _key(self, key: str) -> str:
        """`[host]` key `key` as messages name it: with the file that sets it, when there is one."""
        return f"{key} in {self.config.host.origin}" if self.config.source is not None else f"[host] {key}"

    def _new_session(
        self,
        kind: type[_S],
        agent: str,
        policy: AgentPolicy,
        on_log: LogSink | None = None,
        audit_budget: AuditBudget | None = None,
        *,
        charged: AuditBudget | None = None,
    ) -> _S:
        """A session of `kind` for one run of `agent`, its audit lines charged to a budget of its own
        (`[host] audit_run_max`) drawn from `audit_budget` too (a `serve` client's allowance); to
        `charged` alone when given."""
        limits = self.config.host
        key = self._key("max_pending_bytes")
        inbox = Inbox(limits.inbox_size, limits.max_open_calls, limits.max_subscriptions, limits.max_pending_bytes, key)
        budget = charged or run_budget(agent, limits.audit_run_max, self._key("audit_run_max"), audit_budget)
        return kind(
            agent,
            self.bridge,
            self.toolings,
            policy,
            inbox=inbox,
            max_wait=limits.recv_timeout,
            audit=self.audit,
            validator=self.validator,
            approver=self.approver,
            on_log=on_log,
            pins=self.pins,
            audit_budget=budget,
            owns_audit_budget=charged is None,
            providers=self.providers,
        )

    def start(
        self,
        wasm: Path | Shipped,
        input_text: str,
        *,
        agent: str = "guest",
        policy: AgentPolicy | None = None,
        output: TextIO | None = None,
        on_log: LogSink | None = None,
        pool: InstancePool | None = None,
        audit_budget: AuditBudget | None = None,
    ) -> GuestThread:
        """Load (compiling once) and start the component in `wasm` (a file, or a component shipped
        from another machine) on its own thread, under `policy` (default: the agent's own,
        `agent_policy`). The guest's
        output lines go to `output` (default: `sys.stderr` as it is when the guest runs), its log
        lines to the host's log and to `on_log`. `pool` (from `pool()`, for this component, agent
        and policy): an instance made ahead is run when one is ready. The run's audit lines are
        charged to its own budget (`[host] audit_run_max`) and to `audit_budget` (a `serve`
        client's allowance) when given.

        Raises `ComponentError` when `wasm` cannot be loaded, `Interrupted` once `stop_all` was
        called (before or during the compile): no guest starts after a stop request."""
        what = f"starting agent {agent}"
        self.stop.check(what)
        if isinstance(wasm, Path):
            component = self.runtime.load(wasm, self.stop)
        else:
            component = self.runtime.load_shipped(wasm, self.stop)
        policy = policy if policy is not None else self.agent_policy(agent)
        with self._lock:
            self.stop.check(what)
            session = self._run_session(agent, policy, on_log, input_text, audit_budget)
            prepared = pool.take() if pool is not None and pool.serves(component, agent, policy) else None
            given = policy.guest_input(input_text)  # a code agent's runner gets its snippet in an envelope
            guest = start_guest(self.runtime, component, session, given, policy, output, prepared)
            self._running = [g for g in self._running if g.running] + [guest]
        if self.stop.stopped:  # the request came while it was starting: it makes no call
            guest.stop(self.stop.reason or "stopped")
        return guest

    def agent_component(self, agent: str) -> Path:
        """The component `[agents.NAME]` runs, built on first use (cached): its `component`, or the
        runner for a code agent (`code = "python"`: its input is a snippet). Raises `UsageError` for
        an agent the config does not define or that has neither, `BuildError` or `Interrupted`."""
        settings = self.config.agents.get(agent)
        if settings is None or not settings.runs:
            defined = ", ".join(sorted(name for name, a in self.config.agents.items() if a.runs)) or "(none)"
            what = "is not defined" if settings is None else "has no `component` and no `code`"
            raise UsageError(f"agent {agent!r} {what}", hint=f"agents with a component or code: {defined}")
        from agent_host.components.code_runners import agent_component  # builds: not on every host's import path

        return agent_component(settings, self.stop)

    def input_schema(self, wasm: Path, agent: str, policy: AgentPolicy) -> dict[str, Any] | None:
        """The JSON Schema of the input the component in `wasm` says its `run` takes (`describe`,
        world `described-agent`: a Python guest with a typed `@agent` function), when it is an
        object schema (what a tool's arguments are); None otherwise. Runs `describe` once, on an
        instance of its own under `policy`'s limits. Raises as `start` does when `wasm` cannot be loaded."""
        text = describe_alone(self.runtime, self.runtime.load(wasm, self.stop), policy, agent)
        if text is None:
            return None
        try:
            schema = json.loads(text)
        except (ValueError, RecursionError):
            logger.warning("agent %s: its describe() answered text that is not JSON; its input is taken as text", agent)
            return None
        return schema if isinstance(schema, dict) and schema.get("type") == "object" else None

    def pool(self, wasm: Path, agent: str, policy: AgentPolicy, size: int) -> InstancePool:
        """A pool of `size` instances of the component in `wasm` made ahead for `agent` under `policy`
        (see `runtime.pool`), for `start(..., pool=)`; closed with the host (its instances discarded).
        Raises as `start` does when `wasm` cannot be loaded."""
        made = InstancePool(self.runtime, self.runtime.load(wasm, self.stop), policy, agent, size)
        with self._lock:
            self._pools.append(made)
        return made

    def _run_session(
        self,
        agent: str,
        policy: AgentPolicy,
        on_log: LogSink | None,
        input_text: str,
        audit_budget: AuditBudget | None = None,
    ) -> GuestSession:
        """The session of a guest `start` runs: recording or replaying when the host has `tapes`
        (`CassetteError` when the cassette has no tape of `agent`)."""
        if isinstance(self.tapes, Recording):
            recording = self._new_session(RecordingSession, agent, policy, on_log, audit_budget)
            recording.recorder = self.tapes.recorder(agent, input_text)
            return recording
        if isinstance(self.tapes, Playback):
            player = self.tapes.player(agent)
            replaying = self._new_session(ReplayingSession, agent, policy, on_log, audit_budget)
            replaying.player = player
            return replaying
        return self._new_session(GuestSession, agent, policy, on_log, audit_budget)

    def run(
        self,
        wasm: Path,
        input_text: str,
        *,
        agent: str = "guest",
        policy: AgentPolicy | None = None,
        output: TextIO | None = None,
    ) -> RunResult:
        """Run a guest to completion (see `start`)."""
        return self.wait(self.start(wasm, input_text, agent=agent, policy=policy, output=output))

    def wait(self, guest: GuestThread, on_wait: Callable[[GuestThread], None] | None = None) -> RunResult:
        """Wait for `guest` to finish and return its outcome (polling every `JOIN_POLL` seconds;
        `on_wait(guest)` is called at each poll, on this thread)."""
        while True:
            outcome = guest.join(JOIN_POLL)
            if outcome is not None:
                return outcome
            if on_wait is not None:
                on_wait(guest)

    @property
    def running_agents(self) -> list[str]:
        """The agents of the guests running now, their outcome still to come (from any thread)."""
        with self._lock:
            return [guest.agent for guest in self._running if guest.deciding]

    def stop_all(self, reason: str, signum: int | None = None) -> None:
        """Stop every running guest and start no other (from any thread; the command line calls it on
        SIGINT/SIGTERM).

        A running guest's waits in the host end, its running wasm traps within one time slice, and
        what it opened is cancelled upstream as its run ends. Sets the host's `StopToken` (with
        `reason` and `signum`): a compile in progress is ended and `start` raises `Interrupted`.
        """
        self.stop.stop(reason, signum)
        with self._lock:
            running = list(self._running)
        for guest in running:
            guest.stop(reason)

    def close(self) -> None:
        """Shut everything down; idempotent.

        In this order: guests still running are stopped and waited for (at most `CLOSE_WAIT`
        seconds in all: each removes its temporary folder as it ends); every tooling connection and
        every provider is closed concurrently on the loop (stdio children exit or are killed) and the loop stops; the
        runtime's epoch ticker stops; the audit log is closed; the log folder is removed (kept, and
        its path logged, with `keep_logs=True`).
        """
        if self._closed:
            return
        self._closed = True
        try:
            for made in self._pools:
                made.close()
            self._end_guests()
            self.bridge.close(self._close_connections)
        finally:
            if self._runtime is not None:
                self._runtime.close()
            if self.audit is not None:
                self.audit.close()
            if self._keep_logs:
                logger.info("server logs kept in %s", self.log_dir)
            else:
                shutil.rmtree(self.log_dir, ignore_errors=True)

    async def _close_connections(self) -> None:
        """Close every tooling connection and every provider, concurrently (on the loop)."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.toolings.aclose)
            group.start_soon(self.providers.aclose)

    def _end_guests(self) -> None:
        with self._lock:
            running = [guest for guest in self._running if guest.running]
        for guest in running:
            guest.stop(self.stop.reason or "the host is closing")
        deadline = time.monotonic() + CLOSE_WAIT
        for guest in running:
            try:
                guest.join(max(0.0, deadline - time.monotonic()))
            except (KeyboardInterrupt, SystemExit):  # relayed from the guest's thread: it has ended
                pass
            if not guest.abandoned:  # its thread frees its instance after the outcome: before the runtime closes
                guest.ended(max(0.0, deadline - time.monotonic()))
        left = [guest.agent for guest in running if guest.running]
        if left:
            logger.warning("guests still running at exit (not stopped within %s s): %s", CLOSE_WAIT, ", ".join(left))

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
