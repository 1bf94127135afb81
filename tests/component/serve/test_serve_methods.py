"""A request with the wrong method gets the tool API's JSON error, like every other refusal.

`GET /tools/NAME`, `PUT`, `DELETE /tools/list` and `POST /openapi.json` answer a 405 in the form of
every other error of the HTTP tool API, `{"error": {"code", "message"}}`, naming the method to use
(not Starlette's plain-text 405).
"""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from tests.support.serve_configs import CONFIG
from tests.support.serving import HttpServe

pytestmark = pytest.mark.component


def test_a_wrong_method_is_a_json_405_naming_the_method_to_use(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    served = HttpServe(config)
    try:
        answers = {
            ("GET", "/tools/idle"): httpx2.get(f"{served.base}/tools/idle"),
            ("PUT", "/tools/idle"): httpx2.put(f"{served.base}/tools/idle", json={}),
            ("DELETE", "/tools/list"): httpx2.delete(f"{served.base}/tools/list"),
            ("POST", "/openapi.json"): httpx2.post(f"{served.base}/openapi.json", json={}),
        }
        allowed = {"/tools/idle": "POST", "/tools/list": "GET", "/openapi.json": "GET"}
    finally:
        served.stop()
    for (method, path), answer in answers.items():
        assert answer.status_code == 405, (method, path, answer.text)
        assert answer.headers["content-type"] == "application/json", (method, path)
        assert allowed[path] in answer.headers["allow"].split(", "), answer.headers
        error = answer.json()["error"]
        assert error["code"] == "invalid-arguments", error
        assert f"{method} {path}" in error["message"] and f"use {allowed[path]}" in error["message"], error
        assert error["message"].count(allowed[path]) == 1, error  # named once
