"""`make bench`, serving: calls per second through `agent-host serve`, beside the SDK calling the tool directly.

Two tools served over streamable HTTP, `CONCURRENT` connected MCP clients calling at once: an agent
(the probe guest) whose every call makes one `echo` call on the bundled demo server over HTTP, and
that `echo` itself re-exported as `demo.echo` (`[serve] toolings`, through the policy of agent
`serve`). The reference is the SDK calling the same `echo` on the demo server over streamable HTTP
with the same clients, in the same run: the difference is what serving costs (for the agent a fresh
guest per call; for both the host's checks and a second hop).
Then the same clients calling `demo.echo` beside a bounded abusive load (`Abuse`: idle sockets,
headers and bodies sent a byte at a time, reconnecting when cut), and without it, on the same server.
Medians of `ROUNDS` rounds. Run alone: `python -m tests.bench.serve`. Kept for the performance page
as module `serve` (`tests.bench.record`).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Final

import anyio
from mcp import Client

from agent_host.components.build import build_guest
from tests.bench.__main__ import Target
from tests.bench.record import Run, Table, record
from tests.support.component import PROBE, Server

CONCURRENT: Final = 8
PER_CLIENT: Final = 10
ROUNDS: Final = 3
ABUSE_ROUNDS: Final = 10
"""Rounds of the calls beside the abuse: longer than the timeouts below, so that they cut abusers meanwhile."""
SEQUENTIAL: Final = 30
"""Calls one client makes in a row for the agent's latency."""
STEPS: Final = json.dumps(
    {"steps": [{"op": "get", "tooling": "demo", "as": "t"}, {"op": "call_blocking", "h": "t", "tool": "echo",
                                                                 "args": json.dumps({"text": "hello"})}]}
)  # fmt: skip


IDLE_SOCKETS: Final = 200
"""Abusive connections that send nothing."""
SLOW_HEADERS: Final = 50
"""Abusive connections that send a request's headers a byte at a time."""
SLOW_BODIES: Final = 50
"""Abusive connections that send a request's body a byte at a time."""
TRICKLE: Final = 0.2
"""Seconds between two bytes of a slow connection."""
TIMEOUTS: Final = (
    "idle_timeout = 2\nheader_timeout = 2\nbody_timeout = 2\nmax_connections = 512\nmax_connections_per_client = 400\n"
)
"""The served timeouts (short, so that the abusers are cut and reconnect while the clients call), and
a per-client connection cap above what the abuse opens: every loopback address is one client, so
the abusers and the clients measured are one client (the bench measures the timeouts, not the cap)."""
SLOW_HEAD: Final = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nx-pad: ", b"a" * 4096)
"""What a slow-headers connection sends at once, then a byte at a time."""
SLOW_BODY: Final = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    b"accept: application/json, text/event-stream\r\ncontent-length: 4096\r\n\r\n",
    b" " * 4096,
)
"""What a slow-body connection sends at once (its headers), then a byte at a time."""


class Abuse:
    """`IDLE_SOCKETS` + `SLOW_HEADERS` + `SLOW_BODIES` connections to `port`, each one reconnecting
    when the server closes it, until the block ends (`async with Abuse(port) as abuse`)."""

    def __init__(self, port: int) -> None:
        self._port = port
        self.cut = 0
        """Connections the server closed while the block ran."""

    async def __aenter__(self) -> Abuse:
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()
        opened: list[anyio.Event] = []
        for count, payload in ((IDLE_SOCKETS, (b"", b"")), (SLOW_HEADERS, SLOW_HEAD), (SLOW_BODIES, SLOW_BODY)):
            for _ in range(count):
                ready = anyio.Event()
                self._tasks.start_soon(self._one, payload, ready)
                opened.append(ready)
        for ready in opened:
            await ready.wait()
        return self

    async def _one(self, payload: tuple[bytes, bytes], ready: anyio.Event) -> None:
        """One abusive connection (see `TIMEOUTS` for the per-client cap)."""
        at_once, trickled = payload
        while True:
            try:
                async with await anyio.connect_tcp("127.0.0.1", self._port) as stream:
                    ready.set()
                    if at_once:
                        await stream.send(at_once)
                    for index in range(len(trickled)):
                        await stream.send(trickled[index : index + 1])
                        await anyio.sleep(TRICKLE)
                    await stream.receive()  # until the server answers or closes
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                pass
            self.cut += 1

    async def __aexit__(self, *exc: object) -> None:
        self._tasks.cancel_scope.cancel()
        await self._tasks.__aexit__(None, None, None)


