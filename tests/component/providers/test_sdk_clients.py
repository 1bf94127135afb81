"""The real `openai` and `anthropic` SDK clients behind our providers, against local servers speaking each
wire protocol over HTTP (`tests/servers/openai_wire.py`, `anthropic_wire.py`): chats, streams whose
tool-call fragments are joined and handed out whole, usage, each row of the error table, a stream closed
or cancelled by its reader closing the upstream stream (the server sees its client go), model globs, and
the key in no error, `data` or log line.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass

import anyio
import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatDelta, ChatMessage, ChatRequest, ChatResult, ToolCall, Usage
from agent_host.providers import Provider, ProviderSet
from tests.servers import anthropic_wire, openai_wire
from tests.servers.model_wire import COMPLETION_TOKENS, PROMPT_TOKENS
from tests.support.model_servers import disconnects, requests, running
from tests.support.provider_configs import KEY, network, providers

pytestmark = [pytest.mark.component, pytest.mark.anyio]

ASK = ChatRequest(messages=(ChatMessage("system", "Be brief."), ChatMessage("user", "hello there")))
USAGE = Usage(PROMPT_TOKENS, COMPLETION_TOKENS)
CALLS = (
    ToolCall("call_lookup", "lookup", '{"city": "Paris", "days": 3}'),
    ToolCall("call_add", "add", '{"a": 2, "b": 3}'),
)


@dataclass(frozen=True)
class Wire:
    kind: str
    url: str
    """The server's root."""
    base_url: str
    """What a provider's `base_url` says to reach it."""


