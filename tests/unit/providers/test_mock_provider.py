"""Mock providers: scripted turns answered in order, shared by every chat of the provider; past the
script a clear error (or the last turn again); streams in pieces, tool calls whole, then the whole answer;
usage from the turn or estimated; `max_tokens` cuts a turn as a model would; requests checked first.
"""

from __future__ import annotations

import pytest

from agent_host.config.providers import MockProviderConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatDelta, ChatMessage, ChatRequest, ChatResult, ToolCall, Usage
from agent_host.providers.mock import MockProvider, pieces
from tests.support.provider_configs import FILE, providers

pytestmark = pytest.mark.anyio

SCRIPT = """
[provider.fake]
kind = "mock"
models = ["mock", "mock-large"]
turns = [
    { content = "Hello there, traveller.", usage = { input_tokens = 12, output_tokens = 3 } },
    { content = "Let me add.", tool_calls = [
        { name = "add", arguments = { a = 2, b = 3 } },
        { name = "log", id = "c9" },
    ] },
]
"""

ASK = ChatRequest(messages=(ChatMessage("user", "hi"),))


def mock(text: str = SCRIPT) -> MockProvider:
    config = providers(text)["fake"]
    assert isinstance(config, MockProviderConfig)
    return MockProvider(config)


async def test_turns_are_answered_in_order_with_their_usage_or_an_estimate() -> None:
    provider = mock()
    first = await provider.chat(ASK, model="mock", max_tokens=None)
    assert first == ChatResult("mock", "Hello there, traveller.", (), "stop", Usage(12, 3))
    second = await provider.chat(ASK, model="mock-large", max_tokens=None)
    calls = (ToolCall("call_2_1", "add", '{"a": 2, "b": 3}'), ToolCall("c9", "log", "{}"))
    assert (second.model, second.content, second.tool_calls, second.finish_reason) == (
        "mock-large",
        "Let me add.",
        calls,
        "tool-calls",
    )
    written = len("Let me add.") + len('{"a": 2, "b": 3}') + len("{}")
    assert second.usage == Usage(input_tokens=1, output_tokens=-(-written // 4))


async def test_past_the_script_a_chat_names_the_provider_and_the_script_length() -> None:
    provider = mock()
    for _ in range(2):
        await provider.chat(ASK, model="mock", max_tokens=None)
    with pytest.raises(ToolingError) as caught:
        await provider.chat(ASK, model="mock", max_tokens=None)
    assert caught.value.code is ErrorCode.UNAVAILABLE
    assert caught.value.message == (
        "mock provider 'fake' has no scripted turn for chat #3 (its script has 2); add turns to it in "
        f"{FILE} [provider.fake], or set repeat_last = true"
    )


async def test_repeat_last_answers_with_the_last_turn_for_ever() -> None:
    provider = mock(
        '[provider.fake]\nkind = "mock"\nrepeat_last = true\nturns = [{ content = "a" }, { content = "b" }]\n'
    )
    answers = [(await provider.chat(ASK, model="mock", max_tokens=None)).content for _ in range(4)]
    assert answers == ["a", "b", "b", "b"]


async def test_a_stream_gives_pieces_then_whole_tool_calls_then_the_whole_answer() -> None:
    provider = mock()
    first = [item async for item in provider.stream(ASK, model="mock", max_tokens=None)]
    assert first[:-1] == [ChatDelta(content=piece) for piece in pieces("Hello there, traveller.")]
    assert len(first) - 1 == 3 and "".join(d.content or "" for d in first[:-1] if isinstance(d, ChatDelta)) == (
        "Hello there, traveller."
    )
    assert first[-1] == ChatResult("mock", "Hello there, traveller.", (), "stop", Usage(12, 3))
    second = [item async for item in provider.stream(ASK, model="mock", max_tokens=None)]
    assert [d.tool_call for d in second if isinstance(d, ChatDelta) and d.tool_call] == [
        ToolCall("call_2_1", "add", '{"a": 2, "b": 3}'),
        ToolCall("c9", "log", "{}"),
    ]
    final = second[-1]
    assert isinstance(final, ChatResult) and final.finish_reason == "tool-calls" and len(final.tool_calls) == 2


async def test_nothing_is_taken_from_the_script_before_a_stream_is_read() -> None:
    provider = mock()
    unread = provider.stream(ASK, model="mock", max_tokens=None)
    await unread.aclose()
    assert (await provider.chat(ASK, model="mock", max_tokens=None)).content == "Hello there, traveller."


async def test_max_tokens_cuts_a_turn_as_a_model_would() -> None:
    provider = mock()
    cut = await provider.chat(ASK, model="mock", max_tokens=2)
    assert cut == ChatResult("mock", "Hello th", (), "length", Usage(12, 2))
    calls = await provider.chat(ASK, model="mock", max_tokens=1)
    assert (calls.content, calls.tool_calls, calls.finish_reason, calls.usage.output_tokens) == (
        "Let ",
        (),
        "length",
        1,
    )


@pytest.mark.parametrize(
    ("request_", "max_tokens", "words"),
    [
        (ChatRequest(messages=()), None, "needs at least one message"),
        (ChatRequest(messages=(ChatMessage("tool", "3"),)), None, "is a `tool` message without `tool-call-id`"),
        (ASK, 0, "max-tokens must be at least 1"),
        (ChatRequest(messages=ASK.messages, response_schema="[1]"), None, "must be a JSON object, got an array"),
        (ChatRequest(messages=ASK.messages, response_schema="{"), None, "is not JSON"),
    ],
)
async def test_a_request_it_cannot_answer_is_invalid_and_takes_no_turn(
    request_: ChatRequest, max_tokens: int | None, words: str
) -> None:
    provider = mock()
    with pytest.raises(ToolingError) as caught:
        await provider.chat(request_, model="mock", max_tokens=max_tokens)
    assert caught.value.code is ErrorCode.INVALID_ARGUMENTS and words in caught.value.message
    assert (await provider.chat(ASK, model="mock", max_tokens=None)).content == "Hello there, traveller."


async def test_models_are_the_listed_ones_or_the_default() -> None:
    assert await mock().models() == ["mock", "mock-large"]
    assert await mock('[provider.fake]\nkind = "mock"\nmodel = "tiny"\n').models() == ["tiny"]


def test_pieces_split_text_in_at_most_three_parts_and_lose_nothing() -> None:
    for text in ("", "a", "ab", "abcd", "Hello there, traveller."):
        parts = pieces(text)
        assert "".join(parts) == text and len(parts) <= 3 and all(parts)
