"""`agent-host run --executor ray`: the same config gives the same outcomes on Ray as locally.

`--executor ray`, `--ray-address` and `[host] executor`/`ray_address` give the outcome table,
`--json`, exit codes and stdout as locally; stdio and Python toolings run on the worker with their
grants and limits, one audit log is written by the driver, and `--approve ask` is refused; a dead
worker is the agent's `crashed` outcome, retried for a `restartable` agent; SIGINT stops every actor
and nothing is left; a local Ray listens on loopback alone, and the test helpers see, and stop,
every process of a Ray head. Ray runs on a local cluster of 2 CPUs.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from tests.support import cli_process
from tests.support.component import OBSERVED_TOML, PROBE, REPO, Server
from tests.support.probe_steps import call, call_blocking, drain, fail, get, loop, print_, recv, ref, script
from tests.support.processes import descendants, process_table, wait_for_line
from tests.support.python_tooling import PYTHON_TOML
from tests.support.ray_cluster import left_after, parents_of, ray_processes, start_head

# Real processes: their subject is the processes on Ray; 300 s each: they run beside the rest of the suite.
pytestmark = [pytest.mark.component, pytest.mark.ray, pytest.mark.real_processes, pytest.mark.timeout(300)]

GET: Final = get("t", as_="t")
PY: Final = get("py", as_="p")


RESTARTABLE: Final = 'toolings = ["py"]\nrestartable = true\n'


def agent_toml(name: str, *items: dict[str, Any], extra: str = 'toolings = ["t", "py"]\n') -> str:
    return f"\n[agents.{name}]\ncomponent = '{PROBE}'\ninput = '{script(*items)}'\n{extra}"


def agent_host(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return cli_process.run(*args, cwd=REPO, env=env)


def outcomes(done: subprocess.CompletedProcess[str]) -> list[tuple[str, str, int, str]]:
    return [(o["agent"], o["status"], o["exit_code"], o["output"]) for o in json.loads(done.stdout)]


def audit(path: Path) -> list[tuple[str, str, str, str | None, str]]:
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted((e["agent"], e["tooling"], e["operation"], e["target"], e["outcome"]) for e in entries)


MIXED: Final = (
    '[host]\naudit_log = "${AUDIT}"\n[tooling.web]\nurl = "${WEB}"\n' + OBSERVED_TOML + PYTHON_TOML
    + agent_toml("alpha", GET, call_blocking("t", "wait", seconds=0.2), print_("alpha says hi"), PY,
                 call_blocking("p", "word_count", text="a b c"))
    + agent_toml("beta", GET, call_blocking("t", "echo", text="hi"), fail("beta gives up"))
    + agent_toml("gamma", GET, get("py", as_="p"), extra='toolings = ["t"]\n')
    + agent_toml("delta", loop(), extra="cpu_time = 0.5\n")
    + agent_toml("epsilon", get("web", as_="w"), call_blocking("w", "echo", text="over http"), PY,
                 call_blocking("p", "word_count", text="needs approval"),
                 extra='toolings = ["web", "py"]\nrequire_approval = ["read_only"]\n')
)  # fmt: skip
"""Five agents: ok (two stdio and python toolings, output), error, a denied tooling, a CPU limit, and
an HTTP tooling plus a call needing approval (run with `--approve all`)."""


def test_the_same_agents_have_the_same_outcomes_and_audit_on_ray_as_locally(
    ray_head: str, probe_wasm: Path, tmp_path: Path, http_demo: Server
) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(MIXED)
    run = ("run", "--config", str(config), "--json", "--approve", "all")
    local = agent_host(*run, env={"AUDIT": "local.jsonl", "WEB": http_demo.url})
    on_ray = agent_host(
        *run, "--executor", "ray", "--ray-address", ray_head, env={"AUDIT": "ray.jsonl", "WEB": http_demo.url}
    )
    assert local.returncode == on_ray.returncode == 3, on_ray.stderr
    assert outcomes(on_ray) == outcomes(local)
    statuses = {agent: status for agent, status, _, _ in outcomes(on_ray)}
    assert statuses == {"alpha": "ok", "beta": "error", "gamma": "ok", "delta": "trap", "epsilon": "ok"}
    epsilon = json.loads(next(output for agent, _, _, output in outcomes(on_ray) if agent == "epsilon"))
    assert epsilon[1]["ok"]["value"]["structuredContent"] == {"result": "over http"}
    assert epsilon[3]["ok"]["value"]["structuredContent"] == {"words": 2}  # approved by --approve all
    assert "[alpha] alpha says hi" in on_ray.stderr  # the guest's output, relayed to the driver's stderr
    assert audit(tmp_path / "ray.jsonl") == audit(tmp_path / "local.jsonl")
    assert ("gamma", "py", "get", None, "denied") in audit(tmp_path / "ray.jsonl")
    assert left_after(5.0) == {}


def test_one_guest_on_ray_prints_only_its_answer_as_locally(ray_head: str, probe_wasm: Path, tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(f'[host]\nexecutor = "ray"\nray_address = "{ray_head}"\n' + OBSERVED_TOML)
    steps = script(GET, call_blocking("t", "echo", text="hi"), print_("to stderr"))
    on_ray = agent_host("run", str(PROBE), "--config", str(config), "--input", steps, "--allow", "t")
    local = agent_host("run", str(PROBE), "--config", str(config), "--input", steps, "--allow", "t",
                       "--executor", "local")  # fmt: skip
    assert on_ray.returncode == local.returncode == 0, on_ray.stderr
    assert on_ray.stdout == local.stdout
    assert json.loads(on_ray.stdout)[1]["ok"]["value"]["structuredContent"] == {"result": "hi"}
    assert "joining the Ray cluster" in on_ray.stderr and "[probe] to stderr" in on_ray.stderr


def test_a_code_agent_answers_on_ray_as_locally(ray_head: str, tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f'[host]\nray_address = "{ray_head}"\n' + OBSERVED_TOML + '[agents.py]\ncode = "python"\ntoolings = ["t"]\n'
    )
    code = "from toolings import t\nprint('on the runner')\nt.echo(text='hi')"
    on_ray = agent_host("run", "--config", str(config), "--agent", "py", "--input", code, "--executor", "ray")
    local = agent_host("run", "--config", str(config), "--agent", "py", "--input", code)
    assert on_ray.returncode == local.returncode == 0, on_ray.stderr
    assert on_ray.stdout == local.stdout
    assert json.loads(on_ray.stdout) == {"result": {"result": "hi"}, "stdout": "on the runner\n"}


def test_a_dead_worker_is_the_agents_outcome_and_a_restartable_agent_runs_again(
    ray_head: str, probe_wasm: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "died-once"
    config = tmp_path / "agent-host.toml"
    config.write_text(
        "[host]\nmax_restarts = 1\n" + PYTHON_TOML
        + agent_toml("fragile", PY, call_blocking("p", "die"), extra='toolings = ["py"]\n')
        + agent_toml("sturdy", PY, call_blocking("p", "die", marker=str(marker)), extra=RESTARTABLE)
        + agent_toml("doomed", PY, call_blocking("p", "die"), extra=RESTARTABLE)
        + agent_toml("asking", PY, call_blocking("p", "word_count", text="a b"),
                     extra='toolings = ["py"]\nrequire_approval = ["read_only"]\n')
    )  # fmt: skip
    done = agent_host("run", "--config", str(config), "--json", "--executor", "ray", "--ray-address", ray_head)
    assert done.returncode == 3, done.stderr
    results = {o["agent"]: o for o in json.loads(done.stdout)}
    assert results["fragile"]["status"] == "crashed" and results["fragile"]["exit_code"] == 3
    assert results["fragile"]["output"].startswith("its Ray worker died: ")
    assert "The actor died" in results["fragile"]["output"]  # Ray's reason
    assert results["sturdy"]["status"] == "ok" and json.loads(results["sturdy"]["output"])[1]["ok"]["value"][
        "structuredContent"
    ] == {"result": "survived"}
    assert results["doomed"]["status"] == "crashed"
    assert results["doomed"]["output"].startswith("its Ray worker died (after 1 restart): ")
    denied = json.loads(results["asking"]["output"])[1]["err"]  # --approve deny, the default
    assert (
        denied["code"] == "denied"
        and "no one approves calls on a Ray worker: run with `--approve all`" in denied["message"]
    )
    assert "agent sturdy: its Ray worker died" in done.stderr and "running it again (restart 1 of 1)" in done.stderr
    assert left_after(5.0) == {}


def test_sigint_stops_every_agent_and_leaves_no_actor_and_no_server(
    ray_head: str, probe_wasm: Path, tmp_path: Path
) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        OBSERVED_TOML
        + agent_toml("waiting", GET, print_("waiting started"), call_blocking("t", "wait", seconds=60), loop(),
                     extra='toolings = ["t"]\n')  # the stop ends the wait; the loop traps
        + agent_toml("spinning", loop(), extra="")
    )  # fmt: skip
    process = cli_process.start(
        "run", "--config", str(config), "--executor", "ray", "--ray-address", ray_head, cwd=REPO
    )
    seen = wait_for_line(process, "waiting started")
    servers = parents_of("tests.servers.observed")
    assert len(servers) == 1 and next(iter(servers.values())).startswith("ray::AgentWorker")  # started on the worker
    assert len(ray_processes(actors_only=True)) == 2
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, seen + err
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert rows["waiting"].split()[1] == "interrupted" and "SIGINT received" in rows["waiting"]
    assert rows["spinning"].split()[1] == "interrupted"
    assert left_after(5.0) == {}
    assert not [pid for pid in servers if Path(f"/proc/{pid}").exists()]  # the worker's stdio server exited


def test_a_local_ray_is_started_for_the_command_and_stopped_with_it(probe_wasm: Path, tmp_path: Path) -> None:
    before = set(ray_processes())
    done = agent_host("run", str(PROBE), "--input", script(print_("on a local Ray")), "--executor", "ray")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"ok": True}]
    assert "starting a local Ray" in done.stderr
    assert left_after(10.0, ignore=before) == {}


def test_an_agent_that_no_machine_can_hold_is_refused_before_anything_starts(
    ray_head: str, probe_wasm: Path, tmp_path: Path
) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text("[host]\nray_cpus = 4\n")
    done = agent_host("run", str(PROBE), "--config", str(config), "--executor", "ray", "--ray-address", ray_head)
    assert done.returncode == 2
    assert "[host] ray_cpus = 4: no machine of the Ray cluster" in done.stderr
    assert "the largest has 2" in done.stderr and "lower ray_cpus to 2 or less" in done.stderr


def test_a_second_signal_exits_at_once_and_leaves_no_process_of_the_local_ray(probe_wasm: Path, tmp_path: Path) -> None:
    before = set(ray_processes())
    config = tmp_path / "agent-host.toml"
    config.write_text(agent_toml("spinning", print_("spinning started"), loop(), extra=""))
    process = cli_process.start("run", "--config", str(config), "--executor", "ray", cwd=REPO)
    seen = wait_for_line(process, "spinning started")
    # Two signals back to back, of two kinds (the kernel merges a pending signal with another of its
    # kind): whichever is handled first starts the stop, and the other arrives while it runs. Waiting
    # for the first's line before sending the second raced the stop, which can end first (exit 130
    # with no "again" line, seen in a run of the Ray tests).
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    again = re.search(r"agent-host: (SIGINT|SIGTERM) again: exiting at once", err)
    assert again is not None, seen + err
    assert process.returncode == 128 + signal.Signals[again.group(1)], seen + err
    assert left_after(10.0, ignore=before) == {}


LOOPBACK_ADDRESSES: Final = ("127.0.0.1", "[::ffff:127.0.0.1]", "[::1]")


def listening(pids: set[int]) -> list[str]:
    """The TCP sockets that processes `pids` listen on, as `ss` shows them ("ADDRESS:PORT by NAME")."""
    found = []
    for line in subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout.splitlines():
        fields = line.split()
        owners = [(name, int(pid)) for name, pid in re.findall(r'\("([^"]+)",pid=(\d+)', line)]
        found += [f"{fields[3]} by {name}" for name, pid in owners if pid in pids]
    return found


def test_a_local_ray_listens_on_loopback_alone(probe_wasm: Path, tmp_path: Path) -> None:
    """The local Ray of `--executor ray` (its GCS, raylet, workers and agents) listens on loopback
    only, not on the machine's address or every interface."""
    before = set(ray_processes())
    config = tmp_path / "agent-host.toml"
    config.write_text(agent_toml("waiting", print_("waiting started"), recv(60000), extra=""))
    process = cli_process.start("run", "--config", str(config), "--executor", "ray", cwd=REPO)
    try:
        seen = wait_for_line(process, "waiting started")
        ours = (set(ray_processes()) - before) | set(descendants(process.pid))
        sockets = listening(ours)
        assert any(" by gcs_server" in s for s in sockets), seen + "\n".join(sockets)
        assert [s for s in sockets if not s.startswith(LOOPBACK_ADDRESSES)] == []
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert left_after(10.0, ignore=before) == {}


