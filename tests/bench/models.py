"""`make bench`, models: a chat through a guest beside the `openai` SDK calling the same local server.

The OpenAI-wire test server (`tests.servers.openai_wire`) runs as its own process over HTTP on
127.0.0.1. In the same run, rounds interleaved (SDK, guest, SDK, ...):
- blocking chat latency: the SDK's `client.chat.completions.create` (the synchronous `OpenAI`
  client, one connection kept alive) beside a guest's `provider.chat` (the thinker test guest doing
  `CHATS` chats in one run, each timed on its own monotonic clock, so instantiation is left out;
  the host's provider is `kind = "openai"` with the server's `base_url`). Median and p90 over every
  chat of every round; the target is the medians' ratio. Beside them, without a target: the same
  SDK's `AsyncOpenAI` client (the one the host drives) on an asyncio loop of its own, and the host
  path alone (the guest's chats answered by a mock provider: no network).
- the first streamed piece: the server's "clock" model sends one piece holding the wall clock at
  the moment it sends it (`time.time_ns()`, after `CLOCK_PAUSE` s); the SDK (streaming) and the
  guest each subtract it from the wall clock when they see the piece: the SDK when its iterator
  yields the chunk, the guest when `inbox.recv` returns the `chat-delta` (a guest's wall clock is
  the host's). The target is the difference of the medians.
Kept for the performance page as module `models` (`tests.bench.record`).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Final

import openai
from openai.types.chat import ChatCompletionMessageParam

from agent_host import Host, RunStatus
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from tests.bench.record import Run, Table, record
from tests.servers.openai_wire import CLOCK_PAUSE
from tests.support.component import Server

THINKER: Final = Path(__file__).resolve().parents[1] / "guests" / "thinker"
ROUNDS: Final = 10
CHATS: Final = 40
"""Blocking chats per round, each way."""
STREAMS: Final = 20
"""Streams per round, each way."""
MODEL: Final = "gpt-4.1"
"""The blocking chats' model (the server echoes the last user message)."""
PROMPT: Final = "hello from the bench"
MESSAGES: Final[list[ChatCompletionMessageParam]] = [{"role": "user", "content": PROMPT}]
KEY: Final = "sk-bench-0123456789"


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[8]


def sdk_chats(client: openai.OpenAI, n: int) -> list[float]:
    """Seconds per blocking chat, `n` in a row."""
    took = []
    for _ in range(n):
        started = time.perf_counter()
        client.chat.completions.create(model=MODEL, messages=MESSAGES)
        took.append(time.perf_counter() - started)
    return took


def sdk_first_pieces(client: openai.OpenAI, n: int) -> list[float]:
    """Seconds from the "clock" model's send to the SDK's first chunk with text, per stream."""
    delays = []
    for _ in range(n):
        stream = client.chat.completions.create(
            model="clock",
            messages=MESSAGES,
            stream=True,
            stream_options={"include_usage": True},
        )
        delay = None
        for chunk in stream:
            now = time.time_ns()
            if delay is None and chunk.choices and chunk.choices[0].delta.content:
                delay = (now - int(chunk.choices[0].delta.content)) / 1e9
        assert delay is not None, "the stream had no piece"
        delays.append(delay)
    return delays


async def _async_chats(client: openai.AsyncOpenAI, n: int) -> list[float]:
    took = []
    for _ in range(n):
        started = time.perf_counter()
        await client.chat.completions.create(model=MODEL, messages=MESSAGES)
        took.append(time.perf_counter() - started)
    return took


def guest(host: Host, thinker: Path, *ops: dict[str, Any], provider: str = "llm") -> list[Any]:
    """The `ok` value of each op the thinker guest ran, asking `provider`."""
    outcome = host.run(thinker, json.dumps({"provider": provider, "ops": list(ops)}), agent="bench")
    assert outcome.status is RunStatus.OK, outcome
    results: list[dict[str, Any]] = json.loads(outcome.output)
    for result in results:
        assert "ok" in result, result
    return [result["ok"] for result in results]


