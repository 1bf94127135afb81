"""Running one guest: its own thread, its own `Store`, deny-all WASI, captured output.

Every wasmtime call for a store happens on its guest's thread. WASI denies what the policy does not
opt in to (preopened folders, named environment variables; never sockets); stdout and stderr go to
files of the run in the process's private temp folder (made at the first write), forwarded by
`output.Forwarder`. Memory is bounded by a `memory_limit.MemoryBudget` (the guest sees a failed
growth); CPU and wall-clock time, stop requests and the descriptors it holds through its folders
(`descriptors.Watch`) by a `RunGuard`. Every ending is a `RunResult` decided from host state only
(`_call_run`): the guest's own text (stderr, `Err`) is quoted as its words, never used to pick the
status, the exit code or a limit. Only `KeyboardInterrupt`/`SystemExit` from a host function is
re-raised (by `GuestThread.join`); however the guest ends, `session.close()` runs and its output
files are removed.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import secrets
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TextIO

from wasmtime import Store, WasiConfig, WasmtimeError
from wasmtime.component import Component, Instance

from agent_host._support import scratch, tracing
from agent_host.errors import GuestsStuck
from agent_host.model import RunResult, RunStatus, Tripped
from agent_host.policy.grants import AgentPolicy
from agent_host.runtime import descriptors, memory_limit, thread_state, wit_values
from agent_host.runtime.engine import Runtime
from agent_host.runtime.output import Forwarder
from agent_host.runtime.output_files import CappedFile
from agent_host.runtime.run_guard import RunGuard, TripKind
from agent_host.runtime.trap_reasons import innermost, memory_limit_reason, trap_reason
from agent_host.session import GuestSession
from agent_host.session.cassette import Diverged, ReplayedTrap

logger = logging.getLogger(__name__)

LEFT_BEHIND: Final = (
    "the guest did not return from a WASI call the host cannot interrupt (a named pipe or device in a granted "
    "folder?), and was left behind"
)
"""Said of a run the host stopped waiting for (`GuestThread.join`)."""

MAX_TABLE_ELEMENTS: Final = 100_000
"""Elements one table of a guest may hold (~0.8 MB; a componentize-py or componentize-js guest starts
with under 10,000): tables are not linear memory, so the memory limit does not bound them."""

MAX_TABLES: Final = 16
"""Tables of one guest (those guests have under 8)."""

MAX_MEMORIES: Final = 16
"""Linear memories of one guest (those guests have under 4); together within the memory limit."""

MAX_INSTANCES: Final = 256
"""Core and component instances of one guest (those guests have under 32)."""

ABANDON_AFTER: Final = 2.0
"""Seconds a run may go on past its stop request or its wall-clock deadline before the host stops
waiting for its thread: a guest blocked in a WASI call that no check reaches (reading a named pipe
in a granted folder) is abandoned, and its run ends with the stop's or the limit's outcome."""

MAX_ABANDONED: Final = 16
"""Abandoned guest threads one process keeps at most (each holds its store and linear memory until
its WASI call returns); while this many are left, no guest starts (`GuestsStuck`)."""

_abandoned: set[threading.Thread] = set()
_abandoned_lock = threading.Lock()


def abandoned_count() -> int:
    """Guest threads abandoned (`ABANDON_AFTER`) and still blocked, in this process."""
    with _abandoned_lock:
        _abandoned.difference_update([thread for thread in _abandoned if not thread.is_alive()])
        return len(_abandoned)


class _Control:
    """What another thread needs to stop a running guest, and to give up on one that does not end."""

    def __init__(self, session: GuestSession) -> None:
        self.session = session
        self.guard: RunGuard | None = None
        self.stop_reason: str | None = None
        self.stopped_at: float | None = None
        self.lock = threading.Lock()

    def attach(self, guard: RunGuard) -> None:
        with self.lock:
            self.guard = guard
            if self.stop_reason is not None:
                guard.stop(self.stop_reason)

    def stop(self, reason: str) -> None:
        with self.lock:
            if self.stop_reason is None:
                self.stop_reason, self.stopped_at = reason, time.monotonic()
            if self.guard is not None:
                self.guard.stop(reason)
        self.session.interrupt(reason)

    def give_up_at(self) -> float | None:
        """When (`time.monotonic`) to stop waiting for the guest: `ABANDON_AFTER` past its stop
        request or its wall-clock deadline, whichever comes first; None before either is known."""
        with self.lock:
            times = [self.stopped_at] if self.stopped_at is not None else []
            if self.guard is not None:
                times.append(self.guard.deadline)
        return min(times) + ABANDON_AFTER if times else None

    def verdict(self) -> tuple[TripKind, str]:
        """Why a run given up on ended (`RunGuard.overdue`; a stop before it had a guard: that stop)."""
        with self.lock:
            guard, reason = self.guard, self.stop_reason
        found = guard.overdue() if guard is not None else None
        if found is not None:
            return found
        return "stopped", f"stopped by the host: {reason or 'stopped'}"


JOIN_SLICE: Final = 0.1
"""Seconds between looks at a stop request while `GuestThread.join` waits without a timeout."""


class GuestThread:
    """A guest running on its own thread; `join` gives its outcome, and gives up on a guest blocked
    past its stop or deadline where no check reaches it (`ABANDON_AFTER`). The outcome is given as
    soon as it is known: the thread then frees the instance (its store, memory and output files),
    off the caller's path; `ended` waits for that too."""

    def __init__(
        self,
        thread: threading.Thread,
        result: list[RunResult],
        relay: list[BaseException],
        control: _Control,
        known: threading.Event,
    ) -> None:
        self._thread = thread
        self._known = known
        self._result = result
        self._relay = relay
        self._control = control
        self._started = time.monotonic()
        self._given_up: RunResult | None = None
        self._give_up_lock = threading.Lock()
        self.agent = control.session.agent

    def stop(self, reason: str) -> None:
        """Stop the guest as soon as possible, from any thread: its waits in the host end at once
        (`session.interrupt`) and running wasm traps at its next time slice; its outcome will be a
        trap with `reason`."""
        self._control.stop(reason)

    def join(self, timeout: float | None = None) -> RunResult | None:
        """The outcome, or None if the guest is still running after `timeout` seconds. Re-raises a
        `KeyboardInterrupt`/`SystemExit` that a host function raised on the guest's thread.

        A guest still running `ABANDON_AFTER` seconds past its stop request or wall-clock deadline is
        blocked where no check reaches it: its run ends then (`trap`, the stop or the limit, saying
        it was left behind), its session is closed (what it opened is cancelled upstream), and its
        thread is abandoned, holding its store until its WASI call returns (`MAX_ABANDONED`)."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._given_up is not None:
                return self._given_up
            now = time.monotonic()
            give_up = self._control.give_up_at()
            wake = min(t for t in (end, give_up, now + JOIN_SLICE) if t is not None)
            if self._known.wait(max(0.0, wake - now)) or not self._thread.is_alive():
                break
            now = time.monotonic()
            if give_up is not None and now >= give_up:
                return self._give_up()
            if end is not None and now >= end:
                return None
        if self._relay:
            raise self._relay[0]
        return self._result[0]

    def _give_up(self) -> RunResult:
        with self._give_up_lock:
            if self._given_up is None:
                tripped, reason = self._control.verdict()
                self._control.stop(reason)
                self._control.session.close()
                with _abandoned_lock:
                    _abandoned.add(self._thread)
                logger.warning(
                    "agent %s: its thread is left behind, blocked in a WASI call (%d in this process)",
                    self.agent,
                    abandoned_count(),
                )
                text = f"{reason}; {LEFT_BEHIND}"
                duration = time.monotonic() - self._started
                self._given_up = RunResult(self.agent, RunStatus.TRAP, text, duration, tripped=tripped)
            return self._given_up

    @property
    def running(self) -> bool:
        """Whether its thread runs (freeing its instance after the outcome too) and was not given up on (`join`)."""
        return self._thread.is_alive() and self._given_up is None

    @property
    def deciding(self) -> bool:
        """Whether its outcome is still to come (`running`, less the moment its thread frees its instance)."""
        return self.running and not self._known.is_set()

    def usage(self) -> str | None:
        """From any thread, for a person: its CPU and wall-clock time against their limits
        (`RunGuard.usage`); None before its run began."""
        guard = self._control.guard
        return guard.usage() if guard is not None else None

    def ended(self, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds for the guest's thread itself to end (one given up on too:
        once its WASI call returns, it frees its store and temp folder); whether it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def abandoned(self) -> bool:
        """Whether `join` gave up on it (its thread may still be blocked)."""
        return self._given_up is not None


def start_guest(
    runtime: Runtime,
    component: Component,
    session: GuestSession,
    input_text: str,
    policy: AgentPolicy,
    output: TextIO | None = None,
    prepared: Prepared | None = None,
) -> GuestThread:
    """Run the guest's `run(input_text)` on a new thread named `guest-<agent>`; `join()` gives its
    `RunResult`: `ok`, `error` (`run` returned `err`) or `trap` (with its reason: the wasm trap, the
    Python exception the guest died of, a limit, or a host function's failure). `prepared`: an
    instance made ahead for this agent and policy (else one is made on that thread)."""
    stuck = abandoned_count()
    if stuck >= MAX_ABANDONED:
        raise GuestsStuck(
            f"agent {session.agent} not started: {stuck} guests of this process are blocked in WASI calls "
            f"the host cannot interrupt (at most {MAX_ABANDONED})",
            hint="a granted folder holds a named pipe or device a guest reads; restart agent-host, and grant folders "
            "of regular files only",
        )
    result: list[RunResult] = []
    relay: list[BaseException] = []
    control = _Control(session)
    known = threading.Event()
    freeing: list[Prepared] = []

    def body() -> None:
        try:
            run = run_guest(runtime, component, session, input_text, policy, output, control, prepared, freeing)
            result.append(run)
        except (KeyboardInterrupt, SystemExit) as exc:
            relay.append(exc)
        except BaseException as exc:  # boundary: a host bug in one guest must not take down the host
            logger.exception("internal error running agent %s", session.agent)
            result.append(
                RunResult(session.agent, RunStatus.TRAP, f"internal host error: {type(exc).__name__}: {exc}", 0.0)
            )
        finally:
            known.set()  # the outcome is known: `join` returns it while this thread frees the instance
            for ran in freeing:
                ran.discard()

    # in the context it is started from: its spans join the caller's trace, and its calls (the bridge
    # gives each coroutine its caller's context) carry it upstream
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(body,), name=f"guest-{session.agent}", daemon=True)
    thread.start()
    return GuestThread(thread, result, relay, control, known)


@dataclass
class Prepared:
    """A component instantiated for one agent's policy and never run: everything `run_guest` needs
    before calling `run` (its output files, store, memory budget, guard and instance,
    or why it could not be instantiated). Made by `prepare` on any thread (`pool.InstancePool` makes
    them ahead); run once by `run_guest`, which discards it, or `discard`ed unused."""

    agent: str
    policy: AgentPolicy
    outputs: list[CappedFile]
    store: Store
    files: descriptors.Watch | None
    budget: memory_limit.MemoryBudget
    guard: RunGuard
    instance: Instance | None
    failure: tuple[RunStatus, str, Tripped | None] | None
    """How a run of it ends at once: it could not be instantiated (None: `instance` is set)."""

    def discard(self) -> None:
        """Free what it holds: its store (and linear memory), descriptor watch, output files."""
        _free(self.store, self.files, self.outputs)


def _free(store: Store, files: descriptors.Watch | None, outputs: list[CappedFile]) -> None:
    store.close()
    if files is not None:
        files.close()
    for capped in outputs:
        capped.close()


def prepare(
    runtime: Runtime,
    component: Component,
    policy: AgentPolicy,
    agent: str,
    session: GuestSession | None = None,
    on_guard: Callable[[RunGuard], None] | None = None,
) -> Prepared:
    """`component` instantiated under `policy` for `agent`, its memory within the policy's limit and
    its start code timed by its own `RunGuard` (on this thread; the run restarts the guard's clocks).
    `session`: the guest's, when it is known already (its host functions then serve the start code);
    `on_guard` is given the guard before the start code runs (a stop request ends it)."""
    named = scratch.folder() / f"guest-{secrets.token_hex(8)}"  # the process's own folder (0700): names all ours
    files = descriptors.watch(policy.dirs, policy.limits.open_files)  # before WASI opens the folders
    budget = memory_limit.MemoryBudget(int(policy.limits.memory.value))
    store = Store(runtime.engine)
    outputs: list[CappedFile] = []
    try:
        outputs += [
            CappedFile(named.with_suffix(f".{stream}"), policy.limits.guest_output, agent=agent, stream=stream)
            for stream in ("stdout", "stderr")
        ]
        store.set_wasi(_wasi(policy, *outputs))
        memory_size = -1 if memory_limit.INSTALLED_BY_DEFAULT else budget.limit  # else refusals unseen
        store.set_limits(
            memory_size=memory_size,
            table_elements=MAX_TABLE_ELEMENTS,
            tables=MAX_TABLES,
            instances=MAX_INSTANCES,
            memories=MAX_MEMORIES,
        )
        guard = RunGuard(store, cpu_time=policy.limits.cpu_time, wall_time=policy.limits.wall_time, files=files)
        if on_guard is not None:
            on_guard(guard)
        bound = thread_state.running(session, guard) if session is not None else contextlib.nullcontext()
        with bound, memory_limit.active(budget):
            instance, failure = _instantiate(runtime, component, store, budget, policy, guard)
    except BaseException:
        _free(store, files, outputs)
        raise
    return Prepared(agent, policy, outputs, store, files, budget, guard, instance, failure)


def _instantiate(
    runtime: Runtime,
    component: Component,
    store: Store,
    budget: memory_limit.MemoryBudget,
    policy: AgentPolicy,
    guard: RunGuard,
) -> tuple[Instance | None, tuple[RunStatus, str, Tripped | None] | None]:
    """The instance, or how a run ends when there is none (decided from host state, as `_call_run`:
    a limit or stop its start code ran into, a memory growth refused, else the trap)."""
    try:
        return runtime.instantiate(store, component), None
    except WasmtimeError as exc:
        tripped = guard.after_trap()
        if tripped is not None:  # its start code ran into a limit or a stop
            return None, (RunStatus.TRAP, f"{tripped} (in the component's start code)", guard.tripped)
        if budget.refused is not None:
            return None, (RunStatus.TRAP, memory_limit_reason(policy), "memory")
        reason = (
            f"the component cannot be instantiated: {innermost(str(exc))} "
            "(was it built against agent-host's WIT world `agent`? `agent-host wit` prints it)"
        )
        return None, (RunStatus.TRAP, reason, None)


def run_guest(
    runtime: Runtime,
    component: Component,
    session: GuestSession,
    input_text: str,
    policy: AgentPolicy,
    output: TextIO | None = None,
    control: _Control | None = None,
    prepared: Prepared | None = None,
    freeing: list[Prepared] | None = None,
) -> RunResult:
    """Run the guest on the current thread (see the module docstring): `prepared` (made ahead for
    this agent and policy), else an instance prepared now. The instance is discarded before this
    returns, or, with `freeing`, put there for the caller to discard once the outcome is given."""
    agent = session.agent
    start = time.monotonic()
    forwarder: Forwarder | None = None
    error_code: str | None = None
    status, tripped = RunStatus.TRAP, None
    traced = tracing.start(
        f"invoke_agent {agent}", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
    )
    try:
        if prepared is None:
            on_guard = control.attach if control is not None else None  # a stop or deadline ends start code
            prepared = prepare(runtime, component, policy, agent, session, on_guard)
        guard, files = prepared.guard, prepared.files
        guard.begin()
        session.deadline = guard.deadline
        if files is not None:  # the watcher stops a guest that sleeps or waits past a descriptor bound
            files.on_over(functools.partial(_stop_for_files, guard, session))
        if control is not None:
            control.attach(guard)
        forwarder = Forwarder(agent, prepared.outputs, output or sys.stderr)
        forwarder.start()
        with thread_state.running(session, guard), memory_limit.active(prepared.budget):
            status, text, tripped = _call_run(runtime, prepared, input_text, session, policy)
        if status != "diverged" and (why := session.ended(status, text, tripped)) is not None:
            status, text, tripped = RunStatus.DIVERGED, str(Diverged(agent, why)), None
        if status is RunStatus.ERROR:
            returned = session.returned_error(text)
            error_code = returned.code.value if returned is not None else None
    finally:
        session.close()
        _traced_end(traced, status, tripped, error_code)
        if forwarder is not None:
            forwarder.stop()
        if prepared is not None:
            if freeing is not None:
                freeing.append(prepared)
            else:
                prepared.discard()
    duration = time.monotonic() - start
    usage = session.providers.budget.used
    return RunResult(
        agent, status, text, duration, session.inbox.peak, tripped=tripped, error_code=error_code, usage=usage
    )


def _traced_end(traced: tracing.Started, status: RunStatus, tripped: Tripped | None, code: str | None) -> None:
    """End a run's span: its status, and what failed it (`error.type`: the limit, the error code, the status)."""
    span, _ = traced
    if span is not None and span.is_recording():
        span.set_attribute("agent_host.run.status", str(status))
        if status != RunStatus.OK:
            tracing.failed(span, tripped or code or str(status))
    tracing.finish(*traced)


def run_alone(
    runtime: Runtime, component: Component, input_text: str, policy: AgentPolicy, agent: str
) -> tuple[RunStatus, str]:
    """`run(input_text)` of `component` on the current thread with no session, under `policy`'s
    limits and WASI: for a component that calls no host function (the dev runner checking a guest's
    syntax, `components.syntax`); one it calls fails, and the run traps. Its output is dropped.
    Returns how the run ended (as `run_guest` decides it) and its text."""
    prepared = prepare(runtime, component, policy, agent)
    try:
        prepared.guard.begin()
        with memory_limit.active(prepared.budget):
            status, text, _ = _call_run(runtime, prepared, input_text, None, policy)
    finally:
        prepared.discard()
    return status, text


MAX_DESCRIPTION: Final = 256 * 1024
"""Characters of a component's `describe` answer the host keeps (a longer one is taken as none)."""


def describe_alone(runtime: Runtime, component: Component, policy: AgentPolicy, agent: str) -> str | None:
    """What `describe` answers (world `described-agent`: the JSON Schema, as text, of the input
    `run` takes), called on an instance of its own under `policy`'s limits and no session; None when
    the component exports no `describe`, answers none, answers more than `MAX_DESCRIPTION`
    characters, or traps (the trap is logged)."""
    prepared = prepare(runtime, component, policy, agent)
    try:
        instance = prepared.instance
        describe = instance.get_func(prepared.store, "describe") if instance is not None else None
        if describe is None:
            return None
        prepared.guard.begin()
        with memory_limit.active(prepared.budget):
            try:
                with runtime.clock.started(prepared.store, prepared.guard):
                    value = describe(prepared.store)
                    describe.post_return(prepared.store)
            except WasmtimeError as exc:
                relayed = thread_state.take_exception()
                if isinstance(relayed, KeyboardInterrupt | SystemExit):
                    raise relayed from None
                logger.warning("agent %s: its describe() trapped; its input is taken as text: %s", agent, exc)
                return None
    finally:
        prepared.discard()
    return value if isinstance(value, str) and len(value) <= MAX_DESCRIPTION else None


def _stop_for_files(guard: RunGuard, session: GuestSession, reason: str) -> None:
    """From the descriptor watcher's thread: the run traps with `reason` (`open_files`); its waits end."""
    guard.stop(reason, "open_files")
    session.interrupt(reason)


def _wasi(policy: AgentPolicy, stdout: CappedFile, stderr: CappedFile) -> WasiConfig:
    """Deny-all WASI plus the policy's directories and environment; output to bounded files."""
    wasi = WasiConfig()
    wasi.stdout_custom = stdout
    wasi.stderr_custom = stderr
    for grant in policy.dirs:
        wasi.preopen_dir(str(grant.host), grant.guest, fs_mutable=grant.writable)
    if policy.env:
        wasi.env = list(policy.env.items())
    return wasi


def _call_run(
    runtime: Runtime, prepared: Prepared, input_text: str, session: GuestSession | None, policy: AgentPolicy
) -> tuple[RunStatus, str, Tripped | None]:
    """How `run` ended, decided from host state only, in this order: a stop or a limit of the
    `RunGuard`, a host function's failure, a memory growth the host refused (then a trap or an `err`
    is the memory limit), the wasm trap. `run`'s `err` carries an error code only when its text is
    an error the host returned to this guest (`GuestSession.returned_error`)."""
    if prepared.failure is not None:
        return prepared.failure
    store, guard, budget, instance = prepared.store, prepared.guard, prepared.budget, prepared.instance
    err_path = prepared.outputs[1].path
    assert instance is not None, "a prepared instance without a failure"
    run = instance.get_func(store, "run")
    if run is None:
        return (
            RunStatus.TRAP,
            "the component does not export `run`; build it against agent-host's WIT world `agent`",
            None,
        )
    try:
        with runtime.clock.started(store, guard):
            value = run(store, input_text)
            run.post_return(store)
    except WasmtimeError as exc:
        relayed = thread_state.take_exception()
        if isinstance(relayed, KeyboardInterrupt | SystemExit):
            raise relayed from None
        if isinstance(relayed, Diverged):  # raised by the host's own replay, never by the guest
            return RunStatus.DIVERGED, str(relayed), None
        if isinstance(relayed, ReplayedTrap):  # the replay ends where the host ended the recorded run
            return RunStatus.TRAP, relayed.text, relayed.tripped  # type: ignore[return-value]  # one of Tripped
        tripped = guard.after_trap()
        if tripped is not None:  # the guard made it trap, in the guest or in wasm a host function ran
            return RunStatus.TRAP, tripped, guard.tripped
        if relayed is not None:
            return RunStatus.TRAP, f"host error: {type(relayed).__name__}: {relayed}", None
        if budget.refused is not None:
            return RunStatus.TRAP, memory_limit_reason(policy, err_path, str(exc)), "memory"
        last_error = session.last_error if session is not None else None
        return RunStatus.TRAP, trap_reason(str(exc), err_path, last_error), None
    relayed = thread_state.take_exception()
    if isinstance(relayed, KeyboardInterrupt | SystemExit):
        raise relayed
    ok, text = wit_values.run_result(value)
    if ok:
        return RunStatus.OK, text, None
    if budget.refused is not None:  # the guest caught the failed growth and gave up (as JavaScript does)
        return RunStatus.TRAP, f"{memory_limit_reason(policy, err_path)}; run() then returned err: {text}", "memory"
    return RunStatus.ERROR, text, None
