"""`InstancePool`: instances of one component made ahead for one agent's policy, each run at most once.

A fresh guest per call keeps callers apart (nothing of one run reaches the next); instantiating it
(its linear memory and its data, ~9 ms of a componentize-py guest's ~13 ms start and run) need not
be on the call's path. The pool keeps up to `size` `guest.Prepared` instances, never run, made on
its own thread (`agent-host-pool-AGENT`) and made again as they are taken; `take` never waits (None
when none is ready: the caller prepares its own, as without a pool). Bounded: at most `size` wait,
each holding what a started guest holds before it runs (its linear memory, ~12 MiB for a
componentize-py guest, a temp folder with two empty files). `close` discards them and ends the
thread; an instance taken is the taker's to run (which discards it).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Final

from wasmtime.component import Component

from agent_host.policy.grants import AgentPolicy
from agent_host.runtime.engine import Runtime
from agent_host.runtime.guest import Prepared, prepare
from agent_host.runtime.run_guard import RunGuard

logger = logging.getLogger(__name__)

CLOSE_WAIT: Final = 10.0
"""Seconds `close` waits for an instantiation under way to end."""


class InstancePool:
    """See the module docstring."""

    def __init__(self, runtime: Runtime, component: Component, policy: AgentPolicy, agent: str, size: int) -> None:
        self.agent = agent
        self.size = size
        self._runtime = runtime
        self._component = component
        self._policy = policy
        self._ready: deque[Prepared] = deque()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._wanted = threading.Event()
        self._closed = False
        self._stopped = False
        """Whether it stopped making instances (one failed: its start code past a limit, say)."""
        self._guard: RunGuard | None = None
        self.made = 0
        """Instances made so far (those taken and those waiting)."""
        self._thread = threading.Thread(target=self._fill, name=f"agent-host-pool-{agent}", daemon=True)
        if size > 0:
            self._wanted.set()
            self._thread.start()

    @property
    def waiting(self) -> int:
        """Instances ready now."""
        with self._lock:
            return len(self._ready)

    def filled(self, timeout: float) -> bool:
        """Wait until `size` instances are ready, or it stopped making them after one failed (at most
        `timeout` seconds); whether it is so and the pool is not closed."""
        with self._changed:
            return (
                self._changed.wait_for(lambda: len(self._ready) >= self.size or self._closed or self._stopped, timeout)
                and not self._closed
            )

    def serves(self, component: Component, agent: str, policy: AgentPolicy) -> bool:
        """Whether its instances are those of `component` for `agent` under `policy` (the same objects)."""
        return component is self._component and agent == self.agent and policy is self._policy

    def take(self) -> Prepared | None:
        """A ready instance, never run (the caller runs or discards it), or None when none is ready;
        never waits. Another is made in its place."""
        with self._lock:
            prepared = self._ready.popleft() if self._ready else None
        self._wanted.set()
        return prepared

    def _fill(self) -> None:
        """On the pool's thread: keep `size` instances ready until closed."""
        while True:
            self._wanted.wait()
            self._wanted.clear()
            while True:
                with self._lock:
                    if self._closed or len(self._ready) >= self.size:
                        break
                try:
                    prepared = prepare(self._runtime, self._component, self._policy, self.agent, on_guard=self._making)
                except Exception:  # boundary: the pool is an optimisation; calls prepare their own
                    logger.exception("agent %s: an instance could not be made ahead", self.agent)
                    break
                with self._lock:
                    self._guard = None
                    keep = not self._closed
                    if keep:
                        self._ready.append(prepared)
                        self.made += 1
                        self._changed.notify_all()
                if not keep:
                    prepared.discard()
                    return
                if prepared.failure is not None:  # it cannot be made (a start code past a limit, say):
                    logger.warning(  # its failure is the next call's; later calls make their own, in their turn
                        "agent %s: an instance made ahead failed (%s); no more are made ahead",
                        self.agent,
                        prepared.failure[1],
                    )
                    with self._lock:
                        self._stopped = True
                        self._changed.notify_all()
                    return
            if self._closed:
                return

    def _making(self, guard: RunGuard) -> None:
        """The guard of the instance being made (stopped when the pool closes)."""
        with self._lock:
            self._guard = guard
            if self._closed:
                guard.stop("the host is closing")

    def close(self) -> None:
        """Discard the instances waiting and end the pool's thread, stopping start code that runs
        (idempotent; from any thread)."""
        with self._lock:
            self._closed = True
            waiting, self._ready = list(self._ready), deque()
            if self._guard is not None:
                self._guard.stop("the host is closing")
        self._wanted.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(CLOSE_WAIT)
        for prepared in waiting:
            prepared.discard()
