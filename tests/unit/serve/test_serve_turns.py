"""`turns.Turns`: turns and queue places divided between clients.

One client alone may use every turn and place, but one client's long calls cannot make every other
client's calls 429: a full server gives the greediest client's newest waiting place to another client,
and a freed turn is handed over at once, not counted as still waiting until its new holder runs.
"""

from __future__ import annotations

import pytest

from agent_host.serve.turns import Ticket, Turns

pytestmark = pytest.mark.anyio


def _admitted(turns: Turns, client: str) -> Ticket:
    ticket = turns.admit(client)
    assert isinstance(ticket, Ticket), ticket
    return ticket


async def test_one_client_alone_may_use_every_turn_and_place_then_is_refused() -> None:
    turns = Turns(2, 3)
    tickets = [_admitted(turns, "a") for _ in range(5)]
    assert [t.state for t in tickets] == ["running"] * 2 + ["waiting"] * 3
    refused = turns.admit("a")
    assert isinstance(refused, str) and refused.startswith("busy: 2 calls run and 3 wait")
    assert "client a holds 5" in refused


async def test_a_full_server_gives_the_greediest_clients_newest_waiting_place_to_another_client() -> None:
    turns = Turns(2, 3)
    tickets = [_admitted(turns, "a") for _ in range(5)]
    b = _admitted(turns, "b")
    assert (b.state, tickets[-1].state) == ("waiting", "evicted")
    assert "client a" in tickets[-1].why and "another client" in tickets[-1].why
    c = _admitted(turns, "c")  # a holds 4, c 0: a's newest again
    assert (c.state, tickets[-2].state) == ("waiting", "evicted")
    b2 = _admitted(turns, "b")  # a holds 3, b 1: a victim's client holds at least two more
    assert (b2.state, tickets[-3].state) == ("waiting", "evicted")
    assert [turns.held(client) for client in "abc"] == [2, 2, 1]  # equal shares; a's two run
    assert isinstance(turns.admit("b"), str)  # nobody waiting holds two more than b: refused


async def test_a_freed_turn_goes_to_the_client_running_fewest_and_is_handed_over_at_once() -> None:
    turns = Turns(2, 2)
    a1, a2, a3 = (_admitted(turns, "a") for _ in range(3))
    b1 = _admitted(turns, "b")
    async with turns.turn(a1):
        pass  # a1 ends: its turn goes to b (running 0) before a3 (a runs 1), though a3 came first
    assert (b1.state, a3.state) == ("running", "waiting")
    assert isinstance(turns.admit("c"), Ticket)  # a place was freed at once: no stale "full"
    assert a2.state == "running"
