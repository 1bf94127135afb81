"""Every spelling of an import reaches what the host provides, or the component is refused at load.

wasmtime's linker takes an import by its exact name, else by its semver track, ignoring build
metadata. A component naming WASI's monotonic clock in any way the linker accepts gets the host's
clock, so its hour-long sleep ends at the run's 1 s limit; one naming an interface, a version or a
track the host does not provide is refused before it runs, naming the import, and `config check`
says the same. The components are written by hand (`tests.support.wat`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest
import wasmtime

from agent_host import Host
from agent_host.errors import ComponentError, ExitCode
from tests.support import in_process, wat

pytestmark = pytest.mark.component

BOUND: Final = 30.0
"""Seconds a test waits for a guest its 1 s limit stops (far below the hour it sleeps)."""

CLOCK: Final = "wasi:clocks/monotonic-clock"

SERVED: Final = [
    (f"{CLOCK}@0.2.0", wat.POLL),
    (f"{CLOCK}@0.2.0+x", wat.POLL),
    (f"{CLOCK}@0.2.12", wat.POLL),
    (f"{CLOCK}@0.2.12+build.7", "wasi:io/poll@0.2.12+build.7"),
    (f"{CLOCK}@0.2.1+001.a-b", "wasi:io/poll@0.2.9+y"),
    (f"{CLOCK}@0.2.99999999999", wat.POLL),
    (f"{CLOCK}@0.2.18446744073709551615", "wasi:io/poll@0.2.18446744073709551615"),
]
"""(clock, poll) import names the linker resolves to WASI 0.2: the clock is the host's whatever the spelling."""

REFUSED: Final = [
    f"{CLOCK}@0.2.0-rc.1",
    f"{CLOCK}@0.2.0-rc-2023-11-10",
    f"{CLOCK}@0.3.0",
    f"{CLOCK}@1.0.0",
    f"{CLOCK}@0.0.1",
    CLOCK,
    "wasi:clocks/monotonic-clock2@0.2.0",
    "acme:clocks/monotonic-clock@0.2.0",
]
"""Clock import names the host provides nothing under (a pre-release, another track, no version, another package)."""


def _component(folder: Path, name: str, clock: str, poll: str = wat.POLL) -> Path:
    wasm = folder / f"{name}.wasm"
    wasm.write_bytes(bytes(wasmtime.wat2wasm(wat.sleeper(clock, poll))))
    return wasm


def test_every_spelling_of_the_wasi_clock_gets_the_hosts_clock(
    make_host: Callable[[str], Host], tmp_path: Path
) -> None:
    host = make_host("[agents.raw]\ntimeout = 1\n")
    policy = host.policy("raw", host.config.agents["raw"])
    wasms = [_component(tmp_path, f"sleeper{index}", clock, poll) for index, (clock, poll) in enumerate(SERVED)]
    for wasm in wasms:
        host.runtime.load(wasm)  # compiled before the runs' clocks start
    guests = [host.start(wasm, "", agent="raw", policy=policy) for wasm in wasms]
    for (clock, poll), guest in zip(SERVED, guests, strict=True):
        outcome = guest.join(BOUND)
        assert outcome is not None, f"{clock} with {poll}: the guest still sleeps {BOUND:g} s later"
        assert (outcome.status, outcome.tripped) == ("trap", "wall_time"), (clock, poll, outcome)
        assert not guest.abandoned, f"{clock}: the sleep was WASI's own (its run was given up on)"


@pytest.mark.parametrize("clock", REFUSED)
def test_a_clock_the_host_does_not_provide_is_refused_at_load_naming_it(
    make_host: Callable[[str], Host], tmp_path: Path, clock: str
) -> None:
    wasm = _component(tmp_path, "odd", clock)
    host = make_host("[agents.raw]\ntimeout = 1\n")
    with pytest.raises(ComponentError) as refused:
        host.start(wasm, "", agent="raw", policy=host.policy("raw", host.config.agents["raw"]))
    assert f"imports {clock}, which agent-host does not provide" in refused.value.message


def test_config_check_refuses_an_unusual_spelling_it_cannot_serve(tmp_path: Path) -> None:
    wasm = _component(tmp_path, "odd", f"{CLOCK}@0.2.0-rc.1")
    (tmp_path / "agent-host.toml").write_text(f'[agents.odd]\ncomponent = "{wasm}"\n')
    checked = in_process.run("config", "check", cwd=tmp_path)
    assert checked.returncode == ExitCode.USAGE_ERROR, checked.stderr
    assert f"{CLOCK}@0.2.0-rc.1, which agent-host does not provide" in checked.stderr
