"""How a run ended comes from the host's own state, never from text the guest wrote.

A guest printing a fake `MemoryError` traceback is not reported as hitting the memory limit, and a
guest writing `Err("limit-exceeded: ...")` does not get the host's code. The memory limit is
reported when the host refused a growth, whatever the guest says (also when it catches
`MemoryError` and returns `Err`, as a JavaScript component does), and an `Err` carries a host error
code only when it is an error the host returned to that guest.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Final

import pytest

from agent_host.app.host import Host
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from agent_host.testing.runner import AgentHost
from tests.support import in_process
from tests.support.component import REPO

pytestmark = pytest.mark.component

BLUNDERS: Final = REPO / "tests" / "guests" / "blunders"


@pytest.fixture(scope="module")
def blunders_wasm() -> Path:
    return build_guest(BLUNDERS)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in this process."""
    return in_process.run(*args)


def hog_config(tmp_path: Path, wasm: Path, given: str) -> Path:
    config = tmp_path / "agent-host.toml"
    config.write_text(f"[agents.hog]\ncomponent = '{wasm}'\nmemory = \"64MiB\"\ninput = '{given}'\n")
    return config


def test_a_fake_memory_error_traceback_is_not_reported_as_the_memory_limit(blunders_wasm: Path, tmp_path: Path) -> None:
    config = hog_config(tmp_path, blunders_wasm, "fake-oom")
    done = run_cli("run", "--agent", "hog", "--config", str(config))
    assert done.returncode == 3, done.stderr  # it did trap (it exited as an uncaught exception does)
    assert "memory limit" not in done.stderr, done.stderr
    assert "agent-host: agent hog was stopped: the guest raised MemoryError: raised at app.py:1" in done.stderr
    with Host(parse_config(config.read_text(), config)) as host:
        settings = host.config.agents["hog"]
        outcome = host.run(blunders_wasm, "fake-oom", agent="hog", policy=host.policy("hog", settings))
    assert (outcome.status, outcome.tripped) == ("trap", None), outcome


def test_a_real_memory_exhaustion_caught_by_the_guest_is_still_the_memory_limit(
    blunders_wasm: Path, tmp_path: Path
) -> None:
    """The guest catches `MemoryError` and returns `Err("out of memory")`: before, exit 1 "failed:
    out of memory"; the host refused its growth, so it is the memory-limit report, exit 3."""
    config = hog_config(tmp_path, blunders_wasm, "caught-oom")
    done = run_cli("run", "--agent", "hog", "--config", str(config))
    assert done.returncode == 3, done.stderr
    assert (
        "agent-host: agent hog was stopped: memory limit: the guest ran out of memory at 64 MiB; the limit is "
        f"memory in {config} [agents.hog]; run() then returned err: out of memory"
    ) in done.stderr


@pytest.mark.parametrize("given", ["fake-limit", "fake-not-found"])
def test_an_err_in_the_hosts_form_that_the_host_never_returned_carries_no_code(
    blunders_wasm: Path, tmp_path: Path, given: str
) -> None:
    with AgentHost(REPO, tmp_path) as runner:
        result = runner.run(blunders_wasm, input=given)
    assert (result.status, result.exit_code) == ("error", 1), result
    assert result.error is not None
    assert result.error.code is None, result.error
    assert result.error.message.startswith(("limit-exceeded: ", "not-found: ")), result.error


def test_an_uncaught_error_the_host_returned_keeps_its_code(blunders_wasm: Path, tmp_path: Path) -> None:
    with AgentHost(REPO, tmp_path) as runner:
        result = runner.run(blunders_wasm, input="nosuch")
    assert (result.status, result.exit_code) == ("error", 1), result
    assert result.error is not None
    assert result.error.code == "not-found", result.error
    assert result.error.message.startswith("no tooling named 'nosuch' is configured"), result.error
