"""Hostile guests change nothing: each ends with its documented error, within its limit, while a
well-behaved guest on the same host finishes normally, and the host's memory and open file
descriptors come back to their level.

The guests: an infinite loop; unbounded allocation; deep recursion; 10,000 `call-tool` without
reading the inbox; a 50 MB argument; 100,000 calls to a denied tool; reading /etc/passwd, the host's
environment and a path outside a preopen; writing into a read-only preopen; `get` of a tooling that
exists but is not granted.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host, RunResult
from agent_host.config import parse_config
from tests.support import probe_steps as step
from tests.support.component import OBSERVED_TOML, err, ok

GET = step.get("t", as_="t")
CPU_LIMIT = 2.0
MEMORY_SLACK = 64 * 1024 * 1024
"""Bytes of RSS a hostile run may leave behind, far below the guest's 256 MiB. The figure is the whole
worker process's: alone, a run leaves 10 MiB at most (allocator caches, measured), but a CI worker
that ran other files first showed 36 MiB once (24 MiB was too tight: a flake, not a leak). What a
kept error once pinned (a whole guest and its arguments, 47 MiB) is caught exactly by
tests/unit/session/test_guest_session.py::test_a_kept_error_does_not_pin_the_frames_that_raised_it."""


def rss() -> int:
    """The process's resident memory, after garbage cycles were collected (an exception's traceback
    can hold a megabyte argument) and glibc returned the free memory it caches (if it can)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _target(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@dataclass
class Sandbox:
    host: Host
    probe: Path
    root: Path

    def run(self, agent: str, steps: list[dict[str, Any]]) -> RunResult:
        guest = self.host.start(
            self.probe, step.script(*steps), agent=agent,
            policy=self.host.policy(agent, self.host.config.agents[agent]),
        )  # fmt: skip
        return self.host.wait(guest)

    def beside_a_good_guest(self, steps: list[dict[str, Any]], agent: str = "hostile") -> RunResult:
        """Run `steps` as `agent` while agent `good` works; return the hostile outcome."""
        good_steps = step.script(
            GET,
            step.call("t", "wait", seconds=1, steps=4),
            step.drain(count=5, timeout_ms=20000),
            step.call_blocking("t", "echo", text="fine"),
        )
        good = self.host.start(
            self.probe, good_steps, agent="good",
            policy=self.host.policy("good", self.host.config.agents["good"]),
        )  # fmt: skip
        hostile = self.run(agent, steps)
        good_outcome = self.host.wait(good)
        assert good_outcome.status == "ok", good_outcome
        results = json.loads(good_outcome.text)
        assert ok(results[3])["value"]["content"][0]["text"] == "fine"
        return hostile


@pytest.fixture(scope="module")
def sandbox(probe_wasm: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    root = tmp_path_factory.mktemp("sandbox")
    (root / "ro").mkdir()
    (root / "ro" / "data.txt").write_text("read me")
    (root / "rw").mkdir()
    (root / "secret.txt").write_text("outside every preopen")
    toml = (
        OBSERVED_TOML
        + '[tooling.other]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
        + f"""
[agents.spinner]
toolings = ["t"]
cpu_time = {CPU_LIMIT}

[agents.hostile]
toolings = ["t"]
tools = {{ t = ["echo", "wait", "activity", "big"] }}
timeout = 120
dirs = [{{ host = "{root / "ro"}", guest = "/ro" }}, {{ host = "{root / "rw"}", guest = "/rw", writable = true }}]
env = {{ GREETING = "hello" }}

[agents.good]
toolings = ["t"]
"""
    )
    host = Host(parse_config(toml, root / "agent-host.toml"))
    box = Sandbox(host, probe_wasm, root)
    # Warm up once: wasmtime-wasi creates its process-wide runtime (an epoll and an eventfd) on a
    # guest's first output, and the allocator grows once; neither is a per-run cost.
    warm = box.run(
        "hostile",
        [GET, step.call_blocking("t", "echo", text="warm"), step.print_("warm"), step.read_file("/ro/data.txt"),
         step.alloc()],
    )  # fmt: skip
    assert warm.status == "ok", warm
    yield box
    host.close()


@dataclass
class Baseline:
    """The memory a test's end is compared with; `rebase` takes it again (after a first run that
    fills the allocator's caches, for a test whose subject is what a second run keeps)."""

    rss: int

    def rebase(self) -> None:
        self.rss = rss()


@pytest.fixture
def steady(sandbox: Sandbox) -> Iterator[Baseline]:
    """The host's memory and open file descriptors are back to their level after the test."""
    before_fds = open_fds()
    baseline = Baseline(rss())
    yield baseline
    before_rss = baseline.rss
    deadline = time.monotonic() + 10
    while open_fds() - before_fds and time.monotonic() < deadline:
        time.sleep(0.1)
    # Nothing new stays open (objects of earlier tests may be collected meanwhile, closing old ones).
    assert not open_fds() - before_fds, {fd: _target(fd) for fd in open_fds() - before_fds}
    # What the run held is released once its threads have finished: wait for that, bounded.
    while rss() - before_rss >= MEMORY_SLACK and time.monotonic() < deadline:
        time.sleep(0.1)
    assert rss() - before_rss < MEMORY_SLACK, f"RSS grew by {(rss() - before_rss) / 2**20:.0f} MiB"


pytestmark = [pytest.mark.component, pytest.mark.usefixtures("steady")]


def test_an_infinite_loop_is_stopped_at_its_cpu_time_limit(sandbox: Sandbox) -> None:
    started = time.monotonic()
    outcome = sandbox.beside_a_good_guest([step.loop()], agent="spinner")
    assert (outcome.status, outcome.exit_code) == ("trap", 3)
    assert f"CPU time limit: run used more than {CPU_LIMIT:g} s of CPU (cpu_time in" in outcome.text
    assert "[agents.spinner]" in outcome.text
    assert time.monotonic() - started < CPU_LIMIT + 15


def test_unbounded_allocation_meets_memory_error_at_the_memory_limit(sandbox: Sandbox) -> None:
    outcome = sandbox.beside_a_good_guest([step.alloc(), step.print_("still alive")])
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    assert err(results[0])["message"].startswith("MemoryError")
    assert ok(results[1]) is True  # the guest recovered and went on


def test_deep_recursion_ends_the_guest_without_touching_the_host(sandbox: Sandbox) -> None:
    outcome = sandbox.beside_a_good_guest([step.recurse()])
    if outcome.status == "ok":
        assert err(json.loads(outcome.text)[0])["message"].startswith("RecursionError")
    else:
        assert outcome.status == "trap" and "stack" in outcome.text, outcome


def test_ten_thousand_calls_without_reading_the_inbox_hit_the_open_call_limit(sandbox: Sandbox) -> None:
    outcome = sandbox.beside_a_good_guest([GET, step.flood("t", "wait", 10_000, args={"seconds": 60})])
    assert outcome.status == "ok", outcome
    assert ok(json.loads(outcome.text)[1]) == {"ok": 256, "limit-exceeded": 9744}
    assert outcome.inbox_peak <= 1024


def test_a_50_mb_argument_is_refused_before_it_leaves_the_host(sandbox: Sandbox) -> None:
    outcome = sandbox.beside_a_good_guest([GET, step.big_call("t", "echo", 50_000_000)])
    assert outcome.status == "ok", outcome
    error = err(json.loads(outcome.text)[1])
    assert error["code"] == "limit-exceeded"
    assert "are 50000012 bytes, more than the limit of 1048576 (max_argument_bytes in" in error["message"]
    assert error["message"].endswith("agent-host.toml [host])")


def test_a_flood_of_calls_to_a_denied_tool_are_each_denied(sandbox: Sandbox) -> None:
    """Each of 25,000 denied calls is denied (no bound is worn down; the `steady` fixture checks the
    host holds nothing after). The attack seen was 100,000: the same path, four times longer."""
    outcome = sandbox.beside_a_good_guest(
        [GET, step.flood("t", "set", 25_000, blocking=True), step.call_blocking("t", "set", "{}")]
    )
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    assert ok(results[1]) == {"denied": 25_000}
    message = err(results[2])["message"]
    assert "agent 'hostile' may not call tool 'set' of tooling 't'" in message
    assert 'tools.t = ["echo", "wait", "activity", "big"]' in message and "[agents.hostile]" in message


def test_files_and_environment_outside_the_grants_are_out_of_reach(sandbox: Sandbox) -> None:
    outcome = sandbox.beside_a_good_guest(
        [
            step.read_file("/etc/passwd"),
            step.env(),
            step.read_file("/ro/../secret.txt"),
            step.listdir("/"),
            step.read_file("/ro/data.txt"),
            step.write_file("/ro/new.txt", "nope"),
            step.write_file("/rw/new.txt", "yes"),
        ]
    )
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    assert err(results[0])["code"] == "python"  # no /etc at all
    assert ok(results[1]) == {"GREETING": "hello"}  # only what the agent was given
    assert err(results[2])["code"] == "python"
    assert "No such file or directory" in err(results[3])["message"]  # there is no "/" at all: only /ro and /rw
    assert ok(results[4]) == "read me"
    assert err(results[5])["code"] == "python"  # read-only preopen
    assert ok(results[6]) == 3
    assert (sandbox.root / "rw" / "new.txt").read_text() == "yes"
    assert not (sandbox.root / "ro" / "new.txt").exists()


def test_a_symlink_a_guest_makes_cannot_take_it_outside_its_folders(sandbox: Sandbox) -> None:
    """What wasmtime's WASI (wasmtime-py 50) does with a guest's symlinks; it has
    no switch to refuse them. A link with an absolute target, or in a read-only folder, is refused; a
    relative one is created even when it points out of the folder (`../x`), but the guest cannot
    follow it, to read or to write: WASI resolves every path inside the preopen. A link inside the
    folder works. The README says so next to `dirs`: on the host, such a link is a plain symlink."""
    secret = sandbox.root / "secret.txt"
    outcome = sandbox.run(
        "hostile",
        [
            step.symlink(str(secret), "/rw/absolute"),
            step.symlink("/ro/data.txt", "/rw/across"),
            step.symlink("data.txt", "/ro/inside"),
            step.symlink("../secret.txt", "/rw/escaping"),
            step.read_file("/rw/escaping"),
            step.write_file("/rw/escaping", "overwritten"),
            step.write_file("/rw/target.txt", "inside"),
            step.symlink("target.txt", "/rw/inner"),
            step.read_file("/rw/inner"),
        ],
    )
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    for refused in (0, 1, 2):
        assert "PermissionError" in err(results[refused])["message"], results[refused]
    assert ok(results[3]) == "../secret.txt"  # created, pointing out of the folder...
    assert "PermissionError" in err(results[4])["message"]  # ...but not followed to read
    assert "PermissionError" in err(results[5])["message"]  # nor to write
    assert ok(results[8]) == "inside"
    assert secret.read_text() == "outside every preopen"
    assert os.readlink(sandbox.root / "rw" / "escaping") == "../secret.txt"  # on the host, a plain symlink
    assert not (sandbox.root / "rw" / "absolute").exists() and not (sandbox.root / "ro" / "inside").is_symlink()


def test_a_guest_cannot_open_a_socket(sandbox: Sandbox) -> None:
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        outcome = sandbox.beside_a_good_guest([step.socket(listener.getsockname()[1])])
        with pytest.raises(TimeoutError):
            listener.accept()  # nothing ever connected
    assert outcome.status == "ok", outcome
    assert err(json.loads(outcome.text)[0])["code"] == "python"


def test_a_tooling_that_exists_but_is_not_granted_is_denied(sandbox: Sandbox) -> None:
    outcome = sandbox.beside_a_good_guest([step.get("other", as_="o"), GET])
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    error = err(results[0])
    assert error["code"] == "denied"
    assert "agent 'hostile' is not granted tooling 'other'" in error["message"]
    assert 'toolings = ["other"] in' in error["message"] and "[agents.hostile]" in error["message"]
    assert ok(results[1]) is True


@pytest.mark.timeout(180)  # two runs of 256 calls of 1 MB: ~30 s on an idle 2-core machine
def test_calls_with_big_arguments_never_read_are_refused_once_max_pending_bytes_are_held(
    sandbox: Sandbox, steady: Baseline
) -> None:
    """256 calls with 1 MB arguments, the inbox never read, cannot make the host hold their bytes:
    it refuses new calls with `limit-exceeded` once the bytes it holds for the guest (arguments of
    open calls, undelivered results) would pass `max_pending_bytes`; the results it holds are all
    delivered, and once received new calls are admitted again. The memory check compares with
    the end of a first, smaller flood past the same bound: what a run keeps, not what the
    allocator's caches hold after the first (in a worker that ran other files first, the first left
    up to 76 MiB in them, measured; alone, 4 MiB)."""
    args = {"text": "x" * 1_000_000}
    steps = [
        GET,
        step.flood("t", "echo", 256, args=args),
        step.kinds(timeout_ms=2000),
        step.call_blocking("t", "echo", text="again"),
        step.flood("t", "echo", 1, args=args),
    ]
    warm = [GET, step.flood("t", "echo", 48, args=args), step.kinds(timeout_ms=2000)]  # past the bound too
    assert sandbox.beside_a_good_guest(warm).status == "ok"
    steady.rebase()
    outcome = sandbox.beside_a_good_guest(steps)
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    counts = ok(results[1])
    admitted = counts["ok"]
    assert counts == {"ok": admitted, "limit-exceeded": 256 - admitted}
    assert 4 <= admitted <= 17, counts  # half of 64 MiB: a call holds 2 MB of arguments (text and value)
    delivered = ok(results[2])
    assert len(delivered) == admitted  # every admitted call answered: a result, or limit-exceeded if it did not fit
    assert set(delivered) <= {"ToolResult", "Error"} and delivered[0] == "ToolResult", delivered
    assert ok(results[3])["value"]["content"][0]["text"] == "again"
    assert ok(results[4]) == {"ok": 1}


def test_output_without_newlines_is_forwarded_as_one_cut_line(sandbox: Sandbox) -> None:
    """A guest writing to stdout without a newline does not make the host buffer it whole: lines are
    cut as log lines are (`MAX_OUTPUT_LINE` bytes, then a marker saying how much was cut), and what
    the host reads is bounded, however much the guest writes."""
    import io
    import re

    from agent_host.runtime.output import MAX_OUTPUT_LINE

    sink = io.StringIO()
    guest = sandbox.host.start(
        sandbox.probe, step.script(step.write("x" * 1024, times=8 * 1024), step.print_(" end"), step.print_("after")),
        agent="hostile", policy=sandbox.host.policy("hostile", sandbox.host.config.agents["hostile"]), output=sink,
    )  # fmt: skip
    outcome = sandbox.host.wait(guest)
    assert outcome.status == "ok", outcome
    lines = sink.getvalue().splitlines()
    assert len(lines) == 2 and max(len(line) for line in lines) < MAX_OUTPUT_LINE + 64, [x[:80] for x in lines]
    assert re.fullmatch(rf"\[hostile\] x{{{MAX_OUTPUT_LINE}}}\.\.\. \[\d+ bytes cut\]", lines[0]), lines[0][-80:]
    assert lines[1] == "[hostile] after"


def test_names_and_uris_past_their_bounds_are_refused_before_anything_is_sent(sandbox: Sandbox) -> None:
    """Names, URIs and answers are bounded at the door: a 20 MB resource URI neither grows the host
    nor slows another guest's calls on the shared server, nor comes back whole in the error; a long
    answer to a question is not sent upstream."""
    outcome = sandbox.beside_a_good_guest(
        [
            GET,
            step.read_resource("t", "demo://" + "u" * 20_000_000),
            step.subscribe_resource("t", "demo://" + "s" * 9000),
            step.call_blocking("t", "e" * 5000, "{}"),
            step.respond("t", "c" * 2000, "accept", {}),
        ]
    )
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    for result in results[1:]:
        assert err(result)["code"] == "invalid-arguments", result
        assert "characters long, more than the" in err(result)["message"]
        assert len(err(result)["message"]) < 200  # nothing of it repeated back
