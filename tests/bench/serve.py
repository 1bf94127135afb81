"""`make bench`, serving: calls per second through `agent-host serve`, beside the SDK calling the tool directly.

Two tools served over streamable HTTP, `CONCURRENT` connected MCP clients calling at once: an agent
(the probe guest) whose every call makes one `echo` call on the bundled demo server over HTTP, and
that `echo` itself re-exported as `demo.echo` (`[serve] toolings`, through the policy of agent
`serve`). The reference is the SDK calling the same `echo` on the demo server over streamable HTTP
with the same clients, in the same run: the difference is what serving costs (for the agent a fresh
guest per call; for both the host's checks and a second hop).
Medians of `ROUNDS` rounds. Run alone: `python -m tests.bench.serve`.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Final

import anyio
from mcp import Client

from host.builder import build_guest
from tests.component.conftest import PROBE, Server

CONCURRENT: Final = 8
PER_CLIENT: Final = 10
ROUNDS: Final = 3
STEPS: Final = json.dumps(
    {"steps": [{"op": "get", "tooling": "demo", "as": "t"}, {"op": "call_blocking", "h": "t", "tool": "echo",
                                                                 "args": json.dumps({"text": "hello"})}]}
)  # fmt: skip


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
    demo = Server([python, "-m", "host.demo_server", "--http", "0"])
    try:
        sdk = anyio.run(_rate, demo.url, "echo", {"text": "hello"})
        with tempfile.TemporaryDirectory(prefix="agent-host-bench-") as scratch:
            config = Path(scratch) / "agent-host.toml"
            config.write_text(
                f'[tooling.demo]\nurl = "{demo.url}"\n'
                f'[agents.probe]\ncomponent = "{PROBE}"\ntoolings = ["demo"]\n'
                f'[serve]\nmax_concurrent = {CONCURRENT}\ntoolings = ["demo"]\n'
            )
            server = subprocess.Popen(
                [python, "-m", "host", "serve", "--http", "127.0.0.1:0", "--config", str(config)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            try:
                assert server.stderr is not None
                lines = server.stderr
                url = next(line.split()[-1] for line in lines if line.startswith("agent-host: serving MCP on "))
                agent = anyio.run(_rate, url, "probe", {"input": STEPS})
                proxied = anyio.run(_rate, url, "demo.echo", {"text": "hello"})
            finally:
                server.terminate()
                server.communicate(timeout=60)
    finally:
        demo.stop()
    return {"sdk": sdk, "agent": agent, "proxied": proxied}


def main() -> int:
    figures = measure()
    print("| serving | calls/s | ratio to the SDK calling the tool |")
    print("| --- | --- | --- |")
    print(f"| SDK: `echo` on the demo server over HTTP, {CONCURRENT} clients | {figures['sdk']:,.0f} | 1.00x |")
    print(
        f"| `agent-host serve`: an agent making one `echo` call per call, {CONCURRENT} clients over HTTP "
        f"| {figures['agent']:,.0f} | {figures['agent'] / figures['sdk']:.2f}x |"
    )
    print(
        f"| `agent-host serve`: `demo.echo` re-exported (`[serve] toolings`), {CONCURRENT} clients over HTTP "
        f"| {figures['proxied']:,.0f} | {figures['proxied'] / figures['sdk']:.2f}x |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
