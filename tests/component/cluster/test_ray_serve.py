"""`agent-host serve --executor ray`: the agents' calls run on Ray actors, answered as locally.

Agent calls run on the Ray executor's actor pool (the same config keys as `run`); answers, limits,
cancellation, audit and errors are the same as locally (a test compares them); an actor's death
during a call is an error answer, not a hung client. Ray: a local cluster of 2 CPUs (`ray_head`);
clients: the HTTP tool API and the SDK's `Client` over streamable HTTP.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import pytest
from mcp import Client

from agent_host._support import scratch
from tests.support.component import PROBE
from tests.support.probe_steps import call_blocking, fail, get, log, loop, script, sleep
from tests.support.processes import leaked
from tests.support.python_tooling import PYTHON_TOML
from tests.support.ray_cluster import left_after
from tests.support.serving import HttpServe

# Real processes: their subject is the processes on Ray; 300 s each: they run beside the rest of the suite.
pytestmark = [pytest.mark.component, pytest.mark.ray, pytest.mark.real_processes, pytest.mark.timeout(300)]

MOCK: Final = (
    '[tooling.m]\nkind = "mock"\n[[tooling.m.tools]]\nname = "echo"\nresults = [{ text = "hi" }]\nrepeat_last = true\n'
)
GET_M: Final = get("m", as_="t")
PY: Final = get("py", as_="p")
AGENTS: Final = (
    f"[agents.ok]\ncomponent = '{PROBE}'\ntoolings = ['m']\n"
    f"[agents.fails]\ncomponent = '{PROBE}'\ntoolings = ['m']\n"
    f"[agents.looping]\ncomponent = '{PROBE}'\ncpu_time = 0.5\n"
    f"[agents.dies]\ncomponent = '{PROBE}'\ntoolings = ['py']\n"
)
CALLS: Final = [
    ("ok", script(GET_M, call_blocking("t", "echo"), log("a log line", level="info"))),
    ("fails", script(GET_M, fail("gives up"))),
    ("fails", script(get("py", as_="p"))),  # not granted: the guest's err
    ("looping", script(loop())),  # its CPU time limit
    ("ok", "not json"),  # the probe's own error
]
"""Agent and input of each call: an answer, an error, a denied tooling, a limit, a bad input."""


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "agent-host.toml"
    config.write_text('[host]\naudit_log = "${AUDIT}"\n[serve]\nmax_concurrent = 2\n' + MOCK + PYTHON_TOML + AGENTS)
    return config


def _answers(served: HttpServe) -> list[tuple[int, Any]]:
    found = []
    for agent, given in CALLS:
        response = httpx2.post(f"{served.base}/tools/{agent}", json={"input": given}, timeout=120)
        found.append((response.status_code, response.json()))
    return found


def _audit(path: Path) -> list[tuple[str, str | None, str, str | None, str]]:
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted((e["agent"], e["tooling"], e["operation"], e["target"], e["outcome"]) for e in entries)


def _scratch_folders() -> set[Path]:
    """The agent-host temporary folders of every process (`_support.scratch`)."""
    return set(Path(tempfile.gettempdir()).glob(f"{scratch.PREFIX}*"))


def test_calls_served_on_ray_answer_and_are_audited_as_locally(ray_head: str, probe_wasm: Path, tmp_path: Path) -> None:
    folders = _scratch_folders()
    local = HttpServe(_config(tmp_path), env={"AUDIT": "local.jsonl"})
    try:
        expected = _answers(local)
    finally:
        local.stop()
    on_ray = HttpServe(_config(tmp_path), "--executor", "ray", "--ray-address", ray_head, env={"AUDIT": "ray.jsonl"})
    try:
        found = _answers(on_ray)
        audited = _audit(tmp_path / "ray.jsonl")  # each line is written before its call's answer

        async def logged() -> list[str]:  # the guest's log lines reach an MCP client from the worker
            lines: list[str] = []

            async def keep(params: Any) -> None:
                lines.append(str(params.data))

            async with Client(on_ray.url, logging_callback=keep, log_level="debug") as client:
                result = await client.call_tool("ok", {"input": CALLS[0][1]})
                assert not result.is_error, result
            return lines

        lines = anyio.run(logged)
    finally:
        code = on_ray.stop()
    assert code == 143
    assert found == expected
    statuses = [status for status, _ in found]
    assert statuses == [200, 500, 200, 500, 500], found
    assert "cpu_time" in found[3][1]["error"]["message"]
    assert audited == _audit(tmp_path / "local.jsonl")
    assert ("fails", "py", "get", None, "denied") in audited  # the worker's own lines
    assert "a log line" in lines
    assert left_after(5.0) == {}
    assert not leaked()
    assert _scratch_folders() <= folders  # the actors' own folders too (a killed process removes nothing)


def test_a_dead_worker_is_an_unavailable_answer_and_a_hung_up_call_stops_its_guest_on_the_worker(
    ray_head: str, probe_wasm: Path, tmp_path: Path
) -> None:
    """One turn (`max_concurrent = 1`): each call after a dead worker or a hang-up gets it only once
    the call before has ended (a guest left running would hold it `STOP_WAIT` s, then be killed)."""
    config = _config(tmp_path)
    config.write_text(config.read_text().replace("max_concurrent = 2", "max_concurrent = 1"))
    served = HttpServe(config, "--executor", "ray", "--ray-address", ray_head, env={"AUDIT": "ray.jsonl"})
    try:
        dying = script(PY, call_blocking("p", "die"))
        died = httpx2.post(f"{served.base}/tools/dies", json={"input": dying}, timeout=120)
        after_death = httpx2.post(f"{served.base}/tools/ok", json={"input": CALLS[0][1]}, timeout=120)
        with pytest.raises(httpx2.ReadTimeout):  # hangs up once the guest sleeps on the worker
            httpx2.post(f"{served.base}/tools/ok", json={"input": script(sleep(600_000))}, timeout=5)
        after_hang_up = httpx2.post(f"{served.base}/tools/ok", json={"input": CALLS[0][1]}, timeout=120)
    finally:
        served.stop()
    assert died.status_code == 503, died.text
    error = died.json()["error"]
    assert error["code"] == "unavailable"
    assert error["message"].startswith("agent dies crashed: its Ray worker died: "), error
    assert after_death.status_code == after_hang_up.status_code == 200, (after_death.text, after_hang_up.text)
    assert "did not stop within" not in served.stderr  # stopped on the worker, not left to be killed
    lines = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
    outcomes = [(e["target"], e["outcome"]) for e in lines if e["operation"] == "serve-call"]
    assert outcomes == [("dies", "unavailable"), ("ok", "ok"), ("ok", "cancelled"), ("ok", "ok")]
    assert left_after(5.0) == {}