def measure() -> dict[str, list[float]]:
    """Every measured value (seconds), by way: `sdk_chat`, `async_chat`, `guest_chat`, `mock_chat`,
    `sdk_first`, `guest_first`."""
    thinker = build_guest(THINKER)
    server = Server([sys.executable, "-m", "tests.servers.openai_wire"])
    url = f"{server.url}/v1"
    toml = (
        f'[provider.llm]\nkind = "openai"\nbase_url = "{url}"\napi_key = "{KEY}"\nmodel = "{MODEL}"\n'
        '[provider.mock]\nkind = "mock"\nrepeat_last = true\n'
        f'turns = [{{ content = "echo: {PROMPT}" }}]\n'
        '[agents.bench]\nproviders = ["llm", "mock"]\n'
    )
    chat = {"op": "timed_chats", "n": CHATS, "request": {"messages": MESSAGES}}
    first = {"op": "first_pieces", "n": STREAMS, "request": {"model": "clock", "messages": MESSAGES}}
    values: dict[str, list[float]] = {key: [] for key in ("sdk_chat", "async_chat", "guest_chat", "mock_chat",
                                                          "sdk_first", "guest_first")}  # fmt: skip
    loop = asyncio.new_event_loop()
    async_client = openai.AsyncOpenAI(base_url=url, api_key=KEY)
    try:
        with (
            Host(parse_config(toml, Path.cwd() / "bench.toml")) as host,
            openai.OpenAI(base_url=url, api_key=KEY) as client,
        ):
            host.runtime.load(thinker)
            sdk_chats(client, 3)  # warm: connections, imports
            sdk_first_pieces(client, 2)
            loop.run_until_complete(_async_chats(async_client, 3))
            guest(host, thinker, {**chat, "n": 3}, {**first, "n": 2})
            guest(host, thinker, {**chat, "n": 3}, provider="mock")
            for _ in range(ROUNDS):
                values["sdk_chat"] += sdk_chats(client, CHATS)
                values["async_chat"] += loop.run_until_complete(_async_chats(async_client, CHATS))
                guest_chat, guest_first = guest(host, thinker, chat, first)
                values["guest_chat"] += guest_chat
                values["mock_chat"] += guest(host, thinker, chat, provider="mock")[0]
                values["sdk_first"] += sdk_first_pieces(client, STREAMS)
                values["guest_first"] += [ns / 1e9 for ns in guest_first]
    finally:
        loop.run_until_complete(async_client.close())
        loop.close()
        server.stop()
    return values


def _ms(values: list[float]) -> tuple[float, float]:
    """(median, p90) in ms."""
    return statistics.median(values) * 1e3, _p90(values) * 1e3


def main() -> int:
    run = Run("models")
    values = measure()
    figures = {f"{key}_{stat}_ms": value for key, series in values.items()
               for stat, value in zip(("median", "p90"), _ms(series), strict=True)}  # fmt: skip
    sdk, ours = _ms(values["sdk_chat"]), _ms(values["guest_chat"])
    asynchronous, mock = _ms(values["async_chat"]), _ms(values["mock_chat"])
    sdk_first, first = _ms(values["sdk_first"]), _ms(values["guest_first"])
    chat_met, first_met = ours[0] <= 1.15 * sdk[0], first[0] - sdk_first[0] <= 2.0

    def row(
        figure: str, reference: float, value: float, ratio: bool, target: str = "-", met: bool | None = None
    ) -> list[str]:
        relation = f"{value / reference:.2f}x" if ratio else f"{value - reference:+.2f} ms"
        verdict = "" if met is None else "met" if met else "NOT met"
        return [figure, f"{reference:.2f} ms", f"{value:.2f} ms", relation, target, verdict]

    table = Table(
        ["figure", "reference: `openai` SDK (same run)", "measured", "ratio or difference", "target", ""],
        [
            row("blocking chat, a guest's `provider.chat` / SDK `chat.completions.create`, median", sdk[0], ours[0],
                True, "≤ 1.15x", chat_met),
            row("the same, p90", sdk[1], ours[1], True),
            row("blocking chat, the SDK's `AsyncOpenAI` client (what the host drives) on an asyncio loop, median",
                sdk[0], asynchronous[0], True),
            ["host path alone: a guest's `provider.chat` answered by a mock provider, median", "-",
             f"{mock[0]:.2f} ms", "-", "-", ""],
            row("first streamed piece, server's send → guest's `inbox.recv` / SDK's chunk, median", sdk_first[0],
                first[0], False, "≤ +2 ms", first_met),
            row("the same, p90", sdk_first[1], first[1], False),
        ],
        note=f"The OpenAI-wire test server (`tests/servers/openai_wire.py`) over HTTP on 127.0.0.1, in its own "
        f"process; {ROUNDS} interleaved rounds of {CHATS} blocking chats and {STREAMS} streams each way (medians "
        "and p90 over all of them). The SDK is the synchronous `openai.OpenAI` client; the guest (the thinker test "
        "guest) times its chats inside the sandbox. A stream's one piece is sent "
        f"{CLOCK_PAUSE * 1e3:.0f} ms after its start, holding the server's wall clock, its end right after it.",
    )  # fmt: skip
    record(run, [table], figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
