"""WIT encoding rules that are not shapes: how a resource's content reaches a guest.

As the WIT contract for `resource-content.content` says: text for text/* or no MIME type, base64
otherwise (blob resources). The rule lives in `runtime.wit_values`, not on the model's `ResourceData`.
"""

from __future__ import annotations

import base64

import pytest

from agent_host.model import ResourceData
from agent_host.runtime.wit_values import guest_content


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
