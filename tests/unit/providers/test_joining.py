"""Joining an answer from its pieces (`providers.joining.Answer`): fragments joined by key, each tool call
handed out whole and once, and every bound (text, arguments, calls, names) answered with `limit-exceeded`.
"""

from __future__ import annotations

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatResult, ToolCall, Usage
from agent_host.providers import joining
from agent_host.providers.joining import Answer

WHERE = "provider 'llm'"


def test_fragments_are_joined_by_key_and_calls_keep_the_order_they_began_in() -> None:
    answer = Answer(WHERE)
    answer.text("Let ")
    answer.call(1, id="call_b", name="ad")
    answer.call(0, id="call_a", name="lookup", arguments='{"ci')
    answer.call(1, name="d", arguments='{"a": 2}')
    answer.call(0, id="ignored", arguments='ty": "Paris"}')
    answer.text("me.")
    assert answer.end_call(0) == ToolCall("call_a", "lookup", '{"city": "Paris"}')
    assert answer.open_calls() == [ToolCall("call_b", "add", '{"a": 2}')]
    result = answer.result("gpt", "tool-calls", Usage(1, 2))
    assert result == ChatResult(
        "gpt",
        "Let me.",
        (ToolCall("call_b", "add", '{"a": 2}'), ToolCall("call_a", "lookup", '{"city": "Paris"}')),
        "tool-calls",
        Usage(1, 2),
    )
    assert answer.chars == len("Let me.") + len('{"a": 2}') + len('{"city": "Paris"}')


def test_a_call_without_id_or_arguments_gets_defaults_and_one_without_a_name_is_a_protocol_error() -> None:
    answer = Answer(WHERE)
    answer.call("x", name="ping")
    assert answer.end_call("x") == ToolCall("call_1", "ping", "{}")
    answer.call("y", arguments="{}")
    with pytest.raises(ToolingError) as caught:
        answer.end_call("y")
    assert caught.value == ToolingError(ErrorCode.PROTOCOL, f"{WHERE} sent tool call #2 without a name")
    assert Answer(WHERE).result("m", "stop", Usage()).content is None


def test_a_call_is_handed_out_once_and_not_continued_after() -> None:
    answer = Answer(WHERE)
    answer.call(0, name="a")
    answer.end_call(0)
    with pytest.raises(ToolingError, match="ended tool call #1 twice"):
        answer.end_call(0)
    with pytest.raises(ToolingError) as caught:
        answer.call(0, arguments="{}")
    assert caught.value.code is ErrorCode.PROTOCOL and "after it had ended" in caught.value.message
    assert answer.open_calls() == []


@pytest.mark.parametrize(
    ("bound", "value", "feed", "words"),
    [
        ("MAX_CONTENT_CHARS", 10, lambda a: [a.text("12345"), a.text("678901")], "10 characters of text"),
        (
            "MAX_ARGUMENTS_CHARS",
            10,
            lambda a: [a.call(0, name="f", arguments="12345"), a.call(1, name="g", arguments="678901")],
            "10 characters of tool-call arguments",
        ),
        ("MAX_TOOL_CALLS", 2, lambda a: [a.call(n, name="f") for n in range(3)], "2 tool calls"),
        ("MAX_NAME_CHARS", 4, lambda a: [a.call(0, name="ab"), a.call(0, name="cde")], "4 characters of a tool's name"),
        ("MAX_NAME_CHARS", 4, lambda a: a.call(0, id="12345"), "4 characters of a tool call's id"),
        ("MAX_NAME_CHARS", 4, lambda a: a.result("model", "stop", Usage()), "4 characters of the model's name"),
    ],
)
def test_each_bound_of_an_answer_is_limit_exceeded_naming_it(
    bound: str, value: int, feed: object, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(joining, bound, value)
    with pytest.raises(ToolingError) as caught:
        feed(Answer(WHERE))  # type: ignore[operator]
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    assert caught.value.message == f"{WHERE} answered with more than {words} ({bound})"


def test_the_bounds_are_the_documented_constants() -> None:
    assert (joining.MAX_CONTENT_CHARS, joining.MAX_ARGUMENTS_CHARS) == (4 * 1024 * 1024, 4 * 1024 * 1024)
    assert (joining.MAX_TOOL_CALLS, joining.MAX_NAME_CHARS) == (128, 256)
