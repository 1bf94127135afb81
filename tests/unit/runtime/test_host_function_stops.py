"""A host function that returns once the run was stopped traps the guest instead of handing it the
result (`thread_state.host_function`, `RunGuard.halted`): a stop that ends a guest's wait must not
let the guest finish its run `ok` before the next slice's check."""

from __future__ import annotations

import pytest
from wasmtime import Engine, Store, WasmtimeError

from agent_host.policy.grants import Limit
from agent_host.runtime.compiler import engine_config
from agent_host.runtime.run_guard import RunGuard
from agent_host.runtime.thread_state import host_function, running
from agent_host.session import GuestSession


@host_function
def answer() -> str:
    return "the result"


def guarded(wall_time: float = 3600.0) -> RunGuard:
    store = Store(Engine(engine_config()))
    return RunGuard(store, cpu_time=Limit(3600.0, "cpu_time"), wall_time=Limit(wall_time, "timeout"))


def test_a_host_function_returns_its_result_while_the_run_goes_on(session: GuestSession) -> None:
    guard = guarded()
    with running(session, guard):
        assert answer() == "the result"
    assert guard.tripped is None


def test_a_host_function_returning_after_a_stop_traps_with_the_stop(session: GuestSession) -> None:
    guard = guarded()
    with running(session, guard):
        guard.stop("the test is done")
        with pytest.raises(WasmtimeError, match="stopped by the host: the test is done"):
            answer()
    assert (guard.tripped, guard.reason) == ("stopped", "stopped by the host: the test is done")


def test_a_host_function_returning_past_the_deadline_traps_with_the_time_limit(session: GuestSession) -> None:
    guard = guarded(wall_time=0.0)
    guard.deadline = guard.started - 1  # as if the run's time were up
    with running(session, guard):
        with pytest.raises(WasmtimeError, match="time limit"):
            answer()
    assert guard.tripped == "wall_time"
