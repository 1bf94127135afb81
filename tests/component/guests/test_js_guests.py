"""JavaScript guests, first class: a folder with `app.js` is built with componentize-js (pinned,
installed into the cache on first use), run, served, tested with the plugin and developed with
`dev`, and its failures are reported like a Python guest's.

The JS twin of the probe and blunders guests is tests/guests/jsprobe (its input picks what it does).
Skipped, with the reason, where node or npm is missing.

Authoring (a syntax error, `new --lang js`, `bindings --lang ts`, `dev`) is in test_js_authoring.py.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import anyio
import pytest
from mcp import Client

from agent_host import AgentHost, Host
from agent_host.components import js_build, js_toolchain
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from agent_host.errors import ExitCode
from agent_host.serve.catalog import build_catalog
from agent_host.serve.mcp_server import build_server
from tests.support import in_process
from tests.support.component import REPO, granted
from tests.support.processes import leaked

pytestmark = [pytest.mark.component, pytest.mark.npm, pytest.mark.timeout(300)]
"""Longer than the suite's 60 s: the first test builds (componentize-js) and compiles, a fresh run installs the
toolchain first."""

JSPROBE: Final = REPO / "tests" / "guests" / "jsprobe"
WAIT: Final = 120.0
"""Seconds a dev-mode child may take for an answer (a JavaScript rebuild and compile is ~15 s)."""


def line_of(text: str, file: str = "app.js") -> int:
    """The line of tests/guests/jsprobe/FILE holding `text` (1-based)."""
    lines = (JSPROBE / file).read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


@pytest.fixture(scope="module")
def jsprobe(toolchain: js_toolchain.Toolchain) -> Path:
    return build_guest(JSPROBE)


@pytest.fixture(scope="module")
def host(jsprobe: Path) -> Iterator[Host]:
    config = parse_config(
        '[agents.hog]\nmemory = "64MiB"\ncpu_time = 2.0\n'
        + '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n',
        REPO / "agent-host.toml",
    )
    with Host(config) as host:
        host.session("warm-up", allow=["demo"]).get("demo")  # its server predates each test (the leak check's baseline)
        host.runtime.load(jsprobe)  # compiled once, before the tests
        yield host
    assert not leaked(), "closing the host left processes behind"


def run(host: Host, wasm: Path, text: str, agent: str = "jsprobe") -> Any:
    policy = host.policy(agent, host.config.agents.get(agent), ["demo"]) if agent == "hog" else granted(host, agent)
    return host.run(wasm, text, agent=agent, policy=policy)


def test_a_js_guest_lists_and_calls_the_tools_of_a_stdio_server(host: Host, jsprobe: Path) -> None:
    tools = run(host, jsprobe, "tools")
    assert (tools.status, tools.text) == ("ok", "echo,add,word_count,fail,sleep,set_note")
    echoed = run(host, jsprobe, "echo hello there")
    assert (echoed.status, echoed.text) == ("ok", "hello there")
    readme = run(host, jsprobe, "read demo://readme")
    assert readme.status == "ok" and "agent-host tools demo" in readme.text


def test_an_async_call_delivers_its_progress_then_its_result_under_its_id(host: Host, jsprobe: Path) -> None:
    outcome = run(host, jsprobe, "async")
    assert (outcome.status, outcome.text) == ("ok", "progress,progress,tool-result")


def test_a_handle_dropped_with_symbol_dispose_cancels_its_open_call(host: Host, jsprobe: Path) -> None:
    outcome = run(host, jsprobe, "dispose")
    assert (outcome.status, outcome.text) == ("ok", "demo again; after dispose: nothing")


def test_a_caught_host_error_carries_the_wit_error_as_payload(host: Host, jsprobe: Path) -> None:
    outcome = run(host, jsprobe, "caught")
    expected = "not-found|no tooling named 'nosuch' is configured; granted to this agent: demo"
    assert (outcome.status, outcome.text) == ("ok", expected)


def test_failures_read_like_a_python_guests_with_the_guests_own_lines(host: Host, jsprobe: Path) -> None:
    """An escaped Error and an escaped host error become `err` texts naming the guest's line (the
    host believes the code of the one it returned), a thrown string passes through, a value that is
    not a string is named; each exits 1 on the command line, as a Python guest's `Err` does."""
    thrown = run(host, jsprobe, "throw")
    assert (thrown.status, thrown.exit_code) == ("error", ExitCode.GUEST_ERROR)
    assert thrown.text == f"Error: boom (at app.js:{line_of('new Error')}:{thrown.text.rsplit(':', 1)[1]}"
    assert thrown.error_code is None
    escaped = run(host, jsprobe, "nosuch")
    assert escaped.status == "error" and escaped.error_code == "not-found"
    prefix = "not-found: no tooling named 'nosuch' is configured; granted to this agent: demo (raised at app.js:"
    nosuch = line_of('mode === "nosuch"')
    assert escaped.text.startswith(f"{prefix}{nosuch}:"), escaped.text
    assert run(host, jsprobe, "err").text == "declined"
    forged = run(host, jsprobe, "forged")  # a code the host never returned is not believed
    assert (forged.status, forged.error_code, forged.exit_code) == ("error", None, ExitCode.GUEST_ERROR), forged
    assert forged.text == "limit-exceeded: the memory limit was reached (raised at unknown place)"  # no stack
    badarg = run(host, jsprobe, "badarg")  # a binding's TypeError, with the guest's place
    place = line_of('mode === "badarg"')
    assert badarg.text.startswith(f"TypeError: expected a string, received [number] (at app.js:{place}:"), badarg
    unreadable = run(host, jsprobe, "unreadable")  # reading what was thrown throws: still an err, not a trap
    assert (unreadable.status, unreadable.text) == (
        "error",
        "run() threw a value that could not be described (reading it threw too)",
    )
    assert run(host, jsprobe, "number").text == "run() must return a string, got number (app.js)"
    promised = run(host, jsprobe, "promise").text
    assert promised.startswith("run() must return a string, got a Promise (run must not be async"), promised


