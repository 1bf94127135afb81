"""Pure rules at the guest boundary: argument parsing, call results in MCP's wire form.

The text of an `isError` result is its message, and one constructor per kind of result serves every
tooling kind. The resource content rule is in `test_wit_values`.
"""

from __future__ import annotations

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallResult
from agent_host.session import parse_arguments


def test_arguments_must_be_a_json_object() -> None:
    assert parse_arguments('{"a": [1, 2]}') == {"a": [1, 2]}
    for text, fragment in [
        ("{a}", "not valid JSON"),
        ("[1]", "got list"),
        ("null", "got NoneType"),
        ("", "line 1, column 1"),
    ]:
        with pytest.raises(ToolingError) as caught:
            parse_arguments(text)
        assert caught.value.code is ErrorCode.INVALID_ARGUMENTS
        assert fragment in caught.value.message


def test_call_result_text_joins_text_blocks_only() -> None:
    result = CallResult(
        {
            "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "x"}, {"type": "text", "text": "b"}],
            "isError": True,
        }
    )
    assert result.text() == "a\nb"
    assert result.is_error
    assert not CallResult({"content": []}).is_error


def test_result_constructors_write_mcps_wire_form_with_keys_in_one_order() -> None:
    assert CallResult.from_text("hi").value == {"content": [{"type": "text", "text": "hi"}], "isError": False}
    assert CallResult.from_error("no").value == {"content": [{"type": "text", "text": "no"}], "isError": True}
    structured = CallResult.from_structured({"n": 1})
    assert list(structured.value) == ["content", "structuredContent", "isError"]
    assert structured.value["content"] == [{"type": "text", "text": '{"n": 1}'}]
    assert structured.value["structuredContent"] == {"n": 1}
    image = {"type": "image", "data": "x", "mimeType": "image/png"}
    assert CallResult.from_content([image]).value == {"content": [image], "isError": False}


def test_a_structured_value_that_is_not_an_object_is_wrapped_as_the_sdk_does() -> None:
    assert CallResult.from_structured([1, "é"]).value == {
        "content": [{"type": "text", "text": '[1, "é"]'}],
        "structuredContent": {"result": [1, "é"]},
        "isError": False,
    }
    assert CallResult.from_structured("plain").value["content"] == [{"type": "text", "text": "plain"}]
    with pytest.raises(TypeError):
        CallResult.from_structured({"when": object()})
