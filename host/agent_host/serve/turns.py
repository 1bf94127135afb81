"""Turns: how many calls of `agent-host serve` run at once, how many may wait, and whose they are.

At most `max_concurrent` calls hold a turn; up to `queue` more wait for one; a call beyond that is
refused at once (`admit` names the numbers), never queued unboundedly. The turns and queue places
are divided between clients (`clients.client_of_scope`), so that one client's long calls cannot
lock the others out (`_hand_over`, `admit`): a client alone may use every turn and place, and
clients that compete end up with equal shares. Bookkeeping is synchronous (a freed turn is handed
over at once): a call arriving just after a turn freed never sees a stale "full". Used on the
server's event loop only.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal

import anyio


class Evicted(Exception):
    """A waiting call gave its place to another client's (see the module docstring)."""


@dataclass(eq=False)
class Ticket:
    """One admitted call: running at once, or waiting for a turn (`turn` waits)."""

    client: str
    order: int
    state: Literal["waiting", "running", "evicted", "done"]
    ready: anyio.Event = field(default_factory=anyio.Event)
    why: str = ""
    """Why it was evicted."""


class Turns:
    """The turns of one server's calls (see the module docstring)."""

    def __init__(self, max_concurrent: int, queue: int) -> None:
        self.max_concurrent = max_concurrent
        self.queue = queue
        self._running: dict[str, int] = {}
        self._waiting: dict[str, deque[Ticket]] = {}
        self._running_total = 0
        self._waiting_total = 0
        self._order = itertools.count()

    @property
    def running(self) -> int:
        """Calls running now (turns taken)."""
        return self._running_total

    @property
    def waiting(self) -> int:
        """Calls waiting for a turn now."""
        return self._waiting_total

    def held(self, client: str) -> int:
        """The calls `client` runs or waits with now."""
        return self._running.get(client, 0) + len(self._waiting.get(client, ()))

    def admit(self, client: str) -> Ticket | str:
        """A ticket for a call of `client` (running or waiting; hold it with `turn`), or why the call is
        refused (`limit-exceeded`). When every turn and queue place is taken, a call of a client that
        holds (runs plus waits) at least two calls fewer than the client holding the most waiting
        ones takes the place of that client's newest waiting call, which is refused (`Evicted`) as
        it would have been had it come last; otherwise the new call is refused."""
        ticket = Ticket(client, next(self._order), "waiting")
        if self._running_total < self.max_concurrent:
            self._start(ticket)
            return ticket
        if self._waiting_total >= self.queue:
            victim = self._victim(client)
            if victim is None:
                return (
                    f"busy: {self._running_total} calls run and {self._waiting_total} wait ([serve] max_concurrent = "
                    f"{self.max_concurrent}, queue = {self.queue}; client {client} holds {self.held(client)} of them);"
                    " try again later"
                )
            self._evict(victim, client)
        self._waiting.setdefault(client, deque()).append(ticket)
        self._waiting_total += 1
        return ticket

    def _victim(self, client: str) -> Ticket | None:
        """The newest waiting call of the client holding the most waiting ones, if it holds at least
        two more calls than `client`."""
        mine = self.held(client)
        holders = [other for other, waiting in self._waiting.items() if waiting and other != client]
        if not holders:
            return None
        greediest = max(holders, key=self.held)
        return self._waiting[greediest][-1] if self.held(greediest) >= mine + 2 else None

    def _evict(self, ticket: Ticket, client: str) -> None:
        self._remove_waiting(ticket)
        ticket.state = "evicted"
        ticket.why = (
            f"busy: this call of client {ticket.client} waited for a turn and gave its place to another client's "
            f"(client {ticket.client} held {self.held(ticket.client) + 1} of the {self.max_concurrent} turns and "
            f"{self.queue} queue places: [serve] max_concurrent and queue are divided between clients); "
            "try again later"
        )
        ticket.ready.set()

    def _remove_waiting(self, ticket: Ticket) -> None:
        waiting = self._waiting[ticket.client]
        waiting.remove(ticket)
        if not waiting:
            del self._waiting[ticket.client]
        self._waiting_total -= 1

    def _start(self, ticket: Ticket) -> None:
        ticket.state = "running"
        self._running[ticket.client] = self._running.get(ticket.client, 0) + 1
        self._running_total += 1
        ticket.ready.set()

    def _finish(self, ticket: Ticket) -> None:
        ticket.state = "done"
        left = self._running[ticket.client] - 1
        if left:
            self._running[ticket.client] = left
        else:
            del self._running[ticket.client]
        self._running_total -= 1
        self._hand_over()

    def _hand_over(self) -> None:
        """Give the free turns to the waiting calls: each to the client that runs the fewest calls now
        (between equals, the call that has waited longest), not simply to the oldest waiting call."""
        while self._running_total < self.max_concurrent and self._waiting_total:
            client = min(self._waiting, key=lambda c: (self._running.get(c, 0), self._waiting[c][0].order))
            ticket = self._waiting[client][0]
            self._remove_waiting(ticket)
            self._start(ticket)

    @asynccontextmanager
    async def turn(self, ticket: Ticket) -> AsyncIterator[None]:
        """Wait for `ticket`'s turn and hold it for the block. Raises `Evicted` when the call gave
        its place to another client's while it waited."""
        try:
            await ticket.ready.wait()
        except BaseException:
            if ticket.state == "waiting":
                self._remove_waiting(ticket)
            elif ticket.state == "running":  # handed a turn just as it was cancelled: give it back
                self._finish(ticket)
            raise
        if ticket.state == "evicted":
            raise Evicted(ticket.why)
        try:
            yield
        finally:
            self._finish(ticket)
