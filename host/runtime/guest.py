"""Running one guest: its own thread, its own `Store`, deny-all WASI, captured output.

Contract:
- `start_guest(...)` runs the guest's `run(input)` on a new thread named `guest-<agent>` and
  returns a `GuestThread`; `join()` gives its `Outcome`. Nothing the guest does raises in the
  host: every failure becomes an `Outcome` (`ok`, `error` for `run` returning `err`, `trap`).
- Every wasmtime call for the store happens on that thread. The store gets a WASI context with
  no environment, no arguments, no preopened directories and no network; the guest's stdout and
  stderr go to files in a private temp folder, forwarded line by line to the host's stderr with
  the prefix `[NAME] ` (the agent's name) while it runs (never to the host's stdout, which carries the answer).
- The WASI context denies everything but what the agent's policy opts in to: preopened
  directories (read-only unless marked writable) and named environment variables. No sockets.
- Memory is limited by the policy's `memory` bytes (past it the guest sees `MemoryError`); CPU
  time, wall-clock time and stop requests by a `RunGuard` (the guest traps with the reason).
- `GuestThread.stop(reason)` stops a running guest from any thread: waits in the host end at
  once (`session.interrupt`) and running wasm traps at its next time slice.
- A trap is reported with its reason: the wasm trap message, plus the last line of the guest's
  stderr when a Python exception caused it. A host function failure is reported as such;
  `KeyboardInterrupt`/`SystemExit` raised in a host function is re-raised by `join()`.
- When the guest ends, however it ends, `session.close()` runs and the temp folder is removed.
"""

from __future__ import annotations

import logging
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TextIO

from wasmtime import Store, WasiConfig, WasmtimeError
from wasmtime.component import Component

from host import status_codes
from host.config import format_size
from host.errors import ToolingError
from host.policy import AgentPolicy
from host.runtime import thread_state, wit_values
from host.runtime.engine import Runtime
from host.runtime.run_guard import RunGuard
from host.session import GuestSession

logger = logging.getLogger(__name__)

FORWARD_INTERVAL: Final = 0.05
"""Seconds between polls of the guest's output files."""

Status = Literal["ok", "error", "trap"]

_EXIT_CODES: Final[dict[str, int]] = {
    "ok": status_codes.SUCCESS,
    "error": status_codes.GUEST_ERROR,
    "trap": status_codes.TRAP,
}


@dataclass(frozen=True)
class Outcome:
    """How a guest run ended (or, for a guest that never started, why not)."""

    agent: str
    status: str
    """`ok`, `error` or `trap` for a run; for a guest that could not start, the `reference` of the
    host error that stopped it (`build-error`, `component-error`, `interrupted`, ...)."""
    text: str
    """`run`'s answer (ok), its error string (error), the trap reason (trap), or the host error."""
    duration: float
    inbox_peak: int = 0
    """Most envelopes the guest's inbox held at once."""
    code: int | None = None
    """The exit code, when `status` is not one of a run's (`_EXIT_CODES`)."""

    @property
    def exit_code(self) -> int:
        return self.code if self.code is not None else _EXIT_CODES[self.status]


class _Control:
    """What another thread needs to stop a running guest."""

    def __init__(self, session: GuestSession) -> None:
        self.session = session
        self.guard: RunGuard | None = None
        self.stop_reason: str | None = None
        self.lock = threading.Lock()

    def attach(self, guard: RunGuard) -> None:
        with self.lock:
            self.guard = guard
            if self.stop_reason is not None:
                guard.stop(self.stop_reason)

    def stop(self, reason: str) -> None:
        with self.lock:
            self.stop_reason = reason
            if self.guard is not None:
                self.guard.stop(reason)
        self.session.interrupt(reason)


