"""A request with the wrong method on the HTTP tool API gets a 405 naming the method to use, once.

The answer is in the API's error format (`{"error": {"code": "invalid-arguments", "message"}}`);
the message is `METHOD PATH: use POST` (or `use GET (or HEAD)`), and `Allow` lists every method.
"""

from __future__ import annotations

import json

import pytest
from starlette.requests import Request

from agent_host.serve.tool_api import wrong_method

pytestmark = pytest.mark.anyio


def request(method: str, path: str) -> Request:
    scope = {"type": "http", "method": method, "path": path, "headers": [], "query_string": b"", "scheme": "http"}
    return Request({**scope, "server": ("127.0.0.1", 8080), "root_path": ""})


@pytest.mark.parametrize(
    ("allowed", "method", "path", "message", "allow"),
    [
        ("POST", "GET", "/tools/echo", "GET /tools/echo: use POST", "POST"),
        ("GET", "DELETE", "/tools/list", "DELETE /tools/list: use GET (or HEAD)", "GET, HEAD"),
        ("GET", "POST", "/openapi.json", "POST /openapi.json: use GET (or HEAD)", "GET, HEAD"),
    ],
)
async def test_the_405_names_the_method_to_use_once(
    allowed: str, method: str, path: str, message: str, allow: str
) -> None:
    answer = await wrong_method(allowed)(request(method, path))
    assert answer.status_code == 405 and answer.headers["allow"] == allow
    assert json.loads(bytes(answer.body)) == {"error": {"code": "invalid-arguments", "message": message}}
    assert message.count(allowed) == 1