@pytest.fixture(scope="module", params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> Iterator[Wire]:
    kind = request.param
    build = openai_wire.build if kind == "openai" else anthropic_wire.build
    with running(build) as url:
        yield Wire(kind, url, f"{url}/v1" if kind == "openai" else url)


def provider_set(wire: Wire, extra: str = "", base_url: str | None = None) -> ProviderSet:
    return ProviderSet(providers(network(wire.kind, base_url or wire.base_url, model="gpt-4.1", extra=extra)))


async def chat(wire: Wire, model: str, extra: str = "", base_url: str | None = None) -> ChatResult:
    made = provider_set(wire, extra, base_url)
    try:
        return await made.get("llm").chat(ASK, model=model, max_tokens=100)
    finally:
        await made.aclose()


async def streamed(provider: Provider, model: str) -> list[ChatDelta | ChatResult]:
    return [item async for item in provider.stream(ASK, model=model, max_tokens=100)]


async def test_a_chat_answers_with_the_text_the_model_and_the_usage(wire: Wire) -> None:
    assert await chat(wire, "gpt-4.1") == ChatResult("gpt-4.1", "echo: hello there", (), "stop", USAGE)


async def test_a_chat_with_tool_calls_gives_each_call_whole(wire: Wire) -> None:
    assert await chat(wire, "tools") == ChatResult("tools", "Let me look.", CALLS, "tool-calls", USAGE)


@pytest.mark.parametrize(("model", "finish"), [("long", "length"), ("filtered", "content-filter")])
async def test_finish_reasons_are_mapped(wire: Wire, model: str, finish: str) -> None:
    assert (await chat(wire, model)).finish_reason == finish


async def test_a_stream_gives_text_pieces_then_whole_tool_calls_then_one_final_answer(wire: Wire) -> None:
    """The server sends each call's arguments in 5-character fragments: they arrive joined."""
    made = provider_set(wire)
    try:
        items = await streamed(made.get("llm"), "tools")
    finally:
        await made.aclose()
    deltas, final = items[:-1], items[-1]
    assert all(isinstance(item, ChatDelta) for item in deltas)
    assert [d.content for d in deltas if isinstance(d, ChatDelta) and d.content] == ["Let", " me", " look."]
    assert [d.tool_call for d in deltas if isinstance(d, ChatDelta) and d.tool_call] == list(CALLS)
    assert final == ChatResult("tools", "Let me look.", CALLS, "tool-calls", USAGE)


async def test_a_stream_without_reported_usage_is_counted_by_the_estimate(wire: Wire) -> None:
    made = provider_set(wire)
    try:
        final = (await streamed(made.get("llm"), "no-usage"))[-1]
    finally:
        await made.aclose()
    assert isinstance(final, ChatResult) and final.content == "echo: hello there"
    estimate = Usage(-(-len("Be brief.hello there") // 4), -(-len("echo: hello there") // 4))
    assert final.usage == (estimate if wire.kind == "openai" else USAGE)  # the Messages API always says


ERRORS: dict[str, tuple[ErrorCode, str]] = {
    "error-400": (ErrorCode.INVALID_ARGUMENTS, "refused the request for model 'error-400' (HTTP 400): "),
    "error-401": (ErrorCode.UNAUTHORIZED, "refused its key (HTTP 401): set a valid `api_key` in "),
    "error-403": (ErrorCode.UNAUTHORIZED, "refused its key (HTTP 403): set a valid `api_key` in "),
    "error-404": (ErrorCode.NOT_FOUND, "has no model 'error-404' (HTTP 404): "),
    "error-429": (ErrorCode.UNAVAILABLE, "is limiting requests (HTTP 429), retry after 7 s: "),
    "error-500": (ErrorCode.UNAVAILABLE, "failed (HTTP 500), try again later: "),
    "error-503": (ErrorCode.UNAVAILABLE, "failed (HTTP 503), try again later: "),
}


@pytest.mark.parametrize("model", ERRORS)
@pytest.mark.parametrize("how", ["chat", "stream"])
async def test_each_status_is_its_row_of_the_error_table(wire: Wire, model: str, how: str) -> None:
    made = provider_set(wire)
    try:
        with pytest.raises(ToolingError) as caught:
            if how == "chat":
                await made.get("llm").chat(ASK, model=model, max_tokens=100)
            else:
                await streamed(made.get("llm"), model)
    finally:
        await made.aclose()
    code, words = ERRORS[model]
    assert caught.value.code is code and caught.value.message.startswith(f"provider 'llm' {words}"), caught.value
    assert caught.value.data == ('{"retry_after": 7.0}' if model == "error-429" else None)


async def test_an_error_inside_a_stream_ends_it_unavailable_after_the_pieces_before(wire: Wire) -> None:
    made = provider_set(wire)
    seen: list[ChatDelta | ChatResult] = []
    try:
        with pytest.raises(ToolingError) as caught:
            async for item in made.get("llm").stream(ASK, model="broken", max_tokens=100):
                seen.append(item)  # noqa: PERF401 - the pieces before the error are the point
    finally:
        await made.aclose()
    assert seen == [ChatDelta(content="echo:")]
    assert caught.value.code is ErrorCode.UNAVAILABLE
    assert caught.value.message.startswith("provider 'llm' failed (an error in its answer), try again later: ")


async def test_a_server_that_is_not_there_is_unavailable_naming_base_url(wire: Wire) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ToolingError) as caught:
        await chat(wire, "gpt-4.1", base_url=f"http://127.0.0.1:{port}")
    assert caught.value.code is ErrorCode.UNAVAILABLE
    assert "could not be reached, or the connection was lost" in caught.value.message
    assert "check `base_url` in /etc/agent/agent-host.toml [provider.llm]" in caught.value.message


@pytest.mark.parametrize("how", ["chat", "stream"])
async def test_past_its_timeout_a_chat_is_timeout_and_the_server_sees_the_client_go(wire: Wire, how: str) -> None:
    made = ProviderSet(
        providers(network(wire.kind, wire.base_url, model="slow").replace("timeout = 5", "timeout = 0.5"))
    )
    before = await disconnects(wire.url)
    try:
        with pytest.raises(ToolingError) as caught:
            if how == "chat":
                await made.get("llm").chat(ASK, model="slow", max_tokens=100)
            else:
                await streamed(made.get("llm"), "slow")
    finally:
        await made.aclose()
    assert caught.value.code is ErrorCode.TIMEOUT
    assert caught.value.message == (
        "provider 'llm' did not answer within 0.5 s (raise `timeout` in /etc/agent/agent-host.toml [provider.llm])"
    )
    assert await disconnects(wire.url, before + 1) == before + 1


async def test_closing_a_stream_closes_the_upstream_stream_at_once(wire: Wire) -> None:
    """The "hang" answer sends one piece, then nothing until its client goes: only our close ends it."""
    made = provider_set(wire)
    before = await disconnects(wire.url)
    try:
        stream = made.get("llm").stream(ASK, model="hang", max_tokens=100)
        assert await anext(stream) == ChatDelta(content="echo:")
        await stream.aclose()
        assert await disconnects(wire.url, before + 1) == before + 1
    finally:
        await made.aclose()


async def test_cancelling_the_reader_of_a_stream_closes_the_upstream_stream(wire: Wire) -> None:
    made = provider_set(wire)
    before = await disconnects(wire.url)
    first = anyio.Event()

    async def read() -> None:
        async for _ in made.get("llm").stream(ASK, model="hang", max_tokens=100):
            first.set()

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            await first.wait()
            tasks.cancel_scope.cancel()
        assert await disconnects(wire.url, before + 1) == before + 1
    finally:
        await made.aclose()


@pytest.mark.parametrize(
    ("model", "words"),
    [("many-calls", "128 tool calls"), ("big-arguments", "4194304 characters of tool-call arguments")],
)
async def test_an_answer_past_the_bounds_is_limit_exceeded_and_closes_the_stream(
    wire: Wire, model: str, words: str
) -> None:
    made = provider_set(wire)
    before = await disconnects(wire.url)
    try:
        with pytest.raises(ToolingError) as caught:
            await streamed(made.get("llm"), model)
    finally:
        await made.aclose()
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED and words in caught.value.message
    assert await disconnects(wire.url, before + 1) == before + 1


async def test_models_are_the_servers_list_filtered_by_the_globs(wire: Wire) -> None:
    every = provider_set(wire)
    some = ProviderSet(providers(network(wire.kind, wire.base_url, model="gpt-4.1", extra='models = ["gpt-4.1*"]\n')))
    try:
        assert await every.get("llm").models() == ["claude-test", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "o3"]
        assert await some.get("llm").models() == ["gpt-4.1", "gpt-4.1-mini"]
    finally:
        await every.aclose()
        await some.aclose()


async def test_the_key_reaches_the_server_and_nothing_else(wire: Wire, caplog: pytest.LogCaptureFixture) -> None:
    """Every error path, with the host's and the SDKs' log at debug: the key is in no message, `data` or log
    line, though the servers quote it back (400 and 401)."""
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="agent_host")  # whatever an in-process CLI run of another test set
    made = provider_set(wire)
    errors: list[ToolingError] = []
    try:
        for model in [*ERRORS, "broken", "many-calls"]:
            for how in ("chat", "stream"):
                try:
                    if how == "chat":
                        await made.get("llm").chat(ASK, model=model, max_tokens=100)
                    else:
                        await streamed(made.get("llm"), model)
                except ToolingError as failed:
                    errors.append(failed)
    finally:
        await made.aclose()
    assert len(errors) >= 2 * len(ERRORS) + 2
    assert "[hidden]" in next(e.message for e in errors if "HTTP 400" in e.message)
    for error in errors:
        assert KEY not in error.message and KEY not in (error.data or "") and KEY not in repr(error)
    assert KEY not in caplog.text and "provider 'llm'" in caplog.text
    headers = (await requests(wire.url))[-1]["headers"]
    assert KEY in headers.get("authorization", "") + headers.get("x-api-key", "")