def test_a_ray_head_the_tests_start_leaves_no_process_when_stopped() -> None:
    """The test helpers' list of Ray processes includes the autoscaler monitor
    (`ray/autoscaler/_private/monitor.py`), so `Head.stop` stops it and a leak check would see it."""
    head = start_head()
    try:
        mine = {pid for pid, (_, _, cmd) in process_table().items() if str(head.folder) in cmd}
        assert mine, "the head's processes name its temp folder"
        assert mine <= set(ray_processes()), {pid: process_table()[pid][2][:120] for pid in mine - set(ray_processes())}
    finally:
        head.stop()
    left = {pid for pid, (_, state, cmd) in process_table().items() if str(head.folder) in cmd and state != "Z"}
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == set()


def test_a_javascript_guest_on_ray_answers_and_fails_as_locally(ray_head: str, tmp_path: Path) -> None:
    """A JS guest folder is accepted wherever a guest folder is, on Ray too."""
    from agent_host.components import js_toolchain
    from agent_host.errors import BuildError

    try:
        js_toolchain.node_and_npm()
    except BuildError as exc:
        pytest.skip(f"JavaScript guests need node and npm: {exc.message}")
    jsprobe = REPO / "tests" / "guests" / "jsprobe"
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f"[agents.js]\ncomponent = '{jsprobe}'\ninput = 'echo over ray'\ntoolings = ['demo']\n"
        f"[agents.js-fails]\ncomponent = '{jsprobe}'\ninput = 'throw'\n"
        '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
    )
    run = ("run", "--config", str(config), "--json")
    local = agent_host(*run)
    on_ray = agent_host(*run, "--executor", "ray", "--ray-address", ray_head)
    assert local.returncode == on_ray.returncode == 1, f"{on_ray.stdout}\n{on_ray.stderr}"  # whole, not cut
    assert outcomes(on_ray) == outcomes(local)
    found = {agent: (status, output) for agent, status, _, output in outcomes(on_ray)}
    assert found["js"] == ("ok", "over ray")
    assert found["js-fails"][0] == "error" and found["js-fails"][1].startswith("Error: boom (at app.js:")