class GuestThread:
    """A guest running on its own thread."""

    def __init__(
        self, thread: threading.Thread, result: list[Outcome], relay: list[BaseException], control: _Control
    ) -> None:
        self._thread = thread
        self._result = result
        self._relay = relay
        self._control = control
        self.agent = control.session.agent

    def stop(self, reason: str) -> None:
        """Stop the guest as soon as possible; its outcome will be a trap with `reason`."""
        self._control.stop(reason)

    def join(self, timeout: float | None = None) -> Outcome | None:
        """The outcome, or None if the guest is still running after `timeout` seconds."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            return None
        if self._relay:
            raise self._relay[0]
        return self._result[0]

    @property
    def running(self) -> bool:
        return self._thread.is_alive()


def start_guest(
    runtime: Runtime,
    component: Component,
    session: GuestSession,
    input_text: str,
    policy: AgentPolicy,
    output: TextIO | None = None,
) -> GuestThread:
    result: list[Outcome] = []
    relay: list[BaseException] = []
    control = _Control(session)

    def body() -> None:
        try:
            result.append(run_guest(runtime, component, session, input_text, policy, output, control))
        except (KeyboardInterrupt, SystemExit) as exc:
            relay.append(exc)
        except BaseException as exc:  # boundary: a host bug in one guest must not take down the host
            logger.exception("internal error running agent %s", session.agent)
            result.append(Outcome(session.agent, "trap", f"internal host error: {type(exc).__name__}: {exc}", 0.0))

    thread = threading.Thread(target=body, name=f"guest-{session.agent}", daemon=True)
    thread.start()
    return GuestThread(thread, result, relay, control)


def run_guest(
    runtime: Runtime,
    component: Component,
    session: GuestSession,
    input_text: str,
    policy: AgentPolicy,
    output: TextIO | None = None,
    control: _Control | None = None,
) -> Outcome:
    """Run the guest on the current thread (see the module docstring)."""
    agent = session.agent
    start = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix=f"agent-host-{agent}-"))
    out_path, err_path = workdir / "stdout", workdir / "stderr"
    forwarder = _Forwarder(agent, [out_path, err_path], output or sys.stderr)
    store = Store(runtime.engine)
    try:
        store.set_wasi(_wasi(policy, out_path, err_path))
        store.set_limits(memory_size=int(policy.limits.memory.value))
        guard = RunGuard(store, cpu_time=policy.limits.cpu_time, wall_time=policy.limits.wall_time)
        session.deadline = guard.started + policy.limits.wall_time.value
        if control is not None:
            control.attach(guard)
        forwarder.start()
        with thread_state.running(session, guard):
            status, text = _call_run(runtime, component, store, input_text, guard, err_path, session, policy)
    finally:
        session.close()
        forwarder.stop()
        store.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return Outcome(agent, status, text, time.monotonic() - start, session.inbox.peak)


def _wasi(policy: AgentPolicy, out_path: Path, err_path: Path) -> WasiConfig:
    """Deny-all WASI plus the policy's directories and environment; output to files."""
    wasi = WasiConfig()
    wasi.stdout_file = str(out_path)
    wasi.stderr_file = str(err_path)
    for grant in policy.dirs:
        wasi.preopen_dir(str(grant.host), grant.guest, fs_mutable=grant.writable)
    if policy.env:
        wasi.env = list(policy.env.items())
    return wasi


def _call_run(
    runtime: Runtime,
    component: Component,
    store: Store,
    input_text: str,
    guard: RunGuard,
    err_path: Path,
    session: GuestSession,
    policy: AgentPolicy,
) -> tuple[Status, str]:
    try:
        with runtime.instantiate_lock:
            instance = runtime.linker.instantiate(store, component)
    except WasmtimeError as exc:
        return "trap", (
            f"the component cannot be instantiated: {_reason(str(exc))} "
            "(was it built against agent-host's WIT world `agent`? `agent-host wit` prints it)"
        )
    run = instance.get_func(store, "run")
    if run is None:
        return "trap", "the component does not export `run`; build it against agent-host's WIT world `agent`"
    try:
        value = run(store, input_text)
        run.post_return(store)
    except WasmtimeError as exc:
        relayed = thread_state.take_exception()
        if isinstance(relayed, KeyboardInterrupt | SystemExit):
            raise relayed from None
        if relayed is not None:
            return "trap", f"host error: {type(relayed).__name__}: {relayed}"
        if guard.reason is not None:
            return "trap", guard.reason
        return "trap", trap_reason(str(exc), err_path, session.last_error, policy)
    relayed = thread_state.take_exception()
    if isinstance(relayed, KeyboardInterrupt | SystemExit):
        raise relayed
    ok, text = wit_values.run_result(value)
    return ("ok" if ok else "error"), text


