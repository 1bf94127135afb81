"""A guest cannot hold more host file descriptors than its `max_open_files` through its granted folders.

A guest with a `dirs` grant that calls `os.open` in a loop (or opens folders, or holds directory
streams) cannot hold host descriptors up to `ulimit -n` (other guests would fail `internal` and
`serve` stop accepting): the run is stopped with the limit named (`limit-exceeded` for serve's
clients), its descriptors are released, and the next run of the same host works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from agent_host import Host
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from agent_host.errors import ErrorCode
from agent_host.model import RunResult
from agent_host.runtime.descriptors import HOST_RESERVE
from agent_host.runtime.guest import GuestThread
from agent_host.serve.agents import TRIPPED_CODES
from tests.support.component import REPO
from tests.support.output_lines import Lines

pytestmark = pytest.mark.component

HOARDER: Final = REPO / "tests" / "guests" / "probe"  # its hoarder part (hoarder.py)
LIMIT: Final = 64
MANY: Final = 3000
"""Descriptors the hostile run asks for: far more than `LIMIT`, less than this machine's `ulimit -n`."""


@pytest.fixture(scope="module")
def hoarder_wasm() -> Path:
    return build_guest(HOARDER)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    data = tmp_path / "data"
    data.mkdir()
    (data / "f").write_text("x")
    toml = f"""
[host]
max_open_files = 1000

[agents.hoard]
dirs = [{{ host = "{data}", guest = "/data" }}]
max_open_files = {LIMIT}
"""
    made = Host(parse_config(toml, tmp_path / "agent-host.toml"))
    yield made
    made.close()


def hoard(host: Host, wasm: Path, how: str, count: int) -> tuple[str, str, str | None]:
    guest = host.start(
        wasm, json.dumps({"path": "/data", "how": how, "count": count}), agent="hoard",
        policy=host.policy("hoard", host.config.agents["hoard"]),
    )  # fmt: skip
    outcome = host.wait(guest)
    assert guest.ended(60)  # its thread freed its instance (and descriptors) after giving the outcome
    return outcome.status, outcome.text, outcome.tripped


def held_by_the_process() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("how", ["files", "dirs", "scandir", "streams"])
def test_a_guest_that_opens_descriptors_in_a_loop_is_stopped_at_max_open_files_and_the_next_run_works(
    host: Host, hoarder_wasm: Path, how: str
) -> None:
    warm = hoard(host, hoarder_wasm, how, 1)
    assert warm[0] == "ok", warm
    before = held_by_the_process()
    status, text, tripped = hoard(host, hoarder_wasm, how, MANY)
    assert (status, tripped) == ("trap", "open_files"), text
    assert "max_open_files" in text and f"more than {LIMIT}" in text, text
    assert held_by_the_process() <= before, "the stopped guest's descriptors were not released"
    status, text, _ = hoard(host, hoarder_wasm, how, LIMIT // 2)
    assert status == "ok", text
    assert json.loads(text) == {"held": LIMIT // 2, "error": None}


def test_a_guest_stopped_for_its_descriptors_is_limit_exceeded_for_serve_clients() -> None:
    assert TRIPPED_CODES["open_files"] is ErrorCode.LIMIT_EXCEEDED


CHAIN_FIRST: Final = LIMIT - 14
"""Descriptors the first guest of a chain holds: under `LIMIT`."""
CHAIN_SECOND: Final = LIMIT + CHAIN_FIRST // 2
"""Descriptors the second one opens after the first ended: over `LIMIT`, yet under it less what the
first held (what a baseline taken at its start would have hidden)."""
WAIT: Final = 30.0
"""Seconds any wait of these tests lasts at the most."""
SLEEP_MS: Final = 40_000
"""How long a guest sleeps holding its descriptors: longer than `WAIT`."""


def start_hoard(host: Host, wasm: Path, lines: Lines, **request: object) -> GuestThread:
    text = json.dumps({"path": "/data", "how": "files", **request})
    policy = host.policy("hoard", host.config.agents["hoard"])
    return host.start(wasm, text, agent="hoard", policy=policy, output=lines)


def finish(host: Host, guest: GuestThread) -> RunResult:
    """The guest's outcome once it ended by itself within `WAIT` seconds; else it is stopped and
    the test fails."""
    outcome = guest.join(WAIT)
    if outcome is None:
        guest.stop("the test is over")
        host.wait(guest)
        pytest.fail("the guest was not stopped while it held its descriptors")
    return outcome


def test_a_guest_does_not_inherit_the_descriptors_an_earlier_guest_held_when_it_started(
    host: Host, hoarder_wasm: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first_lines, second_lines = Lines(), Lines()
    first = start_hoard(host, hoarder_wasm, first_lines, count=CHAIN_FIRST, hold_until="/data/end-first")
    first_lines.wait_for(f"holding {CHAIN_FIRST}", WAIT)
    second = start_hoard(host, hoarder_wasm, second_lines, count=CHAIN_SECOND, wait_for="/data/go", sleep_ms=SLEEP_MS)
    second_lines.wait_for("waiting", WAIT)  # its run started while the first held its descriptors
    (data / "end-first").write_text("")
    done = first.join(WAIT)
    assert done is not None and done.status == "ok", done
    (data / "go").write_text("")  # it reopens /data/f: the numbers the first held, the same path
    outcome = finish(host, second)
    assert (outcome.status, outcome.tripped) == ("trap", "open_files"), outcome.text
    assert f"more than {LIMIT}" in outcome.text, outcome.text


def test_a_guest_that_holds_descriptors_and_sleeps_is_stopped_when_another_passes_their_shared_folder_limit(
    host: Host, hoarder_wasm: Path, tmp_path: Path
) -> None:
    sleeper_lines, other_lines = Lines(), Lines()
    sleeper = start_hoard(host, hoarder_wasm, sleeper_lines, count=CHAIN_FIRST, sleep_ms=SLEEP_MS)
    sleeper_lines.wait_for(f"holding {CHAIN_FIRST}", WAIT)
    other = start_hoard(host, hoarder_wasm, other_lines, count=CHAIN_FIRST, sleep_ms=SLEEP_MS)
    sleeper_outcome = finish(host, sleeper)
    other.stop("the test is over")
    host.wait(other)
    assert (sleeper_outcome.status, sleeper_outcome.tripped) == ("trap", "open_files"), sleeper_outcome.text


def test_a_sleeping_guest_is_stopped_when_the_host_nears_its_descriptor_limit(
    hoarder_wasm: Path, tmp_path: Path
) -> None:
    data = tmp_path / "squeezed"
    data.mkdir()
    (data / "f").write_text("x")
    child = subprocess.run(
        [sys.executable, "-m", "tests.support.fd_squeeze", str(hoarder_wasm), str(data), str(SQUEEZED_NOFILE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3 * WAIT,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    outcome = json.loads(child.stdout.splitlines()[-1])
    assert outcome["joined"], f"the sleeping guest was not stopped: {outcome}"
    assert (outcome["status"], outcome["tripped"]) == ("trap", "open_files"), outcome
    assert f"it keeps {HOST_RESERVE}" in outcome["text"], outcome


SQUEEZED_NOFILE: Final = HOST_RESERVE + 400
"""The open-files limit of the squeezed process: room for the host and its guest, not much more."""
