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
from tests.bench.record import Run, Table, record
from tests.support.component import PROBE, Server

CONCURRENT: Final = 8
PER_CLIENT: Final = 10
ROUNDS: Final = 3
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


async def _latency(url: str, tool: str, arguments: dict[str, str], abused: bool) -> tuple[float, float, int]:
    """Median seconds per call and calls per second of `CONCURRENT` connected clients making
    `PER_CLIENT` calls each (medians of ROUNDS), with the `Abuse` load running when `abused`; and
    how many abusive connections the server cut meanwhile."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    async with AsyncExitStack() as stack:
        abuse = await stack.enter_async_context(Abuse(port)) if abused else None
        clients = [await stack.enter_async_context(Client(url, cache=None)) for _ in range(CONCURRENT)]
        for client in clients:
            await client.call_tool(tool, arguments)
        latencies: list[float] = []
        rates = []
        for _ in range(ROUNDS):

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


async def _rate(url: str, tool: str, arguments: dict[str, str]) -> float:
    """Calls per second of `CONCURRENT` connected clients making `PER_CLIENT` calls each (median of ROUNDS)."""
    rates = []
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(Client(url, cache=None)) for _ in range(CONCURRENT)]
        for client in clients:
            await client.call_tool(tool, arguments)
        for _ in range(ROUNDS):

            async def calls(client: Client) -> None:
                for _ in range(PER_CLIENT):
                    result = await client.call_tool(tool, arguments)
                    assert not result.is_error, result

            started = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for client in clients:
                    tg.start_soon(calls, client)
            rates.append(CONCURRENT * PER_CLIENT / (time.perf_counter() - started))
    return statistics.median(rates)


def measure() -> dict[str, float]:
    """`sdk`: the SDK calling `echo` directly; `agent`: the agent tool and `proxied`: `demo.echo`, both
    through `agent-host serve`."""
    python = sys.executable
    build_guest(PROBE)
    demo = Server([python, "-m", "agent_host.demo_server", "--http", "0"])
    try:
        sdk = anyio.run(_rate, demo.url, "echo", {"text": "hello"})
        with tempfile.TemporaryDirectory(prefix="agent-host-bench-") as scratch:
            config = Path(scratch) / "agent-host.toml"
            config.write_text(
                f'[tooling.demo]\nurl = "{demo.url}"\n'
                f'[agents.probe]\ncomponent = "{PROBE}"\ntoolings = ["demo"]\n'
                f'[serve]\nmax_concurrent = {CONCURRENT}\ntoolings = ["demo"]\n{TIMEOUTS}'
            )
            server = subprocess.Popen(
                [python, "-m", "agent_host", "serve", "--http", "127.0.0.1:0", "--config", str(config)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            try:
                assert server.stderr is not None
                lines = server.stderr
                url = next(line.split()[-1] for line in lines if line.startswith("agent-host: serving MCP on "))
                threading.Thread(target=lines.read, daemon=True).start()  # the log must not fill its pipe
                agent = anyio.run(_rate, url, "probe", {"input": STEPS})
                proxied = anyio.run(_rate, url, "demo.echo", {"text": "hello"})
                quiet, quiet_rate, _ = anyio.run(_latency, url, "demo.echo", {"text": "hello"}, False)
                abused, abused_rate, cut = anyio.run(_latency, url, "demo.echo", {"text": "hello"}, True)
            finally:
                server.terminate()
                server.wait(timeout=60)
    finally:
        demo.stop()
    return {
        "sdk": sdk, "agent": agent, "proxied": proxied, "quiet": quiet, "quiet_rate": quiet_rate,
        "abused": abused, "abused_rate": abused_rate, "cut": cut,
    }  # fmt: skip


def main() -> int:
    run = Run("serve")
    f = measure()
    serving = Table(
        ["serving", "calls/s", "ratio to the SDK calling the tool"],
        [
            [f"SDK: `echo` on the demo server over HTTP, {CONCURRENT} clients", f"{f['sdk']:,.0f}", "1.00x"],
            [f"`agent-host serve`: an agent making one `echo` call per call, {CONCURRENT} clients over HTTP",
             f"{f['agent']:,.0f}", f"{f['agent'] / f['sdk']:.2f}x"],
            [f"`agent-host serve`: `demo.echo` re-exported (`[serve] toolings`), {CONCURRENT} clients over HTTP",
             f"{f['proxied']:,.0f}", f"{f['proxied'] / f['sdk']:.2f}x"],
        ],
    )  # fmt: skip
    abusers = f"{IDLE_SOCKETS} idle sockets, {SLOW_HEADERS} slow headers, {SLOW_BODIES} slow bodies"
    abuse = Table(
        [f"`demo.echo` through `agent-host serve`, {CONCURRENT} clients", "median latency", "calls/s", "ratio"],
        [
            ["alone", f"{f['quiet'] * 1e3:.2f} ms", f"{f['quiet_rate']:,.0f}", "1.00x"],
            [f"beside {abusers} (a byte per {TRICKLE:g} s; {f['cut']:.0f} cut by the timeouts and reconnected)",
             f"{f['abused'] * 1e3:.2f} ms", f"{f['abused_rate']:,.0f}", f"{f['abused'] / f['quiet']:.2f}x"],
        ],
    )  # fmt: skip
    record(run, [serving, abuse], f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
