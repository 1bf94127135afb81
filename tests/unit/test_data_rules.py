"""Pure rules at the guest boundary: argument parsing, resource content encoding, result text.

Provenance: issue 2, point 4 (blob resources base64; `isError` text as the message) and the WIT
contract for `resource-content.content` (text for text/* or no MIME type, base64 otherwise).
"""

from __future__ import annotations

import base64

import pytest

from host.errors import ErrorCode, ToolingError
from host.model import CallResult, ResourceData
from host.runtime.wit_values import guest_content
from host.session import parse_arguments


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (ResourceData("u", "text/plain", text="héllo"), "héllo"),
        (ResourceData("u", None, text="no type"), "no type"),
        (ResourceData("u", "TEXT/Markdown", text="# t"), "# t"),
        (ResourceData("u", "image/png", blob=b64(b"\x89PNG")), b64(b"\x89PNG")),
        (ResourceData("u", "application/json", text='{"a": 1}'), b64(b'{"a": 1}')),
        (ResourceData("u", "text/plain", blob=b64("blob text é".encode())), "blob text é"),
        (ResourceData("u", "text/plain", blob=b64(b"\xff\xfe")), b64(b"\xff\xfe")),
    ],
)
def test_resource_content_follows_the_mime_type_rule(data: ResourceData, expected: str) -> None:
    assert guest_content(data) == expected


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
