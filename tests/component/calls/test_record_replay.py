"""`agent-host run --record FILE` then `--replay FILE`: a guest's run against real servers replayed
offline, identically; a guest that asks for something else ends `diverged`, naming the call; no
secret of the configuration is written.

The probe guest against the observed server over stdio and over streamable HTTP on 127.0.0.1, with
an asynchronous call and its progress, a resource subscription and its update; the replay runs with
both servers gone (the stdio command does not exist, the HTTP server is stopped).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import in_process
from tests.support.component import PROBE, REPO, Server

pytestmark = pytest.mark.component

STEPS: list[dict[str, Any]] = [
    {"op": "get", "tooling": "t", "as": "t"},
    {"op": "get", "tooling": "h", "as": "h"},
    {"op": "list_tools", "h": "h"},
    {"op": "subscribe_resource", "h": "t", "uri": "obs://a"},
    {"op": "call_blocking", "h": "t", "tool": "set", "args": '{"name": "a", "text": "changed"}'},
    {"op": "drain", "count": 1, "timeout_ms": 20000},  # the subscription's update
    {"op": "call", "h": "t", "tool": "wait", "args": '{"seconds": 0.2, "steps": 3}'},
    {"op": "drain", "ids": {"ref": 6}, "timeout_ms": 20000},  # its progress, then its result
    {"op": "call_blocking", "h": "h", "tool": "echo", "args": '{"text": "over http"}'},
    {"op": "read_resource", "h": "t", "uri": "obs://a"},
    {"op": "call_blocking", "h": "t", "tool": "nosuch", "args": "{}"},
]


def config(folder: Path, url: str, stdio: str = "${AGENT_HOST_PYTHON}", extra: str = "") -> Path:
    path = folder / "agent-host.toml"
    path.write_text(
        f'[tooling.t]\ncommand = "{stdio}"\nargs = ["-m", "tests.servers.observed"]\ncwd = "{REPO}"\n'
        f'[tooling.h]\nurl = "{url}"\n{extra}'
        '[agents.probe]\ntoolings = ["t", "h"]\n'
    )
    return path


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Any:
    return in_process.run("run", str(PROBE), "--agent", "probe", *args, cwd=cwd, env=env)


@pytest.fixture
def http_server() -> Any:
    server = Server([sys.executable, "-m", "tests.servers.observed", "--http", "0"])
    yield server
    server.stop()


def recorded(tmp_path: Path, http_server: Server, steps: list[dict[str, Any]] = STEPS) -> tuple[Any, Path]:
    cassette = tmp_path / "cassettes" / "probe.json"
    live = run("--config", str(config(tmp_path, http_server.url)), "--input", json.dumps({"steps": steps}),
               "--record", str(cassette), cwd=tmp_path)  # fmt: skip
    assert live.returncode == 0, live.stderr
    return live, cassette


def offline(tmp_path: Path) -> Path:
    """A configuration whose servers cannot be reached: no command, a closed port."""
    folder = tmp_path / "offline"
    folder.mkdir(exist_ok=True)
    return config(folder, "http://127.0.0.1:9/mcp", stdio="/nonexistent/observed-server")


def test_a_recorded_run_replays_identically_with_every_server_gone(tmp_path: Path, http_server: Server) -> None:
    live, cassette = recorded(tmp_path, http_server)
    http_server.stop()
    data = json.loads(cassette.read_text())
    assert data["agent-host-cassette"] == 1 and data["wit"] == "agent-host:guest@0.3.0"
    tape = data["agents"]["probe"]
    assert json.loads(tape["input"]) == {"steps": STEPS}
    functions = [call["fn"] for call in tape["calls"]]
    assert functions[:4] == ["get", "get", "list-tools", "subscribe-resource"]
    assert {"call-tool", "call-tool-blocking", "read-resource", "recv"} <= set(functions)
    kinds = [call["ok"]["kind"] for call in tape["calls"] if call["fn"] == "recv" and call.get("ok")]
    assert kinds[0] == "resource-updated" and "progress" in kinds and kinds[-1] == "tool-result", kinds
    assert tape["calls"][-1]["err"]["code"] == "not-found"  # an error answer is recorded as such
    assert tape["outcome"]["status"] == "ok" and tape["outcome"]["text"] == live.stdout.rstrip("\n")

    again = run("--config", str(offline(tmp_path)), "--replay", str(cassette), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == live.stdout  # byte for byte: every answer and envelope from the cassette
    results = json.loads(again.stdout)
    assert results[8]["ok"]["value"]["content"][0]["text"] == "over http"


def test_the_recorded_input_replays_and_another_diverges_naming_both(tmp_path: Path, http_server: Server) -> None:
    """As in the pytest fixture: `--input` with `--replay` replays when it is the recorded input, and
    is a divergence (exit 4) naming both inputs when it is another, before anything runs."""
    steps = [{"op": "get", "tooling": "h", "as": "h"}]
    cassette = tmp_path / "one.json"
    recorded_input = json.dumps({"steps": steps})
    live = run("--config", str(config(tmp_path, http_server.url)), "--input", recorded_input, "--record",
               str(cassette), cwd=tmp_path)  # fmt: skip
    assert live.returncode == 0, live.stderr
    offline_path = offline(tmp_path)
    same = run("--config", str(offline_path), "--replay", str(cassette), "--input", recorded_input, cwd=tmp_path)
    assert (same.returncode, same.stdout) == (0, live.stdout), same.stderr
    other = run("--config", str(offline_path), "--replay", str(cassette), "--input", "dogs", cwd=tmp_path)
    assert other.returncode == 4, other.stderr
    assert f"replay of agent probe diverged: the input is 'dogs'; recorded {recorded_input!r}" in other.stderr
    assert other.stdout == ""


def test_a_guest_asking_for_another_call_ends_diverged_naming_the_call(tmp_path: Path, http_server: Server) -> None:
    _, cassette = recorded(tmp_path, http_server)
    data = json.loads(cassette.read_text())
    changed = [dict(step) for step in STEPS]
    changed[8]["args"] = '{"text": "something else"}'  # the guest now sends other arguments
    data["agents"]["probe"]["input"] = json.dumps({"steps": changed})
    cassette.write_text(json.dumps(data))
    replayed = run("--config", str(offline(tmp_path)), "--replay", str(cassette), "--json", cwd=tmp_path)
    assert replayed.returncode == 4, replayed.stderr
    outcome = json.loads(replayed.stdout)
    assert outcome["status"] == "diverged" and outcome["exit_code"] == 4
    text = outcome["output"]
    assert text.startswith("replay of agent probe diverged: call ")
    assert 'recorded call-tool-blocking(2, "echo", "{\\"text\\": \\"over http\\"}")' in text, text
    assert 'asked call-tool-blocking(2, "echo", "{\\"text\\": \\"something else\\"}")' in text, text


def test_a_replay_of_an_agent_the_cassette_lacks_or_of_another_contract_is_refused(
    tmp_path: Path, http_server: Server
) -> None:
    _, cassette = recorded(tmp_path, http_server, STEPS[:1])
    data = json.loads(cassette.read_text())
    data["agents"] = {"someone": data["agents"]["probe"]}
    cassette.write_text(json.dumps(data))
    lacking = run("--config", str(offline(tmp_path)), "--replay", str(cassette), cwd=tmp_path)
    assert lacking.returncode == 2
    assert "no recording of agent probe; recorded: someone" in lacking.stderr
    data["wit"] = "agent-host:guest@0.1.0"
    cassette.write_text(json.dumps(data))
    contract = run("--config", str(offline(tmp_path)), "--replay", str(cassette), cwd=tmp_path)
    assert contract.returncode == 2
    assert "recorded against 'agent-host:guest@0.1.0'" in contract.stderr


def test_no_value_from_the_environment_is_written_to_a_cassette(tmp_path: Path, http_server: Server) -> None:
    secrets = {"TOKEN": "tok-3141592653", "KEY": "key-2718281828", "GREETING_SECRET": "greet-1618033988"}
    extra = 'headers = { Authorization = "Bearer ${TOKEN}" }\n'
    path = config(tmp_path, http_server.url, extra=extra)
    path.write_text(
        path.read_text().replace('cwd = "', 'env = { API_KEY = "${KEY}" }\ncwd = "', 1)
        + 'env = { GREETING = "${GREETING_SECRET}" }\n'
    )
    echo = json.dumps({"text": secrets["GREETING_SECRET"]})
    steps = [{"op": "get", "tooling": "h", "as": "h"}, {"op": "env"},
             {"op": "call_blocking", "h": "h", "tool": "echo", "args": echo}]  # fmt: skip
    cassette = tmp_path / "probe.json"
    live = run("--config", str(path), "--input", json.dumps({"steps": steps}), "--record", str(cassette),
               cwd=tmp_path, env=secrets)  # fmt: skip
    assert live.returncode == 0, live.stderr
    assert secrets["GREETING_SECRET"] in live.stdout  # the guest saw it (its env, its own argument)
    text = cassette.read_text()
    for name, value in secrets.items():
        assert value not in text, name
    assert "${secret}" in text


def test_a_changed_guest_replayed_from_its_source_diverges_at_its_first_new_call(tmp_path: Path) -> None:
    """A guest written with `agent-host new`, recorded and replayed with the dev runner (from its
    source, no build), then changed: its replay names the call that differs."""
    made = in_process.run("new", "scout", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    guest = tmp_path / "guests" / "scout"
    cassette = tmp_path / "scout.json"
    live = in_process.run("run", "--dev", str(guest), "--input", "cats", "--record", str(cassette), cwd=tmp_path)
    assert live.returncode == 0, live.stderr
    same = in_process.run("run", "--dev", str(guest), "--replay", str(cassette), cwd=tmp_path)
    assert (same.returncode, same.stdout) == (0, live.stdout), same.stderr
    app = guest / "app.py"
    app.write_text(
        app.read_text().replace('demo.call("echo", text=input or "hello")', 'demo.call("echo", text="dogs")')
    )
    changed = in_process.run("run", "--dev", str(guest), "--replay", str(cassette), cwd=tmp_path)
    assert changed.returncode == 4, changed.stderr
    assert "agent-host: replay of agent scout diverged: call 3 of " in changed.stderr
    assert 'call 3 of 3: recorded call-tool-blocking(1, "echo", "{\\"text\\": \\"cats\\"}"), ' in changed.stderr
    assert 'asked call-tool-blocking(1, "echo", "{\\"text\\": \\"dogs\\"}")' in changed.stderr


def test_a_recording_stopped_by_a_signal_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    import signal

    from tests.support import cli_process
    from tests.support.processes import wait_for_line

    cassette = tmp_path / "kept.json"
    first = in_process.run("run", str(PROBE), "--input", '{"steps": []}', "--record", str(cassette), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    previous = cassette.read_text()
    steps = [{"op": "eprint", "text": "waiting"}, {"op": "recv", "timeout_ms": 60000}]
    process = cli_process.start("run", str(PROBE), "--input", json.dumps({"steps": steps}), "--record", str(cassette),
                                cwd=tmp_path)  # fmt: skip
    try:
        wait_for_line(process, "[probe] waiting")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert f"--record {cassette}: not written: the command was stopped" in err
    assert cassette.read_text() == previous


def test_a_replay_keeps_the_agents_grants_and_ends_again_at_a_time_limit(tmp_path: Path, http_server: Server) -> None:
    """Found attacking the feature: a replay answered calls the agent's grants no longer allowed, and
    a run the host ended at its wall-clock limit could not be replayed (the recorded `cancelled`
    answer came at once and the guest went on)."""
    # Over HTTP (no server to start) and 6 s: the limit must fall in the wait, not in connecting,
    # even on a loaded machine (2 s over stdio ended one CI run's recording while it connected).
    steps = [{"op": "get", "tooling": "h", "as": "h"},
             {"op": "call_blocking", "h": "h", "tool": "wait", "args": '{"seconds": 60}'}]  # fmt: skip
    path = config(tmp_path, http_server.url)
    path.write_text(path.read_text() + "timeout = 6\n")
    cassette = tmp_path / "slow.json"
    live = run("--config", str(path), "--input", json.dumps({"steps": steps}), "--record", str(cassette), cwd=tmp_path)
    assert live.returncode == 3, live.stderr
    assert [call["fn"] for call in json.loads(cassette.read_text())["agents"]["probe"]["calls"]] == [
        "get",
        "call-tool-blocking",
    ]
    stopped = [line for line in live.stderr.splitlines() if "was stopped" in line]
    assert stopped and "time limit" in stopped[0], live.stderr
    offline_path = offline(tmp_path)
    offline_path.write_text(offline_path.read_text() + "timeout = 6\n")
    again = run("--config", str(offline_path), "--replay", str(cassette), cwd=tmp_path)
    assert again.returncode == 3, again.stderr
    assert [line for line in again.stderr.splitlines() if "was stopped" in line] == stopped
    denied = offline_path.read_text().replace('toolings = ["t", "h"]', "toolings = []")
    offline_path.write_text(denied)
    refused = run("--config", str(offline_path), "--replay", str(cassette), cwd=tmp_path)
    assert refused.returncode == 4, refused.stderr  # `get` is denied now: the guest goes another way
    assert "diverged: the guest ended (error) after call 1 of 2" in refused.stderr  # its uncaught exception