def test_a_run_recorded_on_ray_is_written_on_the_driver_and_replays_locally_and_on_ray(
    ray_head: str, probe_wasm: Path, tmp_path: Path
) -> None:
    """Record and replay work with the Ray executor; the cassette is written on the driver."""
    config = tmp_path / "agent-host.toml"
    only_t = 'toolings = ["t"]\n'
    waiting = call("t", "wait", seconds=0.1, steps=2)
    config.write_text(
        OBSERVED_TOML
        + agent_toml("alpha", GET, call_blocking("t", "echo", text="on ray"), waiting, drain(ref(2)), extra=only_t)
        + agent_toml("beta", GET, call_blocking("t", "echo", text="beta"), extra=only_t)
    )  # fmt: skip
    cassette = tmp_path / "ray.json"
    live = agent_host("run", "--config", str(config), "--json", "--executor", "ray", "--ray-address", ray_head,
                      "--record", str(cassette))  # fmt: skip
    assert live.returncode == 0, live.stderr
    assert sorted(json.loads(cassette.read_text())["agents"]) == ["alpha", "beta"]
    offline = tmp_path / "offline.toml"
    offline.write_text(config.read_text().replace("${AGENT_HOST_PYTHON}", "/nonexistent/server"))
    here = agent_host("run", "--config", str(offline), "--json", "--replay", str(cassette))
    there = agent_host("run", "--config", str(offline), "--json", "--replay", str(cassette),
                       "--executor", "ray", "--ray-address", ray_head)  # fmt: skip
    assert here.returncode == there.returncode == 0, (here.stderr, there.stderr)
    assert outcomes(here) == outcomes(there) == outcomes(live)


