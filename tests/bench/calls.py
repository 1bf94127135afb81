"""`make bench`, calls: the raw MCP SDK, the host's Python API and a guest, on one server in one run.

- raw SDK: `mcp.Client.call_tool` from an asyncio program (the baseline), and how soon a
  subscription's update arrives (`sdk_update_latency`);
- host API: `GuestSession.call_tool_blocking` from Python threads (the host's bridge, no wasm);
- guest: the probe guest timing, inside the sandbox, `call-tool-blocking` in a loop, `call-tool` N
  times then draining the inbox (asynchronous throughput), a trivial import (`tooling.name()`), and
  the update of a subscription after a call that changes the resource.

Timings are medians of `ROUNDS` rounds.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters

from agent_host import Host
from agent_host.session import GuestSession

CALLS = 300
"""Sequential calls per round."""
ASYNC_CALLS = 200
"""Calls a guest starts at once (below the default limit of 256 open calls)."""
CONCURRENT = 16
"""Concurrent callers for throughput."""
PER_CALLER = 25
ROUNDS = 3
ECHO = {"text": "hello"}
UPDATES = 30
"""Rounds of the subscription measurement."""

Target = StdioServerParameters | str
"""A server for the SDK: stdio parameters or a streamable HTTP URL."""


def median(values: list[float]) -> float:
    return statistics.median(values)


def sdk_latency(
    target: Target, arguments: dict[str, Any] = ECHO, *, tool: str = "echo", rounds: int = ROUNDS
) -> tuple[float, float]:
    """(seconds per sequential call, calls per second with CONCURRENT callers) with the raw SDK."""

    async def measure() -> tuple[float, float]:
        async with Client(target, cache=None) as client:
            await client.list_tools()
            for _ in range(10):
                await client.call_tool(tool, arguments)
            sequential = []
            for _ in range(rounds):
                started = time.perf_counter()
                for _ in range(CALLS):
                    await client.call_tool(tool, arguments)
                sequential.append((time.perf_counter() - started) / CALLS)
            throughput = []
            for _ in range(rounds):

                async def caller() -> None:
                    for _ in range(PER_CALLER):
                        await client.call_tool(tool, arguments)

                started = time.perf_counter()
                async with anyio.create_task_group() as tg:
                    for _ in range(CONCURRENT):
                        tg.start_soon(caller)
                throughput.append(CONCURRENT * PER_CALLER / (time.perf_counter() - started))
            return median(sequential), median(throughput)

    return anyio.run(measure)


def host_latency(
    host: Host, tooling: str, args: dict[str, Any] = ECHO, *, tool: str = "echo", rounds: int = ROUNDS
) -> tuple[float, float]:
    """The same through the host's Python API (GuestSession, one per thread)."""
    session = host.session("bench", allow=["*"])
    rep = session.get(tooling)
    arguments = json.dumps(args)
    for _ in range(10):
        session.call_tool_blocking(rep, tool, arguments)
    sequential = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(CALLS):
            session.call_tool_blocking(rep, tool, arguments)
        sequential.append((time.perf_counter() - started) / CALLS)
    throughput = []
    for _ in range(rounds):
        sessions = [host.session(f"bench-{i}", allow=["*"]) for i in range(CONCURRENT)]
        reps = [s.get(tooling) for s in sessions]

        def caller(session: GuestSession, rep: int) -> None:
            for _ in range(PER_CALLER):
                session.call_tool_blocking(rep, tool, arguments)

        threads = [threading.Thread(target=caller, args=pair) for pair in zip(sessions, reps, strict=True)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        throughput.append(CONCURRENT * PER_CALLER / (time.perf_counter() - started))
        for s in sessions:
            s.close()
    session.close()
    return median(sequential), median(throughput)


def guest_latency(
    host: Host, wasm: Path, tooling: str, args: dict[str, Any] = ECHO, *, asynchronous: bool = False,
    tool: str = "echo", rounds: int = ROUNDS,
) -> float:  # fmt: skip
    """Seconds per call measured inside a guest (median of `rounds` runs of CALLS calls)."""
    calls = ASYNC_CALLS if asynchronous else CALLS
    timed = {"op": "timed", "h": "t", "tool": tool, "args": json.dumps(args)}
    steps = [{**timed, "n": 10}, {**timed, "n": calls, "async": asynchronous}]
    return _in_guest(host, wasm, tooling, steps, rounds) / calls


def guest_trivial_import(host: Host, wasm: Path, tooling: str, calls: int = 5000) -> float:
    """Seconds per `tooling.name()` call (a trivial import) measured inside a guest."""
    timed = {"op": "timed_name", "h": "t"}
    return _in_guest(host, wasm, tooling, [{**timed, "n": 100}, {**timed, "n": calls}]) / calls


def guest_update_latency(host: Host, wasm: Path, tooling: str, uri: str, tool: str) -> float:
    """Seconds from starting a call of `tool` (which changes `uri`) to the update envelope of a
    subscription to `uri` in the guest's inbox (median, measured inside the guest)."""
    return _in_guest(host, wasm, tooling, [{"op": "timed_updates", "h": "t", "uri": uri, "tool": tool, "n": UPDATES}])


def _in_guest(host: Host, wasm: Path, tooling: str, steps: list[dict[str, Any]], rounds: int = ROUNDS) -> float:
    """The value of the last step, run in the probe guest after `get` of `tooling` (median of `rounds` runs)."""
    values = []
    for _ in range(rounds):
        text = json.dumps({"steps": [{"op": "get", "tooling": tooling, "as": "t"}, *steps]})
        outcome = host.run(wasm, text, agent="bench", policy=host.policy("bench", allow=["*"]))
        assert outcome.status == "ok", outcome
        values.append(float(json.loads(outcome.text)[-1]["ok"]))
    return median(values)


def sdk_update_latency(target: Target, uri: str, tool: str, *, then_read: bool = False) -> float:
    """Seconds from starting a call of `tool` (which changes `uri`) to the SDK's notification of the
    change (a `subscriptions/listen` stream on 2026-07-28, `resources/subscribe` before); with
    `then_read`, to the new content read after it (what a guest's update envelope holds); median."""

    async def measure() -> float:
        changed = [anyio.Event()]
        delays: list[float] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                changed[0].set()

        async def rounds(client: Client) -> None:
            for i in range(UPDATES):
                changed[0] = anyio.Event()
                started = time.perf_counter()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.call_tool, tool, {"text": f"note {i}"})
                    await changed[0].wait()
                    if then_read:
                        await client.read_resource(uri)
                    delays.append(time.perf_counter() - started)

        async with Client(target, cache=None, message_handler=on_message) as client:
            if client.protocol_version >= "2026-07-28":
                async with client.listen(resource_subscriptions=[uri]) as subscription, anyio.create_task_group() as tg:

                    async def pump() -> None:
                        async for _ in subscription:
                            changed[0].set()

                    tg.start_soon(pump)
                    await rounds(client)
                    tg.cancel_scope.cancel()
            else:
                await client.subscribe_resource(uri)
                await rounds(client)
        return median(delays)

    return anyio.run(measure)


def guest_start(host: Host, wasm: Path) -> float:
    values = []
    for _ in range(ROUNDS * 3):
        started = time.perf_counter()
        outcome = host.run(wasm, json.dumps({"steps": []}), agent="start", policy=host.policy("start"))
        assert outcome.status == "ok", outcome
        values.append(time.perf_counter() - started)
    return median(values)
