"""Dev mode: run a guest folder from its source, with one prebuilt runner component (Python).

A JavaScript guest has no runner: a dev run builds it from its current source (`dev_component`).

The runner (`agent_host.components.dev_runner`) is built and compiled once, and cached like any
guest; a source change never rebuilds it, and a syntax error is a `BuildError` before the run, as in
a build (`components.syntax`). A dev run is the production sandbox plus two things, and only these:
the guest's folder preopened read-only at `SOURCE` (the guest sees its own source, nothing else of
the host) and the environment variable `MODULE_VARIABLE` naming the module that defines `WitWorld`.
What differs from a build: the guest's modules are read and compiled at each run (a few ms for a
small guest), and the whole pure-Python standard library is importable whatever the guest imports.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from agent_host._support.paths import cache_dir
from agent_host._support.stopping import StopToken
from agent_host.components.build import JAVASCRIPT, build_guest, guest_entry
from agent_host.components.dev_runner import MODULE_VARIABLE, SOURCE, runner_component
from agent_host.components.syntax import check_syntax
from agent_host.config import DirGrant
from agent_host.errors import BuildError, UsageError
from agent_host.policy.grants import AgentPolicy

if TYPE_CHECKING:
    from agent_host.app.host import Host
    from agent_host.model import RunResult

WATCH_DEBOUNCE_MS: Final = 50
"""Milliseconds of quiet after a change before it counts (an editor's save is several writes)."""

WATCH_STEP_MS: Final = 50
"""Milliseconds between looks at a stop request or a change while watching or running."""

SOURCE_CHANGED: Final = "the source changed"
"""The reason a running guest is stopped with when its source changes."""


def prepare_runner(stop: StopToken | None = None) -> Path:
    """The runner component built and compiled for this machine (both cached): what `agent-host dev
    --prepare` and `make setup` do, so that a first dev run starts at once. Raises as `runner_component`."""
    from agent_host.runtime.engine import Runtime

    wasm = runner_component(stop)
    with Runtime(cache_dir()) as runtime:
        runtime.load(wasm, stop)
    return wasm


def check_source(folder: Path, module: str | None = None) -> str:
    """The module of guest folder `folder` that defines `WitWorld` (Python) or exports `run`
    (JavaScript). Raises `BuildError` when `folder` is not a guest folder (a `.wasm` cannot run in
    dev mode)."""
    return _entry(folder, module)[1]


def _entry(folder: Path, module: str | None) -> tuple[str, str]:
    if not folder.is_dir():
        raise BuildError(
            f"{folder}: not a guest folder", hint="--dev runs a guest folder (with app.py) from its source, not a .wasm"
        )
    return guest_entry(folder.resolve(), module)


def is_javascript(folder: Path, module: str | None = None) -> bool:
    """Whether guest folder `folder` is a JavaScript guest (dev mode rebuilds it, see the module).
    Raises `BuildError` as `check_source` does."""
    return _entry(folder, module)[0] == JAVASCRIPT


def dev_component(folder: Path, module: str | None = None, stop: StopToken | None = None) -> Path:
    """What a dev run of guest folder `folder` runs: the runner for a Python guest (its source is
    read at run time; its syntax checked first, `components.syntax`), the guest built
    from its current source for a JavaScript one. Raises `BuildError` (not a guest folder; a syntax
    error; a JavaScript guest that does not build) or `Interrupted`."""
    if is_javascript(folder, module):
        return build_guest(folder, module=module, stop=stop)
    runner = runner_component(stop)
    check_syntax(folder)
    return runner


def dev_policy(policy: AgentPolicy, folder: Path, module: str | None = None) -> AgentPolicy:
    """`policy` plus the guest's source: `folder` read-only at `SOURCE`, and its module named in
    `MODULE_VARIABLE`; `policy` unchanged for a JavaScript guest (it runs as built). Raises
    `BuildError` when `folder` is not a guest folder."""
    language, name = _entry(folder, module)
    if language == JAVASCRIPT:
        return policy
    folder = folder.resolve()
    if any(grant.guest == SOURCE for grant in policy.dirs):
        raise BuildError(f"{SOURCE} is reserved for the guest's source in dev mode; use another path in `dirs`")
    source = DirGrant(host=folder, guest=SOURCE, writable=False)
    return replace(policy, dirs=(*policy.dirs, source), env={**policy.env, MODULE_VARIABLE: name})


class SourceWatch:
    """Watches a guest folder on a thread of its own (`watchfiles`); `changed` is set on every save.

    Caches, bytecode and editor temp files are ignored (watchfiles' default filter). `close()`
    stops the thread (within `WATCH_STEP` seconds) and is idempotent; usable as a context manager."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self.changed = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="agent-host-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import watchfiles  # only dev mode pays for it

        for _changes in watchfiles.watch(
            self.folder, stop_event=self._stop, debounce=WATCH_DEBOUNCE_MS, step=WATCH_STEP_MS, yield_on_timeout=False
        ):
            self.changed.set()

    def wait(self, stop: StopToken) -> bool:
        """Block until the source changes (True, and the flag is cleared) or `stop` is set (False)."""
        while not stop.stopped:
            if self.changed.wait(WATCH_STEP_MS / 1000):
                self.changed.clear()
                return True
        return False

    def require_folder(self) -> None:
        """Raise `UsageError` when the watched folder is gone (renamed or removed): dev mode stops."""
        if not self.folder.is_dir():
            raise UsageError(
                f"{self.folder}: the guest folder is gone (renamed or removed); dev mode stops",
                hint="run `agent-host dev` again with the folder's new path",
            )

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> SourceWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_until_changed(
    host: Host, wasm: Path, input_text: str, agent: str, policy: AgentPolicy, watch: SourceWatch
) -> RunResult | None:
    """Run the guest once in dev mode; if its source changes while it runs, stop it (cooperatively:
    its waits end, its wasm traps at the next time slice) and return None: the caller starts it
    again with the new code. Raises `Interrupted` once the host is stopped, `UsageError` when the
    watched folder is gone (renamed or removed: its preopen would fail)."""
    watch.require_folder()
    guest = host.start(wasm, input_text, agent=agent, policy=policy)
    stopped = False
    while True:
        outcome = guest.join(WATCH_STEP_MS / 1000)
        if outcome is not None:
            # However a stopped run ended (a trap, or an `err` made of the `cancelled` its host call
            # got), it is not reported: the new code runs next. The change that stopped it is used up.
            return None if stopped else outcome
        if not stopped and watch.changed.is_set():
            watch.changed.clear()
            guest.stop(SOURCE_CHANGED)
            stopped = True