THINKER: Final = REPO / "tests" / "guests" / "thinker"


def test_a_guest_asks_a_model_on_ray_with_the_same_grants_budget_and_usage_as_locally(
    ray_head: str, tmp_path: Path
) -> None:
    """The provider's table reaches the worker with the configuration (its key expanded by the
    driver, never through the guest); grants, the budget and the usage are the worker's as they
    would be locally: one chat answered, the next refused by `llm_requests`."""
    config = tmp_path / "agent-host.toml"
    config.write_text(
        '[provider.mock]\nkind = "mock"\nrepeat_last = true\n'
        'turns = [{ content = "from the model", usage = { input_tokens = 4, output_tokens = 3 } }]\n'
        f"[agents.thinker]\ncomponent = '{THINKER}'\nproviders = [\"mock\"]\nllm_requests = 1\n"
    )
    chat = {"op": "chat", "request": {"messages": [{"role": "user", "content": "hi"}]}}
    steps = json.dumps({"provider": "mock", "ops": [chat, chat]})
    run = ("run", "--agent", "thinker", "--config", str(config), "--input", steps, "--json")
    local = agent_host(*run, "--executor", "local")
    on_ray = agent_host(*run, "--executor", "ray", "--ray-address", ray_head)
    assert local.returncode == on_ray.returncode == 0, on_ray.stderr
    ray_result = json.loads(on_ray.stdout)
    local_result = json.loads(local.stdout)
    assert ray_result["output"] == local_result["output"]
    first, second = json.loads(ray_result["output"])
    assert first["ok"]["content"] == "from the model" and second["err"]["code"] == "limit-exceeded"
    assert ray_result["usage"] == local_result["usage"] == {"input_tokens": 4, "output_tokens": 3}
