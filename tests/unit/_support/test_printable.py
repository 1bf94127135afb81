"""`agent_host._support.printable` and the log budget: what a guest or a server wrote cannot forge a host line,
drive the terminal, or fill the disk through the host's log.

Newlines, ESC sequences and other unsafe characters in a guest's `log` messages are escaped, long text is
cut saying how much, and what one run may log is bounded, the bound named once.
"""

from __future__ import annotations

import logging

import pytest

from agent_host._support.printable import printable
from agent_host.policy.grants import Limit
from agent_host.session.guest_log import MAX_LOG_MESSAGE, LogBudget, log


def test_unsafe_characters_are_escaped_and_tabs_and_text_kept() -> None:
    assert printable("ok\nagent-host: x\r\x1b[2K\x07\x7f\x9b\u2028\u202e\u2066 é\t😀") == (
        "ok\\x0aagent-host: x\\x0d\\x1b[2K\\x07\\x7f\\x9b\\u2028\\u202e\\u2066 é\t😀"
    )


def test_long_text_is_cut_saying_how_much() -> None:
    assert printable("a" * 30, limit=10) == "a" * 10 + "... [20 characters cut]"


def test_a_guest_log_message_is_escaped_in_the_host_log(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "agent_host.guest"):
        log("g", "info", "one\nagent-host: agent victim failed: FORGED")
    assert caplog.records[0].getMessage() == "[g] info: one\\x0aagent-host: agent victim failed: FORGED"


def test_what_one_run_may_log_is_bounded_and_the_bound_named_once(caplog: pytest.LogCaptureFixture) -> None:
    budget = LogBudget(Limit(3 * MAX_LOG_MESSAGE, "guest_output_max in test.toml [host]"))
    with caplog.at_level(logging.WARNING, "agent_host.guest"):
        admitted = [budget.admit("g", "x" * 10 * MAX_LOG_MESSAGE) for _ in range(5)]  # each counts as cut
    assert admitted == [True, True, True, False, False]
    assert budget.dropped == 2
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [
        f"[g] more than {3 * MAX_LOG_MESSAGE} bytes of log messages in this run; the rest is dropped "
        "(guest_output_max in test.toml [host])"
    ]
