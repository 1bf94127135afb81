"""Who a client of `agent-host serve` is, the slots it holds, and bounds logged once per interval.

Provenance: issue 20, point 6 ("limits per client (or per session)") and the issue's rule that a
bound reached "is logged once per interval, not per event".
"""

from __future__ import annotations

import logging

import pytest

from host.serve.clients import LOCAL, ClientSlots, client_of_request, client_of_scope
from host.serve.limit_log import LimitLog


def test_a_client_holds_at_most_its_share_and_an_ended_slot_is_free_again() -> None:
    slots = ClientSlots(2)
    alive = {"s1": True}
    assert slots.take("token 1", "s1", "session", lambda: alive["s1"])
    assert slots.take("token 1", "l1", "listen")
    assert not slots.take("token 1", "l2", "listen")  # its share is taken
    assert slots.take("token 2", "l3", "listen")  # another client's is not
    assert (slots.count("session"), slots.count("listen")) == (1, 2)
    alive["s1"] = False  # the SDK forgot the session
    assert slots.held("token 1") == 1 and slots.take("token 1", "l2", "listen")
    slots.release("token 1", "l1")
    slots.release("token 1", "l2")
    slots.release("token 1", "unknown")
    assert slots.held("token 1") == 0


def test_a_client_is_its_token_else_its_address_else_local() -> None:
    assert client_of_scope({"agent_host.client": "token 2", "client": ("10.0.0.5", 4711)}) == "token 2"
    assert client_of_scope({"client": ("10.0.0.5", 4711)}) == "address 10.0.0.5"  # not the port: one per machine
    assert client_of_request(None) == LOCAL


def test_a_bound_reached_is_logged_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    log = LimitLog(logging.getLogger("host.test"), interval=60, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "host.test"):
        for _ in range(5):
            log.reached("max_sessions", "refused")
        log.reached("max_sessions_per_client", "other")
        now[0] = 61.0
        log.reached("max_sessions", "refused")
    assert [record.getMessage() for record in caplog.records] == [
        "refused; reported once per 60 s",
        "other; reported once per 60 s",
        "refused (and 4 more since the last report); reported once per 60 s",
    ]