async def _latency(
    url: str, tool: str, arguments: dict[str, str], abused: bool, rounds: int = ROUNDS
) -> tuple[float, float, int]:
    """Median seconds per call and calls per second of `CONCURRENT` connected clients making
    `PER_CLIENT` calls each (medians of `rounds`), with the `Abuse` load running when `abused`; and
    how many abusive connections the server cut meanwhile."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    async with AsyncExitStack() as stack:
        abuse = await stack.enter_async_context(Abuse(port)) if abused else None
        clients = [await stack.enter_async_context(Client(url, cache=None)) for _ in range(CONCURRENT)]
        for client in clients:
            await client.call_tool(tool, arguments)
        latencies: list[float] = []
        rates = []
        for _ in range(rounds):

            async def calls(client: Client) -> None:
                for _ in range(PER_CLIENT):
                    started = time.perf_counter()
                    result = await client.call_tool(tool, arguments)
                    latencies.append(time.perf_counter() - started)
                    assert not result.is_error, result

            started = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for client in clients:
                    tg.start_soon(calls, client)
            rates.append(CONCURRENT * PER_CLIENT / (time.perf_counter() - started))
        cut = abuse.cut if abuse is not None else 0
    return statistics.median(latencies), statistics.median(rates), cut


def _sequential(url: str, tool: str, arguments: dict[str, str], calls: int = SEQUENTIAL) -> float:
    """Median seconds per call of one client calling `calls` times in a row (after a warm-up)."""

    async def measure() -> float:
        async with Client(url, cache=None) as client:
            for _ in range(5):
                await client.call_tool(tool, arguments)
            times = []
            for _ in range(calls):
                started = time.perf_counter()
                result = await client.call_tool(tool, arguments)
                times.append(time.perf_counter() - started)
                assert not result.is_error, result
            return statistics.median(times)

    return anyio.run(measure)


def _serve(config: Path) -> tuple[subprocess.Popen[str], str]:
    """`agent-host serve --http` of `config` and its MCP URL (its stderr drained)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "agent_host", "serve", "--http", "127.0.0.1:0", "--config", str(config)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stderr is not None
    lines = server.stderr
    url = next(line.split()[-1] for line in lines if line.startswith("agent-host: serving MCP on "))
    threading.Thread(target=lines.read, daemon=True).start()  # the log must not fill its pipe
    return server, url


def measure() -> dict[str, float]:
    """`sdk`, `sdk_latency`: the SDK calling `echo` directly; `gateway`, `gateway_latency`: through the
    raw SDK gateway (`tests/bench/sdk_gateway.py`); `proxied`, `quiet`: `demo.echo` through `agent-host
    serve`; `agent`: the agent tool; `agent_one`, `agent_one_cold`: one client's agent calls in a row,
    with instances made ahead and without; `*_one`: one client's calls in a row; the abuse figures."""
    python = sys.executable
    build_guest(PROBE)
    demo = Server([python, "-m", "agent_host.demo_server", "--http", "0"])
    gateway = Server([python, "-m", "tests.bench.sdk_gateway", demo.url])
    servers: list[subprocess.Popen[str]] = []
    f: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="agent-host-bench-") as scratch:
            configs = []
            for ready in (2, 0):
                config = Path(scratch) / f"agent-host-{ready}.toml"
                config.write_text(
                    f'[tooling.demo]\nurl = "{demo.url}"\n'
                    f'[agents.probe]\ncomponent = "{PROBE}"\ntoolings = ["demo"]\n'
                    f'[serve]\nmax_concurrent = {CONCURRENT}\ntoolings = ["demo"]\nready_instances = {ready}\n'
                    + TIMEOUTS
                )
                configs.append(config)
            urls = []
            for config in configs:
                server, served = _serve(config)
                servers.append(server)
                urls.append(served)
            url, cold_url = urls
            hello = {"text": "hello"}
            rounds: dict[str, list[float]] = {}
            for _ in range(ROUNDS):  # interleaved: a machine that slows down slows every row alike
                for key, (lat, rate) in {
                    "sdk": _once(demo.url, "echo", hello),
                    "gateway": _once(gateway.url, "echo", hello),
                    "proxied": _once(url, "demo.echo", hello),
                }.items():
                    rounds.setdefault(f"{key}_latency", []).append(lat)
                    rounds.setdefault(key, []).append(rate)
                rounds.setdefault("sdk_one", []).append(_sequential(demo.url, "echo", hello))
                rounds.setdefault("gateway_one", []).append(_sequential(gateway.url, "echo", hello))
                rounds.setdefault("proxied_one", []).append(_sequential(url, "demo.echo", hello))
                rounds.setdefault("agent", []).append(_once(url, "probe", {"input": STEPS})[1])
                rounds.setdefault("agent_one", []).append(_sequential(url, "probe", {"input": STEPS}))
                rounds.setdefault("agent_one_cold", []).append(_sequential(cold_url, "probe", {"input": STEPS}))
            f = {key: statistics.median(values) for key, values in rounds.items()}
            f["quiet"], f["quiet_rate"], _ = anyio.run(_latency, url, "demo.echo", hello, False, ABUSE_ROUNDS)
            f["abused"], f["abused_rate"], f["cut"] = anyio.run(_latency, url, "demo.echo", hello, True, ABUSE_ROUNDS)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=60)
        gateway.stop()
        demo.stop()
    return f


