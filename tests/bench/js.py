"""`make bench`, JavaScript guests: per-call latency of a JS guest beside a Python guest and the raw SDK.

In the same run, on the same servers and tool (`echo`): the raw MCP SDK's `call_tool` (the
baseline), the Python probe guest and the JavaScript twin (tests/guests/jsprobe), each timing
`call-tool-blocking` inside its sandbox; their rounds interleaved (SDK, Python, JS, ...), so a
machine that slows down slows all three alike. Also a trivial import (`tooling.name()`) from each
guest, and the component sizes. Skipped, saying why, without node and npm. Kept for the
performance page as module `js` (`tests.bench.record`).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Final

from mcp.client.stdio import StdioServerParameters

from agent_host import Host
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from agent_host.errors import BuildError
from tests.bench import calls
from tests.bench.record import Run, Table, record
from tests.support.component import PROBE, REPO, Server

JSPROBE: Final = REPO / "tests" / "guests" / "jsprobe"
TRIVIAL_CALLS: Final = 5000


def _js(host: Host, wasm: Path, text: str) -> float:
    outcome = host.run(wasm, text, agent="bench", policy=host.policy("bench", allow=["*"]))
    assert outcome.status == "ok", outcome
    return float(outcome.text)


def main() -> int:
    run = Run("js")
    try:
        jsprobe = build_guest(JSPROBE)
    except BuildError as exc:
        print(f"JavaScript rows skipped: {exc.message}", file=sys.stderr)
        record(run, [Table(["skipped"], [[exc.message]])], {"skipped": exc.message})
        return 0
    probe = build_guest(PROBE)
    python = sys.executable
    stdio = StdioServerParameters(command=python, args=["-m", "agent_host.demo_server"])
    demo_http = Server([python, "-m", "agent_host.demo_server", "--http", "0"])
    toml = (
        f'[tooling.stdio]\ncommand = "{python}"\nargs = ["-m", "agent_host.demo_server"]\n'
        f'[tooling.http]\nurl = "{demo_http.url}"\n'
        '[tooling.mock]\nkind = "mock"\n[[tooling.mock.tools]]\nname = "echo"\nrepeat_last = true\n'
        'results = [{ text = "hello" }]\n'
    )
    rows: list[list[str]] = []
    raw: dict[str, dict[str, float]] = {}
    try:
        with Host(parse_config(toml, Path.cwd() / "bench.toml")) as host:
            host.runtime.load(probe)
            host.runtime.load(jsprobe)
            for label, target, tooling in (
                ("stdio", stdio, "stdio"),
                ("http", demo_http.url, "http"),
                ("mock", None, "mock"),
            ):
                seen: dict[str, list[float]] = {"sdk": [], "python": [], "js": []}
                for _ in range(calls.ROUNDS):
                    if target is not None:
                        seen["sdk"].append(calls.sdk_latency(target, rounds=1)[0])
                    seen["python"].append(calls.guest_latency(host, probe, tooling, rounds=1))
                    seen["js"].append(_js(host, jsprobe, f"timed {tooling} {calls.CALLS}"))
                f = raw[label] = {k: statistics.median(v) for k, v in seen.items() if v}
                sdk = f.get("sdk")
                rows.append([
                    f"`call-tool-blocking` latency, {label}", f"{sdk * 1e6:.0f}" if sdk else "-",
                    f"{f['python'] * 1e6:.0f}", f"{f['js'] * 1e6:.0f}", "µs", f"{f['js'] / f['python']:.2f}x",
                    f"{f['js'] / sdk:.2f}x" if sdk else "-",
                ])  # fmt: skip
            py_trivial = calls.guest_trivial_import(host, probe, "mock", TRIVIAL_CALLS)
            js_trivial = _js(host, jsprobe, f"timed-name mock {TRIVIAL_CALLS}")
            raw["trivial"] = {"python": py_trivial, "js": js_trivial}
            trivial = [f"{py_trivial * 1e6:.1f}", f"{js_trivial * 1e6:.1f}", "µs", f"{js_trivial / py_trivial:.2f}x"]
            rows.append(["a trivial import (`tooling.name()`)", "-", *trivial, "-"])
    finally:
        demo_http.stop()
    sizes = {"python": probe.stat().st_size / 1e6, "js": jsprobe.stat().st_size / 1e6}
    raw["size_mb"] = sizes
    rows.append(["component size", "-", f"{sizes['python']:.1f}", f"{sizes['js']:.1f}", "MB",
                 f"{sizes['js'] / sizes['python']:.2f}x", "-"])  # fmt: skip
    table = Table(
        ["measurement", "raw MCP SDK", "Python guest", "JavaScript guest", "unit", "JS / Python", "JS / SDK"],
        rows,
        note=f"{calls.CALLS} sequential calls x {calls.ROUNDS} interleaved rounds (median), timed inside each "
        f"guest; trivial import: {TRIVIAL_CALLS} calls. Lower is better.",
    )
    record(run, [table], raw)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
