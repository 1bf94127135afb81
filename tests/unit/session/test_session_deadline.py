"""Every bounded wait of a session: one message, shortened by the run's deadline, ended by interrupts.

One deadline helper gives every bounded wait one place and one message, the one guests and component
tests see.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.session.bridge import Bridge, Interrupt
from agent_host.session.deadline import Deadline, LoopCalls, bounded_call, request_hint, timed_out
from tests.support.sessionkit import WAIT, on_loop


@pytest.fixture
def bridge() -> Iterator[Bridge]:
    with Bridge() as bridge:
        yield bridge


def test_the_one_timeout_message_names_what_how_long_and_what_to_change() -> None:
    error = timed_out("tooling 'm': tools/list", 1.5, "raise `timeout` in f.toml [tooling.m] to wait longer")
    assert error == ToolingError(
        ErrorCode.TIMEOUT,
        "tooling 'm': tools/list did not finish within 1.5 s and was cancelled "
        "(raise `timeout` in f.toml [tooling.m] to wait longer)",
    )


def test_without_a_run_deadline_waits_keep_their_own_bound() -> None:
    deadline = Deadline("timeout in f.toml [agents.a]")
    assert deadline.bound(30.0, "hint") == (30.0, "hint")
    assert deadline.clamp(7.0) == 7.0


def test_a_wait_that_would_outlast_the_run_ends_with_it_and_says_so() -> None:
    deadline = Deadline("timeout in f.toml [agents.a]")
    deadline.at = time.monotonic() + 2.0
    seconds, hint = deadline.bound(30.0, "hint")
    assert 1.0 < seconds <= 2.0
    assert hint == "the agent's run time limit ends then: timeout in f.toml [agents.a]"
    assert deadline.bound(0.5, "hint") == (0.5, "hint")
    assert 1.0 < deadline.clamp(60.0) <= 2.0


def test_after_the_run_deadline_waits_are_zero_never_negative() -> None:
    deadline = Deadline("timeout")
    deadline.at = time.monotonic() - 5.0
    assert deadline.bound(30.0, "hint")[0] == 0.0
    assert deadline.clamp(30.0) == 0.0


async def never() -> None:
    await anyio.sleep_forever()


def test_a_loop_call_that_times_out_is_cancelled_with_the_one_message(bridge: Bridge) -> None:
    calls = LoopCalls("a", bridge, Deadline("timeout"), Interrupt())
    with pytest.raises(ToolingError) as caught:
        calls.run("waiting", never, timeout=0.05, hint="be patient")
    assert caught.value == timed_out("waiting", 0.05, "be patient")


def test_a_loop_call_is_bounded_by_the_run_deadline(bridge: Bridge) -> None:
    deadline = Deadline("timeout in f.toml [agents.a]")
    deadline.at = time.monotonic() + 0.05
    calls = LoopCalls("a", bridge, deadline, Interrupt())
    started = time.monotonic()
    with pytest.raises(ToolingError) as caught:
        calls.run("waiting", never, timeout=WAIT, hint="be patient")
    assert time.monotonic() - started < WAIT
    assert caught.value.code is ErrorCode.TIMEOUT
    assert caught.value.message.endswith("(the agent's run time limit ends then: timeout in f.toml [agents.a])")


def test_an_interrupt_ends_the_wait_and_refuses_later_ones_but_not_cleanup(bridge: Bridge) -> None:
    interrupt = Interrupt()
    calls = LoopCalls("a", bridge, Deadline("timeout"), interrupt)
    errors: list[ToolingError] = []
    blocked = threading.Event()

    async def block() -> None:
        blocked.set()
        await anyio.sleep_forever()

    def wait() -> None:
        try:
            calls.run("waiting", block, timeout=WAIT, hint="")
        except ToolingError as exc:
            errors.append(exc)

    waiter = threading.Thread(target=wait)
    waiter.start()
    assert blocked.wait(WAIT)
    interrupt.fire("shutting down")
    waiter.join(WAIT)
    assert not waiter.is_alive()
    assert errors == [ToolingError(ErrorCode.CANCELLED, "the host stopped this agent: shutting down")]
    with pytest.raises(ToolingError) as caught:
        calls.run("later", anyio.sleep, 0, timeout=WAIT, hint="")
    assert caught.value.code is ErrorCode.CANCELLED

    async def released() -> str:
        return "released"

    assert calls.cleanup("releasing", released, timeout=WAIT, hint="") == "released"


def test_cleanup_is_not_shortened_by_a_passed_run_deadline(bridge: Bridge) -> None:
    deadline = Deadline("timeout")
    deadline.at = time.monotonic() - 1.0

    async def brief() -> str:
        await anyio.sleep(0.01)
        return "done"

    calls = LoopCalls("a", bridge, deadline, Interrupt())
    assert calls.cleanup("releasing", brief, timeout=WAIT, hint="") == "done"
    with pytest.raises(ToolingError) as caught:
        calls.run("asking", brief, timeout=WAIT, hint="")
    assert caught.value.code is ErrorCode.TIMEOUT


def test_a_host_bug_on_the_loop_is_internal_and_logged(bridge: Bridge, caplog: pytest.LogCaptureFixture) -> None:
    async def buggy() -> None:
        raise KeyError("oops")

    calls = LoopCalls("a", bridge, Deadline("timeout"), Interrupt())
    with caplog.at_level(logging.ERROR, logger="agent_host.session.deadline"):
        with pytest.raises(ToolingError) as caught:
            calls.run("the thing", buggy, timeout=WAIT, hint="")
    assert caught.value == ToolingError(
        ErrorCode.INTERNAL, "internal error in the host during the thing: KeyError: 'oops'"
    )
    assert "internal error during the thing (agent a)" in caplog.text


def test_expected_failures_pass_through_unchanged(bridge: Bridge) -> None:
    refusal = ToolingError(ErrorCode.DENIED, "no")

    async def refuse() -> None:
        raise refusal

    with pytest.raises(ToolingError) as caught:
        LoopCalls("a", bridge, Deadline("timeout"), Interrupt()).run("x", refuse, timeout=WAIT, hint="")
    assert caught.value is refusal


def test_a_bounded_call_on_the_loop_raises_the_same_message(bridge: Bridge) -> None:
    text = '[tooling.m]\nkind = "mock"\ntimeout = 0.05\n[tooling.n]\nkind = "mock"\n'
    toolings = parse_config(text, Path("/etc/agent/agent-host.toml"), {}).toolings
    what = "tooling 'm': the call of tool 'slow'"

    async def attempt() -> None:
        await bounded_call(toolings["m"], what, lambda report: never())

    with pytest.raises(ToolingError) as caught:
        on_loop(bridge, attempt)
    assert caught.value == timed_out(what, 0.05, request_hint(toolings["m"]))

    async def quick() -> int:
        return await bounded_call(toolings["n"], "x", lambda report: _answer())

    assert on_loop(bridge, quick) == 42


async def _answer() -> int:
    return 42