def _once(url: str, tool: str, arguments: dict[str, str]) -> tuple[float, float]:
    """(median seconds per call, calls per second) of `CONCURRENT` clients making `PER_CLIENT` calls each, one round."""
    latency, rate, _ = anyio.run(_latency, url, tool, arguments, False, 1)
    return latency, rate


def main() -> int:
    run = Run("serve")
    f = measure()
    sdk, gateway = f["sdk"], f["gateway"]

    def row(name: str, rate: float, latency: float | None) -> list[str]:
        shown = f"{latency * 1e3:.2f} ms" if latency is not None else "-"
        return [name, f"{rate:,.0f}", f"{rate / sdk:.2f}x", f"{rate / gateway:.2f}x", shown]

    serving = Table(
        ["serving, " + f"{CONCURRENT} clients over HTTP", "calls/s", "ratio to the SDK", "ratio to the SDK gateway",
         "median latency"],
        [
            row("SDK: `echo` on the demo server, called directly", sdk, f["sdk_latency"]),
            row("SDK gateway: an SDK server whose `echo` calls the demo server's (`tests/bench/sdk_gateway.py`)",
                gateway, f["gateway_latency"]),
            row("`agent-host serve`: `demo.echo` re-exported (`[serve] toolings`)", f["proxied"], f["proxied_latency"]),
            row("`agent-host serve`: an agent making one `echo` call per call", f["agent"], None),
        ],
        note=f"Medians of {ROUNDS} interleaved rounds of {CONCURRENT} clients x {PER_CLIENT} calls.",
    )  # fmt: skip
    targets = [
        Target("`demo.echo` re-exported: calls/s / the SDK's direct calls", "SDK", sdk, f["proxied"], "calls/s",
               "≥ 0.6x", f["proxied"] >= 0.6 * sdk),
        Target("`demo.echo` re-exported: median latency / the SDK's direct calls", "SDK", f["sdk_latency"] * 1e3,
               f["proxied_latency"] * 1e3, "ms", "≤ +1 ms", f["proxied_latency"] <= f["sdk_latency"] + 1e-3,
               compare="difference"),
        Target("`demo.echo` re-exported: one client's calls in a row, median latency", "SDK", f["sdk_one"] * 1e3,
               f["proxied_one"] * 1e3, "ms", "≤ +1 ms", f["proxied_one"] <= f["sdk_one"] + 1e-3, compare="difference"),
        Target("the same through the raw SDK gateway (the floor of a second hop here)", "SDK", f["sdk_one"] * 1e3,
               f["gateway_one"] * 1e3, "ms", "-", True, compare="difference"),
        Target("`demo.echo` re-exported: calls/s / a raw SDK gateway (the floor of a Python gateway here)",
               "SDK gateway", gateway, f["proxied"], "calls/s", "-", True),
        Target("an agent making one call: calls/s / the SDK's direct calls", "SDK", sdk, f["agent"], "calls/s",
               "≥ 0.3x", f["agent"] >= 0.3 * sdk),
        Target("an agent making one call: calls/s / a raw SDK gateway (the second hop alone, no guest)", "SDK gateway",
               gateway, f["agent"], "calls/s", "-", True),
        Target("an agent, one client's calls in a row: instances made ahead / made per call (instantiating is "
               "~0.7 ms of the call)", "ready_instances = 0", f["agent_one_cold"] * 1e3, f["agent_one"] * 1e3, "ms",
               "-", True),
    ]  # fmt: skip
    target_table = Table(
        ["serving target", "reference (same run)", "agent-host", "ratio", "target", ""], [t.cells() for t in targets]
    )
    abusers = f"{IDLE_SOCKETS} idle sockets, {SLOW_HEADERS} slow headers, {SLOW_BODIES} slow bodies"
    abuse = Table(
        [f"`demo.echo` through `agent-host serve`, {CONCURRENT} clients", "median latency", "calls/s", "ratio"],
        [
            ["alone", f"{f['quiet'] * 1e3:.2f} ms", f"{f['quiet_rate']:,.0f}", "1.00x"],
            [f"beside {abusers} (a byte per {TRICKLE:g} s; {f['cut']:.0f} cut by the timeouts and reconnected)",
             f"{f['abused'] * 1e3:.2f} ms", f"{f['abused_rate']:,.0f}", f"{f['abused'] / f['quiet']:.2f}x"],
        ],
    )  # fmt: skip
    record(run, [serving, target_table, abuse], f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
