"""`Actors`: the `AgentWorker` actors one command made, made, forgotten and closed in one place.

Used by the executor (`run`) and by `serving` (`serve`). An actor has `[host] ray_cpus` CPUs and
two threads (a run, and a stop or cancel beside it), never restarts, and adopts the driver's logger
levels. `close` asks every actor to close its host (its stdio servers exit), waits at most
`CLOSE_TIMEOUT` seconds, then kills them all; an actor `forget` is given is killed at once.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Final

from agent_host.cluster.connection import import_ray
from agent_host.cluster.worker import AgentWorker
from agent_host.config import Config

CLOSE_TIMEOUT: Final = 10.0
"""Seconds actors get to close their hosts (stdio servers exit) before they are killed."""

LEVELS: Final = ("", "agent_host", "agent_host.guest", "mcp")
"""The loggers whose levels the workers adopt from the driver."""


class Actors:
    """See the module docstring. Thread-safe."""

    def __init__(self, config: Config, approve: str) -> None:
        self._config = config
        self._approve = approve
        self._ray = import_ray()
        self._worker_class = self._ray.remote(AgentWorker)
        self._lock = threading.Lock()
        self._live: list[Any] = []

    def new(self) -> Any:
        """A new actor (starting; calls on it wait for it)."""
        levels = {name: logging.getLogger(name or None).getEffectiveLevel() for name in LEVELS}
        options = {"num_cpus": self._config.host.ray_cpus, "max_concurrency": 2, "max_restarts": 0}
        actor = self._worker_class.options(**options).remote(self._config, self._approve, levels)
        with self._lock:
            self._live.append(actor)
        return actor

    def live(self) -> list[Any]:
        """The actors made and not forgotten or closed."""
        with self._lock:
            return list(self._live)

    def forget(self, actor: Any) -> None:
        """Kill `actor` (it died, or will not end) and forget it."""
        with self._lock:
            if actor in self._live:
                self._live.remove(actor)
        self._ray.kill(actor, no_restart=True)

    def close(self) -> None:
        """Close every live actor, then kill it (idempotent)."""
        with self._lock:
            actors, self._live = self._live, []
        if not actors:
            return
        closing = [actor.close.remote() for actor in actors]
        self._ray.wait(closing, num_returns=len(closing), timeout=CLOSE_TIMEOUT)
        for actor in actors:
            self._ray.kill(actor, no_restart=True)
