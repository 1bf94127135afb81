"""`make bench`: agent-host beside its references, measured in the same run, reported as ratios.

Two tables. The first puts the raw MCP SDK, the host's Python API and a guest side by side on the
same servers and tool (`calls`): the bundled demo server over stdio and streamable HTTP, and a
server that is not ours, `@modelcontextprotocol/server-everything` over streamable HTTP (`everything`;
skipped, saying why, without node and npm). Their rounds are interleaved (SDK, host API, guest, SDK,
...), so a machine that slows down for a while slows all three alike. The second
holds every speed target of the project, each beside its reference from this run (the SDK, an empty
Python process, a plain SDK server run by uvicorn, instances never run), with the absolute figures:
the host path alone (a guest calling a mock tooling), a trivial import, subscription updates, whole
processes (`start`), memory per running guest (`memory`, in a fresh process).

Figures vary from run to run on a shared machine: read the ratios. The tables are also kept for
the performance page (`tests.bench.record`, module `calls`).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

from agent_host import Host
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from tests.bench import calls, start
from tests.bench.everything import EverythingHttp, start_everything
from tests.bench.record import Run, Table, record
from tests.support.component import PROBE, Server


@dataclass(frozen=True)
class Target:
    """One row of the targets table: agent-host's figure beside its reference from the same run."""

    figure: str
    reference: str
    reference_value: float | None
    value: float
    unit: str
    target: str
    met: bool
    compare: str = "ratio"
    """How the two are compared: "ratio" (value / reference) or "difference" (value - reference)."""

    def cells(self) -> list[str]:
        ref = "-" if self.reference_value is None else f"{_num(self.reference_value)} {self.unit}"
        if self.reference_value is None:
            relation = "-"
        elif self.compare == "ratio":
            relation = f"{self.value / self.reference_value:.2f}x"
        else:
            relation = f"{self.value - self.reference_value:+.2f} {self.unit}"
        verdict = "met" if self.met else "NOT met"
        value = f"{_num(self.value)} {self.unit}"
        return [self.figure, f"{self.reference}: {ref}", value, relation, self.target, verdict]


def _num(value: float) -> str:
    return f"{value:,.2f}" if value < 10 else f"{value:,.0f}"


def sdk_row(name: str, sdk: float | None, host_api: float | None, guest: float | None, unit: str) -> list[str]:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:,.1f}"

    def ratio(value: float | None) -> str:
        return f"{value / sdk:.2f}x" if sdk and value else "-"

    return [name, cell(sdk), cell(host_api), cell(guest), unit, ratio(host_api), ratio(guest)]


@dataclass(frozen=True)
class Peer:
    """One server as the bench reaches it: through the SDK (`sdk`), and as the host's tooling `tooling`."""

    label: str
    sdk: calls.Target
    tooling: str
    arguments: dict[str, Any]


EVERYTHING_ECHO: dict[str, Any] = {"message": "hello"}
"""server-everything's `echo` arguments."""


def compare(host: Host, probe: Path, peer: Peer) -> dict[str, float]:
    """Seconds per call (`sdk`, `api`, `guest`) and calls per second (`sdk_tput`, `api_tput`,
    `guest_tput`: one guest's `call-tool`s), medians of `calls.ROUNDS` interleaved rounds."""
    rounds: dict[str, list[float]] = {}
    for _ in range(calls.ROUNDS):
        figures = {}
        figures["sdk"], figures["sdk_tput"] = calls.sdk_latency(peer.sdk, peer.arguments, rounds=1)
        figures["api"], figures["api_tput"] = calls.host_latency(host, peer.tooling, peer.arguments, rounds=1)
        figures["guest"] = calls.guest_latency(host, probe, peer.tooling, peer.arguments, rounds=1)
        one_guest = calls.guest_latency(host, probe, peer.tooling, peer.arguments, asynchronous=True, rounds=1)
        figures["guest_tput"] = 1 / one_guest
        for key, value in figures.items():
            rounds.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in rounds.items()}


