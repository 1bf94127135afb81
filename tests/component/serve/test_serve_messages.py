"""The HTTP tool API's error messages never repeat their code; MCP's error text names it once.

An HTTP API message does not start with `invalid-arguments: ...` beside `"code": "invalid-arguments"`
(a client showing both would show the code twice).
"""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.serve.answers import Answer
from tests.support.serve_configs import CONFIG
from tests.support.serving import JSON_HEADERS, HttpServe, mcp_call

pytestmark = pytest.mark.component


def test_an_answer_tells_its_code_once() -> None:
    for answer in (
        Answer.failure(ErrorCode.NOT_FOUND, "no tool 'x' is offered"),
        Answer.of_error(ToolingError(ErrorCode.INVALID_ARGUMENTS, "at $.a: 'x' is not of type 'integer'")),
    ):
        assert answer.code is not None and not answer.message.startswith(answer.code), answer
        assert answer.text == f"{answer.code}: {answer.message}"


def test_no_error_message_of_the_http_api_starts_with_its_code(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    served = HttpServe(config)
    try:
        answers = [
            httpx2.post(f"{served.base}/tools/idle", json={"input": 5}),
            httpx2.post(f"{served.base}/tools/idle", json={"input": "x", "other": 1}),
            httpx2.post(f"{served.base}/tools/nobody", json={}),
            httpx2.post(f"{served.base}/tools/idle", json={"input": "abc"}),
            httpx2.post(f"{served.base}/tools/mock.echo", json={}),
        ]
    finally:
        served.stop()
    errors = [answer.json()["error"] for answer in answers if "error" in answer.json()]
    assert len(errors) >= 4, errors
    for error in errors:
        assert not error["message"].startswith(f"{error['code']}:"), error


@pytest.mark.parametrize("number", ["1e999", "-1e999", "Infinity", "NaN"])
def test_a_number_json_has_no_form_for_is_told_alike_over_mcp_and_http(tmp_path: Path, number: str) -> None:
    """`1e999` and the other numbers JSON has no form for get the same message on the HTTP API and
    over MCP (whose SDK parses them to infinity first): one table."""
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG + 'toolings = ["mock"]\n')
    body = '{"x": ' + number + "}"
    served = HttpServe(config)
    try:
        http = httpx2.post(f"{served.base}/tools/mock.echo", content=body.encode(), headers=JSON_HEADERS)
        mcp = mcp_call(served, "mock.echo", body)
    finally:
        served.stop()
    over_http = http.json()["error"]["message"].removeprefix("the body is not strict JSON (RFC 8259): ")
    over_mcp = mcp["content"][0]["text"].removeprefix("invalid-arguments: the arguments are not strict JSON: ")
    assert over_http == over_mcp, (over_http, over_mcp)
    assert over_http.startswith(f"{'-' if number.startswith('-') else ''}{'NaN' if number == 'NaN' else 'Infinity'}")
