"""How many bytes of audit lines one run, or one client of `agent-host serve`, may write.

An `AuditBudget` is a token bucket of bytes: `capacity` at first, refilled at `refill` bytes per
second (0 for a run's: `[host] audit_run_max`, spent once), drawn together with its `parent`'s (a
served call's run draws from its client's allowance too). A line is written only when every budget
of the chain has its bytes; else nothing is charged and it is counted, on the first budget that
lacked them, until that budget's count is told by one `audit-budget` line (`AuditLog` writes it: at
the run's end, or before the client's next line once its allowance refilled). `Allowances` keeps the
budget of each client (`[serve] audit_client_max`, `audit_client_rate`). A budget is used under the
audit log's lock; `Allowances` on the server's loop. The clock is injectable (tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

Clock = Callable[[], float]
"""Seconds of a monotonic clock (`time.monotonic`)."""

SWEEP_AT: Final = 1024
"""Clients `Allowances` keeps before it forgets those whose allowance is full again and not in use
(a full allowance is a new client's); the threshold doubles with what is left, so sweeps are rare."""


@dataclass(frozen=True)
class Refused:
    """Lines a budget counted instead of writing them, and their bytes (as they would have been written)."""

    lines: int
    bytes: int


class AuditBudget:
    """Bytes of audit lines one run or one client may write (see the module docstring)."""

    def __init__(
        self,
        capacity: int,
        *,
        agent: str,
        reason: str,
        target: str | None = None,
        refill: float = 0.0,
        parent: AuditBudget | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        """`agent` and `target` name whose lines they are in the `audit-budget` line, `reason` says
        what bound was passed (its keys and figures)."""
        self.capacity = capacity
        self.refill = refill
        self.agent = agent
        self.target = target
        self.reason = reason
        self.parent = parent
        self.ended = False
        """Whether the run it budgets has ended (set by `AuditLog.end`): a line refused after that
        is told at once."""
        self._clock = clock
        self._tokens = float(capacity)
        self._stamp = clock()
        self._lines = 0
        self._bytes = 0
        self.holders = 0
        """Calls in flight that draw from it (`Allowances.held`): it is not forgotten while any do."""

    def chain(self) -> list[AuditBudget]:
        """This budget, then its parent, its parent's parent ..."""
        chain: list[AuditBudget] = []
        budget: AuditBudget | None = self
        while budget is not None:
            chain.append(budget)
            budget = budget.parent
        return chain

    def available(self) -> float:
        """Bytes it may write now (refilled up to `capacity` for the time since it was last looked at)."""
        now = self._clock()
        if self.refill:
            self._tokens = min(float(self.capacity), self._tokens + (now - self._stamp) * self.refill)
        self._stamp = now
        return self._tokens

    def full(self) -> bool:
        """Whether it is as a new one: at `capacity`, nothing counted."""
        return self.available() >= self.capacity and not self._lines

    def spend(self, size: int) -> AuditBudget | None:
        """Charge `size` bytes to every budget of the chain when each has them: None. Else nothing is
        charged and the first budget lacking them is returned (the caller counts the line on it)."""
        return spend([(budget, size) for budget in self.chain()])

    def charge(self, size: int) -> None:
        """Take `size` bytes (the caller checked that it has them: `spend`)."""
        self._tokens -= size

    def count(self, size: int) -> None:
        """A line of `size` bytes was refused by this budget: counted, not written."""
        self._lines += 1
        self._bytes += size

    @property
    def refused(self) -> Refused | None:
        """What it counted since it was last told (`told`); None when nothing."""
        return Refused(self._lines, self._bytes) if self._lines else None

    def told(self) -> None:
        """Its count was written (an `audit-budget` line): start counting anew."""
        self._lines = 0
        self._bytes = 0


def spend(charges: Sequence[tuple[AuditBudget, int]]) -> AuditBudget | None:
    """Charge each budget its bytes when every one has them: None. Else nothing is charged and the
    first budget lacking them is returned."""
    for budget, size in charges:
        if budget.available() < size:
            return budget
    for budget, size in charges:
        budget.charge(size)
    return None


def run_budget(agent: str, capacity: int, key: str, parent: AuditBudget | None = None) -> AuditBudget:
    """The budget of one run of agent `agent`: `capacity` bytes (set by `key`, for the reason), drawn
    from `parent` too (a served call's client)."""
    reason = f"agent {agent}'s run passed its {capacity} bytes of audit lines ({key})"
    return AuditBudget(capacity, agent=agent, reason=reason, parent=parent)


class Allowances:
    """The audit allowance of each client of `agent-host serve` (see the module docstring)."""

    def __init__(self, capacity: int, refill: float, *, agent: str, keys: str, clock: Clock = time.monotonic) -> None:
        """Each client may write `capacity` bytes at once, refilled at `refill` bytes per second
        (`keys`: the keys that set them, for the reason); its lines are those of agent `agent`."""
        self.capacity = capacity
        self.refill = refill
        self._agent = agent
        self._keys = keys
        self._clock = clock
        self._budgets: dict[str, AuditBudget] = {}
        self._sweep_at = SWEEP_AT

    def of(self, client: str) -> AuditBudget:
        """The allowance of `client` (a new, full one when it has none)."""
        budget = self._budgets.get(client)
        if budget is None:
            if len(self._budgets) >= self._sweep_at:
                self._sweep()
            reason = (
                f"client {client} passed its allowance of {self.capacity} bytes of audit lines, refilled at "
                f"{self.refill:g} bytes/s ({self._keys})"
            )
            budget = AuditBudget(
                self.capacity, agent=self._agent, target=client, reason=reason, refill=self.refill, clock=self._clock
            )
            self._budgets[client] = budget
        return budget

    @contextmanager
    def held(self, client: str) -> Iterator[AuditBudget]:
        """The allowance of `client`, kept for the block (a call in flight draws from it)."""
        budget = self.of(client)
        budget.holders += 1
        try:
            yield budget
        finally:
            budget.holders -= 1

    def pending(self) -> list[AuditBudget]:
        """The allowances with lines counted and not told yet (to tell when the server stops)."""
        return [budget for budget in self._budgets.values() if budget.refused is not None]

    def __len__(self) -> int:
        return len(self._budgets)

    def _sweep(self) -> None:
        for client in [c for c, budget in self._budgets.items() if not budget.holders and budget.full()]:
            del self._budgets[client]
        self._sweep_at = max(SWEEP_AT, 2 * len(self._budgets))