def test_the_memory_and_cpu_limits_give_the_same_reports_and_exit_codes_as_for_python(
    host: Host, jsprobe: Path
) -> None:
    """StarlingMonkey reports running out of memory as the guest's own error: the host decides from
    the growth it refused, not from the guest's words."""
    hog = run(host, jsprobe, "oom", agent="hog")
    assert (hog.status, hog.exit_code, hog.tripped) == ("trap", ExitCode.TRAP, "memory"), hog
    assert hog.text.startswith("memory limit: the guest ran out of memory at 64 MiB; the limit is memory in"), hog
    spin = run(host, jsprobe, "spin", agent="hog")
    assert (spin.status, spin.exit_code, spin.tripped) == ("trap", ExitCode.TRAP, "cpu_time"), spin
    assert spin.text.startswith("CPU time limit: run used more than 2 s of CPU"), spin.text
    assert run(host, jsprobe, "now").text == "clocks move"  # the guest's clocks are the host's
    assert run(host, jsprobe, "fetch").text == "undefined"  # no network: no fetch that would trap


def test_the_build_is_keyed_by_the_sources_so_an_unchanged_guest_is_never_rebuilt(
    jsprobe: Path, tmp_path: Path
) -> None:
    """componentize-js's output differs between two builds of the same source; the key does not."""
    before = jsprobe.stat().st_mtime_ns
    (JSPROBE / "app.js").touch()
    assert build_guest(JSPROBE) == jsprobe and jsprobe.stat().st_mtime_ns == before
    copy = tmp_path / "jsprobe"
    shutil.copytree(JSPROBE, copy)
    key = js_build.js_build_key(copy, "app.js")
    (copy / "node_modules").mkdir()
    (copy / "node_modules" / "left-pad.js").write_text("export default 1;\n")
    (copy / ".editor").write_text("state")
    assert js_build.js_build_key(copy, "app.js") == key, "node_modules and hidden files are not the guest"
    (copy / "words.js").write_text((copy / "words.js").read_text() + "// changed\n")
    assert js_build.js_build_key(copy, "app.js") != key


def test_the_command_line_reports_a_js_failure_and_exits_1(jsprobe: Path) -> None:
    done = in_process.run("run", str(JSPROBE), "--input", "throw")
    assert done.returncode == ExitCode.GUEST_ERROR
    assert f"agent-host: agent jsprobe failed: Error: boom (at app.js:{line_of('new Error')}:" in done.stderr


def test_serve_offers_a_js_agent_as_a_tool(jsprobe: Path, tmp_path: Path) -> None:
    config = parse_config(
        f'[agents.js]\ncomponent = "{JSPROBE}"\ndescription = "The JS twin of the probe."\n', tmp_path / "a.toml"
    )

    async def main() -> Any:
        with Host(config) as host:
            catalog = build_catalog(host, config)
            async with catalog.running(), Client(build_server(catalog)) as client:
                return await client.call_tool("js", {"input": "err"}), await client.call_tool("js", {"input": "x"})

    failed, fine = anyio.run(main)
    assert (failed.is_error, failed.content[0].text) == (True, "tool-failed: agent js failed: declined")
    assert (fine.is_error, fine.content[0].text) == (False, "fine: x")


def test_the_pytest_fixture_runs_a_js_guest_built_and_in_dev_mode(agent_host: AgentHost, jsprobe: Path) -> None:
    for dev in (False, True):
        result = agent_host.run(JSPROBE, input="echo from the fixture", toolings={"demo": _DEMO}, dev=dev)
        assert (result.exit_code, result.output) == (0, "from the fixture"), result.stderr
    failed = agent_host.run(JSPROBE, input="throw", toolings={"demo": _DEMO})
    assert failed.exit_code == 1 and failed.error is not None
    assert (failed.error.status, failed.error.code) == ("error", None)
    assert failed.error.message.startswith("Error: boom (at app.js:"), failed.error


_DEMO: Final = {"command": "${AGENT_HOST_PYTHON}", "args": ["-m", "agent_host.demo_server"]}


def test_a_js_guests_run_is_recorded_and_replayed_with_no_server(jsprobe: Path, tmp_path: Path) -> None:
    """Record and replay work for JavaScript guests as for Python ones."""
    live_config = tmp_path / "agent-host.toml"
    live_config.write_text(
        '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
    )
    offline = tmp_path / "offline.toml"
    offline.write_text('[tooling.demo]\ncommand = "/nonexistent/demo-server"\n')
    cassette = tmp_path / "js.json"
    common = ("run", str(JSPROBE), "--allow", "demo")
    live = in_process.run(*common, "--config", str(live_config), "--input", "async", "--record", str(cassette))
    assert live.returncode == 0, live.stderr
    tape = json.loads(cassette.read_text())["agents"]["jsprobe"]
    assert [call["fn"] for call in tape["calls"]][:2] == ["get", "call-tool"]
    again = in_process.run(*common, "--config", str(offline), "--replay", str(cassette))
    assert (again.returncode, again.stdout) == (0, live.stdout), again.stderr
