"""The composition root: config → bridge → toolings → runtime.

`Host` owns, in this order, a private log folder (server stderr files), the bridge (its loop thread
and every tooling connection) and, created on first need, the runtime (engine, linker, epoch
ticker). `close()` shuts them down in reverse: every connection is closed concurrently on the
loop (stdio children exit or are killed), the loop stops, the ticker stops, the log folder is
removed (kept, and its path logged, with `keep_logs=True`). `close()` is idempotent and `Host` is
a context manager. Guests share the tooling connections of their host.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from host.bridge import Bridge
from host.config import AgentConfig, Config
from host.inbox import Inbox
from host.paths import cache_dir
from host.runtime.engine import Runtime
from host.runtime.guest import GuestThread, Limits, Outcome, start_guest
from host.session import GuestSession
from host.toolings import ToolingSet

logger = logging.getLogger(__name__)


class Host:
    """One host process's toolings, bridge and runtime."""

    def __init__(self, config: Config, *, cache: Path | None = None, keep_logs: bool = False) -> None:
        self.config = config
        self.cache = cache if cache is not None else cache_dir()
        self._keep_logs = keep_logs
        self.log_dir = Path(tempfile.mkdtemp(prefix="agent-host-logs-"))
        self.bridge = Bridge()
        self.toolings = ToolingSet(config.toolings, nursery=self.bridge.nursery, log_dir=self.log_dir)
        self._runtime: Runtime | None = None
        self._closed = False

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            self._runtime = Runtime(self.cache)
        return self._runtime

    def session(self, agent: str) -> GuestSession:
        """A session for agent `agent` (also used by the command line's `tools` and `call`)."""
        limits = self.config.host
        inbox = Inbox(limits.inbox_size, limits.max_open_calls, limits.max_subscriptions)
        return GuestSession(agent, self.bridge, self.toolings, inbox=inbox, max_wait=limits.recv_timeout)

    def start(
        self, wasm: Path, input_text: str, *, agent: str = "guest", settings: AgentConfig | None = None
    ) -> GuestThread:
        """Load (compiling once) and start the component in `wasm` on its own thread."""
        component = self.runtime.load(wasm)
        limits = Limits()
        if settings is not None:
            limits = Limits(
                memory=settings.memory, timeout=settings.timeout, timeout_origin=f"timeout in {settings.origin}"
            )
        return start_guest(self.runtime, component, self.session(agent), input_text, limits)

    def run(self, wasm: Path, input_text: str, *, agent: str = "guest", settings: AgentConfig | None = None) -> Outcome:
        """Run a guest to completion."""
        guest = self.start(wasm, input_text, agent=agent, settings=settings)
        while True:
            outcome = guest.join(0.2)  # short waits keep the main thread responsive to Ctrl-C
            if outcome is not None:
                return outcome

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.bridge.close(self.toolings.aclose)
        finally:
            if self._runtime is not None:
                self._runtime.close()
            if self._keep_logs:
                logger.info("server logs kept in %s", self.log_dir)
            else:
                shutil.rmtree(self.log_dir, ignore_errors=True)

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
