"""`--approve ask` on a real terminal: a pseudo-terminal answers y, then n.

`TerminalApprover` opens the terminal in a mode a tty accepts (not text "r+", which a tty refuses as not
seekable), so an approval is asked, and refused as "no terminal" only when there is none.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Final

import anyio
import pytest

from agent_host.policy.approval import ApprovalRequest, TerminalApprover

pytestmark = pytest.mark.anyio

WAIT: Final = 10.0
"""Seconds the test waits for the prompt to appear on the terminal."""

REQUEST: Final = ApprovalRequest(
    agent="scout", tooling="files", tool="write_file", capabilities=frozenset({"workspace_write"}), arguments={"p": 1}
)


@pytest.fixture
def terminal() -> Iterator[tuple[int, str]]:
    """A pseudo-terminal: (the controller's fd, the path of its terminal side)."""
    controller, side = os.openpty()
    path = os.ttyname(side)
    yield controller, path
    os.close(side)
    os.close(controller)


def read_prompt(controller: int) -> str:
    seen = b""
    while b"[y/N]" not in seen:
        seen += os.read(controller, 1024)
    return seen.decode()


def answer_after_prompt(controller: int, answer: bytes, prompts: list[str]) -> threading.Thread:
    def body() -> None:
        prompts.append(read_prompt(controller))
        os.write(controller, answer)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("typed", "approved"), [(b"y\n", True), (b"n\n", False), (b"yes\n", True), (b"\n", False)])
async def test_the_terminal_approver_asks_on_a_pseudo_terminal_and_takes_the_answer(
    terminal: tuple[int, str], typed: bytes, approved: bool
) -> None:
    controller, path = terminal
    prompts: list[str] = []
    answering = answer_after_prompt(controller, typed, prompts)
    with anyio.fail_after(WAIT):
        decision = await TerminalApprover(path).decide(REQUEST)
    answering.join(WAIT)
    assert decision.approved is approved, decision
    assert decision.reason == ("approved on the terminal" if approved else "refused on the terminal")
    assert "approve? agent 'scout' calls tool 'write_file' of tooling 'files' (needs workspace_write)" in prompts[0]


async def test_one_question_at_a_time_yes_then_no(terminal: tuple[int, str]) -> None:
    controller, path = terminal
    approver = TerminalApprover(path)
    decisions = []
    for typed in (b"y\n", b"n\n"):
        prompts: list[str] = []
        answering = answer_after_prompt(controller, typed, prompts)
        with anyio.fail_after(WAIT):
            decisions.append((await approver.decide(REQUEST)).approved)
        answering.join(WAIT)
    assert decisions == [True, False]


async def test_no_terminal_is_a_refusal_that_says_so(tmp_path: object) -> None:
    decision = await TerminalApprover("/nonexistent/tty").decide(REQUEST)
    assert not decision.approved and "no terminal" in decision.reason
