"""Who a client of `agent-host serve` is, the slots it holds, and bounds logged once per interval.

Limits hold per client (its token, else its address, else local), and a bound reached is logged once
per interval, not per event.
"""

from __future__ import annotations

import logging

import pytest

from agent_host.serve.clients import (
    LOCAL,
    LOOPBACK,
    ClientSlots,
    client_of_address,
    client_of_request,
    client_of_scope,
)
from agent_host.serve.connections import client_of_peer
from agent_host.serve.limit_log import LimitLog


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


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "127.255.3.4", "::1", "::ffff:127.0.0.9"])
def test_every_loopback_address_is_one_client_unless_a_token_names_it(address: str) -> None:
    """Every 127/8 source address is one client, so one local process cannot take every session and
    listen stream by changing its source address."""
    assert client_of_scope({"client": (address, 4711)}) == LOOPBACK
    assert client_of_scope({"agent_host.client": "token 1", "client": (address, 4711)}) == "token 1"
    assert client_of_scope({"client": ("not an address", 1)}) == "address not an address"


@pytest.mark.parametrize(
    ("addresses", "client"),
    [
        (["127.0.0.1", "127.0.0.2", "127.9.8.7", "::1", "::ffff:127.0.0.3"], LOOPBACK),
        (
            ["2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2:abcd::9%eth0"],
            "address 2001:db8:1:2::/64",
        ),
        (["10.0.0.5", "::ffff:10.0.0.5"], "address 10.0.0.5"),
        (["10.0.0.6"], "address 10.0.0.6"),
    ],
)
def test_connections_and_sessions_name_a_client_alike_loopback_one_ipv6_by_its_64(
    addresses: list[str], client: str
) -> None:
    """Attack of 2026-12 (connflood.py): `max_connections_per_client` counted each loopback address
    (and each IPv6 address) as a client of its own while sessions saw one `loopback`, so one process
    sending from ten 127/8 addresses held 512 connections. Both now name a client by
    `client_of_address`: every loopback address is `loopback`, an IPv6 address its /64, an
    IPv4-mapped IPv6 address its IPv4 address."""
    for address in addresses:
        assert client_of_address(address) == client
        assert client_of_peer((address, 4711)) == client
        assert client_of_scope({"client": (address, 4711)}) == client
    assert client_of_address("2001:db8:1:3::1") != client_of_address("2001:db8:1:2::1")  # another /64
    assert client_of_peer(None) == client_of_peer(()) == "address unknown"


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
