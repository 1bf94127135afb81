"""The command line with several agents, grants, the audit log and signals, as a user runs it.

A bare `run` is denied by default and `--allow` grants; every `[agents.*]` runs at once, sharing
connections, with a table of outcomes and the worst exit code; SIGINT or SIGTERM cancel everything,
close connections and leave no child, and a second signal exits at once; the audit log has one JSON
line per tooling operation, with arguments only when asked for.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_host.errors import ExitCode
from tests.support import cli_process, in_process
from tests.support import probe_steps as step
from tests.support.component import OBSERVED_TOML, PROBE, REPO
from tests.support.processes import descendants, wait_for_line

pytestmark = [pytest.mark.component, pytest.mark.real_processes]  # their subject: the command's own processes

GET = step.get("t", as_="t")
WAIT = 30.0


def agent_toml(name: str, *items: dict[str, Any], toolings: str = '["t"]') -> str:
    return f"\n[agents.{name}]\ncomponent = '{PROBE}'\ntoolings = {toolings}\ninput = '{step.script(*items)}'\n"


def agent_host(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The command line in this process (the signal tests `start` a process of their own)."""
    return in_process.run(*args, cwd=cwd)


def start(*args: str) -> subprocess.Popen[str]:
    return cli_process.start(*args, cwd=REPO)


@pytest.mark.timeout(120)  # every agent of a config at once: 11 s alone, 46 s under load
def test_every_agent_runs_at_once_sharing_one_server_and_the_worst_outcome_wins(
    probe_wasm: Path, tmp_path: Path
) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        OBSERVED_TOML
        + agent_toml("alpha", GET, step.call_blocking("t", "wait", seconds=1.5))
        + agent_toml("beta", GET, step.call_blocking("t", "wait", seconds=1.5), step.fail("beta gives up"))
        + agent_toml("gamma", GET, step.call_blocking("t", "wait", seconds=1.5), step.raise_("gamma crashed"))
    )  # fmt: skip
    process = start("run", "--config", str(config))
    servers: set[int] = set()
    while process.poll() is None:
        servers |= {pid for pid, cmd in descendants(process.pid).items() if "tests.servers.observed" in cmd}
        time.sleep(0.05)
    out, err = process.communicate()
    assert process.returncode == 1, err  # the worst: two agents failed (an exception escaping run is a failure)
    assert len(servers) == 1  # one connection shared by the three agents
    lines = out.splitlines()
    assert lines[0].split() == ["AGENT", "OUTCOME", "TIME", "DETAIL"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["alpha"].split()[1] == "ok"
    assert rows["beta"].split()[1] == "error" and "beta gives up" in rows["beta"]
    assert rows["gamma"].split()[1] == "error" and "RuntimeError: gamma crashed" in rows["gamma"]
    as_json = agent_host("run", "--config", str(config), "--json")
    assert as_json.returncode == 1
    assert {entry["agent"]: entry["exit_code"] for entry in json.loads(as_json.stdout)} == {
        "alpha": 0, "beta": 1, "gamma": 1,
    }  # fmt: skip


def test_a_bare_run_is_denied_by_default_and_allow_grants(probe_wasm: Path, tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(OBSERVED_TOML)
    script = step.script(GET)
    denied = agent_host("run", str(probe_wasm), "--config", str(config), "--input", script)
    assert denied.returncode == 0
    error = json.loads(denied.stdout)[0]["err"]
    assert error["code"] == "denied"
    assert "is not granted tooling 't'" in error["message"] and "--allow t" in error["message"]
    allowed = agent_host("run", str(probe_wasm), "--config", str(config), "--input", script, "--allow", "t")
    assert json.loads(allowed.stdout) == [{"ok": True}]
    unknown = agent_host("run", str(probe_wasm), "--config", str(config), "--allow", "nope")
    assert unknown.returncode == 2 and "--allow nope: no configured tooling matches" in unknown.stderr


@pytest.mark.parametrize("with_arguments", [False, True])
def test_the_audit_log_has_one_line_per_operation(probe_wasm: Path, tmp_path: Path, with_arguments: bool) -> None:
    config = tmp_path / "agent-host.toml"
    host_table = f'[host]\naudit_log = "audit.jsonl"\naudit_arguments = {str(with_arguments).lower()}\n'
    config.write_text(
        host_table + OBSERVED_TOML + agent_toml(
            "auditor", GET,
            step.call_blocking("t", "echo", text="hi"),
            step.call("t", "echo", text="async"),
            step.drain(count=1),
            step.read_resource("t", "obs://nope"),
            step.get("missing", as_="m"),
        )
    )  # fmt: skip
    done = agent_host("run", "--agent", "auditor", "--config", str(config))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    summary = [(e["operation"], e["tooling"], e["target"], e["outcome"]) for e in lines]
    assert summary == [
        ("get", "t", None, "ok"),
        ("call-tool-blocking", "t", "echo", "ok"),
        ("call-tool", "t", "echo", "ok"),
        ("read-resource", "t", "obs://nope", "not-found"),
        ("get", "missing", None, "not-found"),
    ]
    first = lines[1]
    assert first["agent"] == "auditor" and first["argument_bytes"] == len('{"text": "hi"}')
    assert first["time"].endswith("Z") and first["duration_ms"] >= 0
    assert ("arguments" in first) is with_arguments
    if with_arguments:
        assert first["arguments"] == '{"text": "hi"}'


def test_sigterm_stops_every_agent_cancels_upstream_and_leaves_no_process(probe_wasm: Path, tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        OBSERVED_TOML + agent_toml(
            "waiter", GET,
            step.subscribe_resource("t", "obs://a"),
            step.call("t", "wait", seconds=60),
            step.eprint("ready"),
            step.recv(60000),
            step.loop(),
        )
    )  # fmt: skip
    process = start("run", "--agent", "waiter", "--config", str(config))
    wait_for_line(process, "[waiter] ready")
    children = set(descendants(process.pid))
    assert children
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=WAIT)  # the guest would wait 60 s in its inbox, then loop
    assert process.returncode == 143  # 128 + SIGTERM
    assert "SIGTERM: stopping everything" in err
    assert "stopped by the host: SIGTERM received" in err
    for pid in children:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_second_signal_exits_at_once(probe_wasm: Path, tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f'[tooling.slow]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.stubborn"]\ncwd = "{REPO}"\n'
        + agent_toml("lingerer", step.get("slow", as_="s"), step.eprint("ready"), step.recv(60000),
                     toolings='["slow"]')
    )  # fmt: skip
    process = start("run", "--agent", "lingerer", "--config", str(config))
    try:
        wait_for_line(process, "[lingerer] ready")
        children = set(descendants(process.pid))
        # Two signals back to back (two kinds: the kernel merges a pending signal with another of its
        # kind): whichever is handled first starts the stop (the stubborn server, which ignores
        # signals, would then take its 2 s grace), and the other arrives while it runs. Waiting for
        # the first's line before sending the second raced that grace on a loaded machine.
        process.send_signal(signal.SIGINT)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=WAIT)
        again = re.search(r"agent-host: (SIGINT|SIGTERM) again: exiting at once", err)
        assert again is not None, err
        assert process.returncode == ExitCode.for_signal(signal.Signals[again.group(1)]), err
        assert "stopping everything" in err
    finally:
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if process.poll() is None:
            process.kill()
            process.communicate()
