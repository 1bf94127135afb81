"""Helpers and fixtures of component tests (registered by tests/component/conftest.py): the probe
guest, hosts, and real MCP servers on 127.0.0.1.

- `probe_wasm`: tests/guests/probe built once per run (cached across runs by content).
- `probe(host, steps)`: run the probe guest with a script; returns its per-step results.
- `demo_host`: one host per module on the embedded default config (tooling `demo` over stdio),
  connected eagerly so its server predates each test; closing it must leave no process.
- `http_demo`: the bundled server over streamable HTTP on a free 127.0.0.1 port, stopped after.
- `toolchain`: the JavaScript guest toolchain (skipped without node and npm).
- `everything_bin`: @modelcontextprotocol/server-everything installed (pinned) into the cache
  folder; the test is skipped, with the reason, when node or npm is missing.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from agent_host import Host, default_config
from agent_host._support.paths import cache_dir
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from agent_host.policy.grants import AgentPolicy
from tests.support.processes import descendants, leaked

REPO: Final = Path(__file__).resolve().parents[2]
PROBE: Final = REPO / "tests" / "guests" / "probe"
EVERYTHING_PACKAGE: Final = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION: Final = "2026.8.31"
SERVER_START_TIMEOUT: Final = 30.0
"""Seconds a test server may take to print its URL."""

Steps = list[dict[str, Any]]


@pytest.fixture(scope="session")
def probe_wasm() -> Path:
    return build_guest(PROBE)


def granted(host: Host, agent: str) -> AgentPolicy:
    """A policy granting `agent` every tooling of `host`'s config, with the default limits."""
    return host.policy(agent, allow=["*"])


def probe(host: Host, wasm: Path, steps: Steps, agent: str = "probe") -> list[dict[str, Any]]:
    """Run the probe guest with `steps`, granted every tooling; fail the test unless `run` returned ok."""
    outcome = host.run(wasm, json.dumps({"steps": steps}), agent=agent, policy=granted(host, agent))
    assert outcome.status == "ok", outcome
    results: list[dict[str, Any]] = json.loads(outcome.text)
    return results


def ok(result: dict[str, Any]) -> Any:
    assert "ok" in result, result
    return result["ok"]


def err(result: dict[str, Any]) -> dict[str, Any]:
    assert "err" in result, result
    error: dict[str, Any] = result["err"]
    return error


def config_from(text: str, folder: Path) -> Any:
    return parse_config(text, folder / "agent-host.toml")


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[Callable[[str], Host]]:
    """Hosts from TOML text, closed after the test."""
    hosts: list[Host] = []

    def make(text: str) -> Host:
        host = Host(config_from(text, tmp_path))
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


@pytest.fixture(scope="module")
def demo_host() -> Iterator[Host]:
    host = Host(default_config())
    session = host.session("warm-up")
    session.get("demo")
    yield host
    host.close()
    left = leaked()
    assert not left, f"closing the host left processes behind: {left}"