def main() -> int:
    run = Run("calls")
    probe = build_guest(PROBE)
    python = sys.executable
    stdio = StdioServerParameters(command=python, args=["-m", "agent_host.demo_server"])
    demo_http = Server([python, "-m", "agent_host.demo_server", "--http", "0"])
    plain_http = Server([python, "-m", "tests.bench.plain_server"])
    toml = (
        f'[tooling.stdio]\ncommand = "{python}"\nargs = ["-m", "agent_host.demo_server"]\n'
        f'[tooling.http]\nurl = "{demo_http.url}"\n'
        '[tooling.mock]\nkind = "mock"\n[[tooling.mock.tools]]\nname = "echo"\nrepeat_last = true\n'
        'results = [{ text = "hello" }]\n'
    )
    peers = [Peer("stdio", stdio, "stdio", calls.ECHO), Peer("http", demo_http.url, "http", calls.ECHO)]
    everything: EverythingHttp | str = start_everything()
    if isinstance(everything, str):
        print(f"server-everything rows skipped: {everything}", file=sys.stderr)
    else:
        peers.append(Peer("server-everything, http", everything.url, "everything", EVERYTHING_ECHO))
        toml += f'[tooling.everything]\nurl = "{everything.url}"\n'
    sdk_rows: list[list[str]] = []
    targets: list[Target] = []
    figures: dict[str, dict[str, float]] = {}
    try:
        with Host(parse_config(toml, Path.cwd() / "bench.toml")) as host:
            host.runtime.load(probe)
            for peer in peers:
                f = figures[peer.label] = compare(host, probe, peer)
                sdk_rows += [
                    sdk_row(f"call latency, {peer.label}", f["sdk"] * 1e6, f["api"] * 1e6, f["guest"] * 1e6, "µs"),
                    sdk_row(f"throughput, {calls.CONCURRENT} callers, {peer.label}", f["sdk_tput"], f["api_tput"],
                            None, "calls/s"),
                    sdk_row(f"throughput, {peer.label}: SDK {calls.CONCURRENT} callers / one guest's call-tool",
                            f["sdk_tput"], None, f["guest_tput"], "calls/s"),
                ]  # fmt: skip
            plain_seq, _ = calls.sdk_latency(plain_http.url)
            mock = calls.guest_latency(host, probe, "mock")
            trivial = calls.guest_trivial_import(host, probe, "mock")
            sdk_update = calls.sdk_update_latency(stdio, "demo://note", "set_note")
            sdk_update_read = calls.sdk_update_latency(stdio, "demo://note", "set_note", then_read=True)
            guest_update = calls.guest_update_latency(host, probe, "stdio", "demo://note", "set_note")
            guest_start = calls.guest_start(host, probe)
    finally:
        demo_http.stop()
        plain_http.stop()
        if not isinstance(everything, str):
            everything.stop()
    processes = start.measure()
    memory = json.loads(
        subprocess.run(
            [python, "-m", "tests.bench.memory", str(build_guest(start.IDLE))],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip

    stdio_f, http_f = figures["stdio"], figures["http"]
    targets += [
        Target("guest `call-tool-blocking` latency / SDK `call_tool`, stdio", "SDK", stdio_f["sdk"] * 1e6,
               stdio_f["guest"] * 1e6, "µs", "≤ 1.2x", stdio_f["guest"] <= 1.2 * stdio_f["sdk"]),
        Target("the same over streamable HTTP", "SDK", http_f["sdk"] * 1e6, http_f["guest"] * 1e6, "µs",
               "≤ 1.2x", http_f["guest"] <= 1.2 * http_f["sdk"]),
        Target("host path alone, guest → mock tooling", "target", None, mock * 1e6, "µs", "≤ 150 µs", mock <= 150e-6),
        Target("a trivial import (`tooling.name()`), guest → host", "target", None, trivial * 1e6, "µs", "≤ 10 µs",
               trivial <= 10e-6),
        Target(f"async throughput, one guest's `call-tool`s / SDK {calls.CONCURRENT} callers, stdio", "SDK",
               stdio_f["sdk_tput"], stdio_f["guest_tput"], "calls/s", "≥ 1.0x",
               stdio_f["guest_tput"] >= stdio_f["sdk_tput"]),
        Target("subscription update, server → guest inbox / SDK notification, stdio", "SDK", sdk_update * 1e3,
               guest_update * 1e3, "ms", "≤ +1 ms", guest_update - sdk_update <= 1e-3, compare="difference"),
        Target("the same, like for like: the update envelope holds the new content", "SDK notification + read",
               sdk_update_read * 1e3, guest_update * 1e3, "ms", "≤ +1 ms", guest_update - sdk_update_read <= 1e-3,
               compare="difference"),
        Target("`agent-host run` of a cached guest that touches no MCP tooling, whole process", "`python -c pass`",
               processes["python"], processes["run_cached"], "s", "≤ 0.25 s", processes["run_cached"] <= 0.25),
        Target("`agent-host --help`", "`python -c pass`", processes["python"], processes["help"], "s", "≤ 0.15 s",
               processes["help"] <= 0.15),
        Target(f"memory (PSS) per added running guest, {50} guests in one host",
               "RSS (the shared memory image counted again per guest)", memory["running_rss_mib_per_guest"],
               memory["running_mib_per_guest"], "MiB", "≤ 4 MiB", memory["running_mib_per_guest"] <= 4.0),
        Target("memory (PSS) per added instance, made and never run", "RSS",
               memory["instantiate_rss_mib_per_guest"], memory["instantiate_mib_per_guest"], "MiB", "-", True),
        Target("instantiation of a cached guest (Store, WASI, limits, instantiate)",
               "wasmtime's own allocator (no host-state memory limit)", memory["instantiate_wasmtime_ms"],
               memory["instantiate_ms"], "ms", "≤ 2 ms", memory["instantiate_ms"] <= 2.0),
        Target("bundled demo server over streamable HTTP, SDK call", "plain SDK server (uvicorn.run)",
               plain_seq * 1e3, http_f["sdk"] * 1e3, "ms", "≤ 1.1x", http_f["sdk"] <= 1.1 * plain_seq),
        Target("first `run` after `agent-host build` (whole process)", "cached run", processes["run_cached"],
               processes["first_run_after_build"], "s", "no compile (≪ the ~10 s of one)",
               processes["first_run_after_build"] < 2.0),
        Target("guest start (cached component) + trivial `run`, in a live host", "target", None, guest_start * 1e3,
               "ms", "-", True),
    ]  # fmt: skip

    sdk_table = Table(
        ["measurement", "raw MCP SDK", "agent-host, host API", "agent-host, guest", "unit", "host API / SDK",
         "guest / SDK"],
        sdk_rows,
        note=f"{calls.CALLS} sequential calls x {calls.ROUNDS} rounds (median); throughput: {calls.CONCURRENT} "
        f"concurrent callers x {calls.PER_CALLER} calls. For latency lower is better, for throughput higher.",
    )  # fmt: skip
    targets_table = Table(
        ["figure", "reference (same run)", "agent-host", "ratio", "target", ""], [t.cells() for t in targets]
    )
    raw = {"peers": figures, "processes": processes, "memory": memory, "mock": mock, "trivial": trivial,
           "sdk_update": sdk_update, "sdk_update_read": sdk_update_read, "guest_update": guest_update,
           "guest_start": guest_start, "plain_http": plain_seq}  # fmt: skip
    record(run, [sdk_table, targets_table], raw)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
