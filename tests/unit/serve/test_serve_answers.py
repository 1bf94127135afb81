"""A guest's answer as `serve` gives it: JSON when it is strict JSON (structured content for an
object), its text otherwise, however much it looks like JSON (nested past the host's depth, NaN);
the HTTP API's body is rendered from the value parsed once."""

from __future__ import annotations

import json

import pytest

from agent_host._support import strict_json
from agent_host.serve.answers import Answer


def test_an_object_answer_is_structured_and_its_value_is_parsed_once() -> None:
    answer = Answer.of_text('{"a": [1, "é"]}')
    assert answer.structured == {"a": [1, "é"]}
    assert json.loads(answer.rendered()) == {"result": {"a": [1, "é"]}}
    assert answer.size == len('{"a": [1, "é"]}')


@pytest.mark.parametrize(
    "text",
    [
        "[" * 3000 + "]" * 3000,
        '{"a": ' * (strict_json.MAX_DEPTH + 1) + "1" + "}" * (strict_json.MAX_DEPTH + 1),
        '{"a": NaN}',
        '{"a": "\\ud800"}',
        "not json",
    ],
)
def test_text_that_is_not_strict_json_is_answered_as_text(text: str) -> None:
    answer = Answer.of_text(text)
    assert answer.structured is None
    assert answer.value == text
    assert json.loads(answer.rendered()) == {"result": text}
    assert answer.wire() == {"content": [{"type": "text", "text": text}], "isError": False}


def test_a_json_array_or_string_answer_is_its_value_without_structured_content() -> None:
    assert Answer.of_text("[1, 2]").value == [1, 2]
    assert Answer.of_text("[1, 2]").structured is None
    assert Answer.of_text('"hi"').value == "hi"


def test_an_answer_longer_than_the_structured_bound_is_answered_as_its_text_unparsed() -> None:
    from agent_host.serve.answers import MAX_STRUCTURED

    text = '{"a": "' + "x" * MAX_STRUCTURED + '"}'
    answer = Answer.of_text(text)
    assert answer.structured is None and answer.value == text
    assert json.loads(answer.rendered()) == {"result": text}