class Server:
    """A server child process that printed `listening on URL` and is stopped by `stop()`."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        import selectors

        assert self.process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        if not selector.select(SERVER_START_TIMEOUT):
            self.stop()
            raise AssertionError(f"server did not start within {SERVER_START_TIMEOUT} s")
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            self.stop()
            raise AssertionError(f"unexpected first line from the server: {line!r}")
        return line.split()[-1]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


TRANSPORTS: Final = ("stdio-2026", "stdio-2025", "http-2026", "http-2025")
"""How a test server is reached: transport and MCP protocol era (for `served_keys`)."""


@contextmanager
def served_keys(module: str, transport: str) -> Iterator[str]:
    """The keys of a `[tooling.NAME]` table reaching test server `module` (tests/servers/*.py) over
    `transport` (one of `TRANSPORTS`); an HTTP server runs for the block."""
    era = 'protocol = "2025-11-25"\n' if transport.endswith("2025") else ""
    if not transport.startswith("http"):
        yield f'command = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "{module}"]\ncwd = "{REPO}"\n' + era
        return
    server = Server([sys.executable, "-m", module, "--http", "0"])
    try:
        yield f'url = "{server.url}"\n' + era
    finally:
        server.stop()


@pytest.fixture
def http_demo() -> Iterator[Server]:
    server = Server([sys.executable, "-m", "agent_host.demo_server", "--http", "0"])
    yield server
    server.stop()


def npm_bin(package: str, version: str, command: str) -> Path:
    """`command` of npm `package@version`, installed (pinned) into the cache folder on first use;
    the test is skipped, with the reason, when node or npm is missing."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(f"{package} needs node and npm, which are not on PATH")
    prefix = cache_dir() / "npm" / f"{package.rsplit('/', 1)[-1]}-{version}"
    binary = prefix / "node_modules" / ".bin" / command
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.with_suffix(".lock"), "w") as lock:  # test workers in parallel install it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            _npm_install(npm, prefix, f"{package}@{version}")
    if not binary.exists():
        pytest.fail(f"npm install {package}@{version} left no {command}")
    return binary


def _npm_install(npm: str, prefix: Path, spec: str) -> None:
    done = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", spec],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.fail(f"npm install {spec} failed:\n{done.stderr[-2000:]}")


@pytest.fixture(scope="session")
def toolchain() -> Any:
    """The JavaScript guest toolchain (componentize-js and jco), installed into the cache on first
    use; the test is skipped, with the reason, when node or npm is missing."""
    from agent_host.components import js_toolchain
    from agent_host.errors import BuildError

    try:
        return js_toolchain.toolchain()
    except BuildError as exc:
        pytest.skip(f"JavaScript guests need node and npm: {exc.message}")


@pytest.fixture(scope="session")
def everything_bin() -> Path:
    return npm_bin(EVERYTHING_PACKAGE, EVERYTHING_VERSION, "mcp-server-everything")


OBSERVED_TOML: Final = (
    f'[tooling.t]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.observed"]\ncwd = "{REPO}"\n'
)
"""Tooling `t`: tests/servers/observed.py over stdio (2026-07-28 era unless the era fixture says otherwise)."""


@dataclass(frozen=True)
class Era:
    """One MCP protocol era of the observed test server."""

    name: str
    toml: str

    def upstream(self, activity: dict[str, Any]) -> list[list[str]]:
        """What the server is asked to watch: one URI list per upstream subscription."""
        if self.name == "2026":
            listens: list[list[str]] = activity["listens"]
            return listens
        return [[uri] for uri in activity["subscribed"]]


@pytest.fixture(params=["2026", "2025"])
def era(request: pytest.FixtureRequest) -> Era:
    """The observed server over stdio, on the 2026-07-28 era (listen) or 2025-11-25 (resources/subscribe)."""
    if request.param == "2026":
        return Era("2026", OBSERVED_TOML)
    return Era("2025", OBSERVED_TOML + 'protocol = "2025-11-25"\n')


EVENTUALLY: Final = 15.0
"""Seconds `eventually` waits for the observed server to reach a state."""


def activity(host: Host, tooling: str = "t") -> dict[str, Any]:
    """What the observed server reports (`activity` tool), asked through `host`'s shared connection."""
    session = host.session("observer", allow=["*"])
    rep = session.get(tooling)
    value: dict[str, Any] = json.loads(session.call_tool_blocking(rep, "activity", "{}").value)["structuredContent"]
    session.close()
    return value


def eventually(host: Host, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Poll the observed server's activity until `check` accepts it (fail after EVENTUALLY s)."""
    deadline = time.monotonic() + EVENTUALLY
    while True:
        seen = activity(host)
        if check(seen):
            return seen
        assert time.monotonic() < deadline, f"the server never reached the expected state: {seen}"
        time.sleep(0.05)


def everything_toml(binary: Path, name: str = "everything") -> str:
    return f'[tooling.{name}]\ncommand = "{binary}"\nargs = ["stdio"]\ntimeout = 30\n'


__all__ = ["descendants"]


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    """A Ray cluster of 2 CPUs started with `ray start --head`, stopped after the module: its address."""
    from tests.support.ray_cluster import start_head

    head = start_head()
    try:
        yield head.address
    finally:
        head.stop()