def _reason(message: str) -> str:
    """The innermost cause of a wasmtime error: the last line after `Caused by:`."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if "Caused by:" in lines:
        tail = lines[lines.index("Caused by:") + 1 :]
        if tail:
            return tail[-1].split(": ", 1)[-1] if tail[-1][:1].isdigit() else tail[-1]
    return lines[0] if lines else "unknown trap"


def trap_reason(message: str, err_path: Path, last_error: ToolingError | None, policy: AgentPolicy) -> str:
    """Why the guest trapped, for a person: the Python exception it died of (a known one, such as
    running out of memory, explained by `_EXCEPTION_REASONS`), else the wasm trap message plus the
    last error a host import returned to it (the likely cause when a guest not built by
    `agent-host build` lets an `Err` escape `run`)."""
    reason = _reason(message)
    raised = _guest_exception(err_path)
    if raised is not None:
        kind, detail = raised
        explain = _EXCEPTION_REASONS.get(kind)
        if explain is not None:
            return explain(detail, policy)
        return f"the guest raised {kind}{': ' + detail if detail else ''} ({reason})"
    if last_error is not None:
        return (
            f"{reason}; the last error the host returned to the guest was {last_error} "
            "(an `Err` that escapes run() traps a guest not built by `agent-host build`)"
        )
    return reason


def _out_of_memory(detail: str, policy: AgentPolicy) -> str:
    limit = policy.limits.memory
    where = f" ({detail})" if detail else ""
    return (
        f"memory limit: the guest ran out of memory at {format_size(int(limit.value))}{where}; the limit is {limit.key}"
    )


_EXCEPTION_REASONS: Final[dict[str, Callable[[str, AgentPolicy], str]]] = {"MemoryError": _out_of_memory}
"""Python exceptions a guest dies of that a limit of the host explains, by exception type name."""

_TRACEBACK: Final = "Traceback (most recent call last):"
_DUMP_TYPE: Final = re.compile(r"^object type name: (\w+)\s*$", re.MULTILINE)
"""CPython's fatal object dump (printed when it cannot even format the traceback)."""


def _guest_exception(err_path: Path) -> tuple[str, str] | None:
    """(type name, message) of the exception ending the last Python traceback on the guest's stderr."""
    try:
        text = err_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if _TRACEBACK not in text:
        return None
    after = text[text.rindex(_TRACEBACK) + len(_TRACEBACK) :]
    dump = _DUMP_TYPE.search(after)
    if dump is not None:
        return dump.group(1), ""
    line = next((line for line in after.splitlines() if line.strip() and not line[:1].isspace()), None)
    if line is None:
        return None
    kind, _, detail = line.strip().partition(": ")
    return kind, detail


class _Forwarder:
    """Copies complete lines from the guest's output files to the host's stderr, prefixed."""

    def __init__(self, agent: str, paths: list[Path], sink: TextIO) -> None:
        self._prefix = f"[{agent}] "
        self._paths = paths
        self._offsets = dict.fromkeys(paths, 0)
        self._partial = dict.fromkeys(paths, b"")
        self._sink = sink
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"output-{agent}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(FORWARD_INTERVAL):
            self._pump(final=False)

    def stop(self) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()
        self._pump(final=True)

    def _pump(self, *, final: bool) -> None:
        for path in self._paths:
            try:
                with path.open("rb") as handle:
                    handle.seek(self._offsets[path])
                    chunk = handle.read()
            except OSError:
                continue
            self._offsets[path] += len(chunk)
            lines = (self._partial[path] + chunk).split(b"\n")
            tail = lines.pop()
            if final and tail:
                lines.append(tail)
                tail = b""
            self._partial[path] = tail
            for line in lines:
                self._sink.write(f"{self._prefix}{line.decode('utf-8', errors='replace')}\n")
            if lines:
                self._sink.flush()
