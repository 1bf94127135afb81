"""A guest cannot hold more host file descriptors than its `max_open_files` through its granted folders.

Provenance: docs/notes/hardening-open.md, item 10. A guest with a `dirs` grant that called `os.open`
in a loop (or opened folders, or held directory streams) held host descriptors up to `ulimit -n`;
then other guests failed `internal` and `serve` stopped accepting. Now the run is stopped with the
limit named (`limit-exceeded` for serve's clients), its descriptors are released, and the next run
of the same host works.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from agent_host import Host
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from agent_host.errors import ErrorCode
from agent_host.serve.agents import TRIPPED_CODES
from tests.support.component import REPO

pytestmark = pytest.mark.component

HOARDER: Final = REPO / "tests" / "guests" / "hoarder"
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
    outcome = host.run(
        wasm, json.dumps({"path": "/data", "how": how, "count": count}), agent="hoard",
        policy=host.policy("hoard", host.config.agents["hoard"]),
    )  # fmt: skip
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
