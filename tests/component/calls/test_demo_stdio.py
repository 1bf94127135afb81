"""Every implemented tooling function, from a real guest, against the bundled server over stdio.

Each function and its failure paths, each failure with its documented error code, and the host
working afterwards.
"""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path

import pytest

from agent_host import Host
from tests.support.component import err, ok, probe
from tests.support.probe_steps import (
    call,
    call_blocking,
    drain,
    drop,
    fail,
    get,
    kind,
    list_resources,
    list_tools,
    log,
    name,
    raise_,
    read_resource,
    ref,
    script,
    subscribe_resource,
    unsubscribe_resource,
)

pytestmark = pytest.mark.component

GET = get("demo", as_="d")


def test_get_returns_a_tooling_with_kind_and_name(demo_host: Host, probe_wasm: Path) -> None:
    results = probe(demo_host, probe_wasm, [GET, kind("d"), name("d")])
    assert [ok(r) for r in results] == [True, "mcp", "demo"]


def test_list_tools_gives_every_tool_with_parsed_schemas(demo_host: Host, probe_wasm: Path) -> None:
    tools = ok(probe(demo_host, probe_wasm, [GET, list_tools("d")])[1])
    by_name = {t["name"]: t for t in tools}
    assert list(by_name) == ["echo", "add", "word_count", "fail", "sleep", "set_note"]
    assert by_name["echo"]["description"] == "Return the text unchanged."
    assert by_name["echo"]["input_schema"]["required"] == ["text"]
    assert by_name["add"]["output_schema"]["properties"]["sum"]["type"] == "number"
    assert by_name["echo"]["output_schema"] is not None  # the SDK wraps str results as {"result": ...}


def test_call_tool_blocking_returns_the_mcp_result_in_wire_form(demo_host: Host, probe_wasm: Path) -> None:
    args = json.dumps({"text": "héllo wörld"})
    results = probe(
        demo_host, probe_wasm, [GET, call_blocking("d", "echo", args), call_blocking("d", "add", a=2, b=3.5)]
    )
    echo = ok(results[1])
    assert echo["name"] == "echo"
    assert echo["arguments"] == args
    assert echo["value"]["content"] == [{"type": "text", "text": "héllo wörld"}]
    assert echo["value"]["isError"] is False
    assert set(echo["value"]) == {"content", "structuredContent", "isError"}
    assert ok(results[2])["value"]["structuredContent"] == {"sum": 5.5}


def test_a_tool_that_reports_an_error_is_tool_failed_with_its_text(demo_host: Host, probe_wasm: Path) -> None:
    results = probe(
        demo_host,
        probe_wasm,
        [GET, call_blocking("d", "fail", message="disk is full"), call_blocking("d", "echo", text="still here")],
    )
    error = err(results[1])
    assert error["code"] == "tool-failed"
    assert "disk is full" in error["message"]
    data = json.loads(error["data"])
    assert data["isError"] is True and "disk is full" in data["content"][0]["text"]
    assert ok(results[2])["value"]["content"][0]["text"] == "still here"


def test_an_unknown_tooling_is_not_found_and_names_the_configured_ones(demo_host: Host, probe_wasm: Path) -> None:
    results = probe(demo_host, probe_wasm, [get("nope", as_="x"), GET])
    error = err(results[0])
    assert error["code"] == "not-found"
    assert "'nope'" in error["message"] and "demo" in error["message"]
    assert ok(results[1]) is True


def test_an_unknown_tool_is_not_found_and_lists_the_tools(demo_host: Host, probe_wasm: Path) -> None:
    results = probe(demo_host, probe_wasm, [GET, call_blocking("d", "nosuch", "{}")])
    error = err(results[1])
    assert error["code"] == "not-found"
    assert "'nosuch'" in error["message"] and "echo" in error["message"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("{text: 1}", "not valid JSON"),
        ("", "not valid JSON"),
        ('["a"]', "must be a JSON object"),
        ("42", "must be a JSON object"),
    ],
)
def test_arguments_that_are_not_a_json_object_are_invalid_arguments(
    demo_host: Host, probe_wasm: Path, arguments: str, expected: str
) -> None:
    results = probe(
        demo_host, probe_wasm, [GET, call_blocking("d", "echo", arguments), call_blocking("d", "echo", text="ok")]
    )
    error = err(results[1])
    assert error["code"] == "invalid-arguments"
    assert expected in error["message"]
    assert ok(results[2])["value"]["content"][0]["text"] == "ok"


def test_list_resources_and_read_text_and_binary_resources(demo_host: Host, probe_wasm: Path) -> None:
    results = probe(
        demo_host,
        probe_wasm,
        [GET, list_resources("d"), read_resource("d", "demo://readme"), read_resource("d", "demo://logo.png")],
    )
    listed = ok(results[1])
    assert [(r["uri"], r["mime_type"]) for r in listed] == [
        ("demo://readme", "text/markdown"),
        ("demo://note", "text/plain"),
        ("demo://logo.png", "image/png"),
    ]
    assert listed[0]["description"] == "What this server is"
    readme = ok(results[2])
    assert readme["mime_type"] == "text/markdown"
    assert readme["content"].startswith("# agent-host demo server")
    logo = ok(results[3])
    assert logo["mime_type"] == "image/png"
    assert base64.b64decode(logo["content"]).startswith(b"\x89PNG\r\n\x1a\n")


def test_an_unknown_resource_uri_is_not_found(demo_host: Host, probe_wasm: Path) -> None:
    results = probe(
        demo_host, probe_wasm, [GET, read_resource("d", "demo://missing"), read_resource("d", "demo://readme")]
    )
    error = err(results[1])
    assert error["code"] == "not-found"
    assert "demo://missing" in error["message"]
    assert ok(results[2])["uri"] == "demo://readme"


def test_the_bundled_server_serves_asynchronous_calls_and_subscriptions(demo_host: Host, probe_wasm: Path) -> None:
    results = probe(
        demo_host,
        probe_wasm,
        [
            GET,
            subscribe_resource("d", "demo://note"),
            call("d", "sleep", seconds=0.4, steps=2),
            call_blocking("d", "set_note", text="changed"),
            drain([ref(2)]),
            drain(timeout_ms=1000),
            unsubscribe_resource("d", ref(1)),
            call_blocking("d", "set_note", text="This note is empty."),
        ],
    )
    events = ok(results[4]) + ok(results[5])
    by_kind = [(e["id"], e["kind"]) for e in events]
    call_id, sub_id = ok(results[2]), ok(results[1])
    assert (call_id, "ToolResult") in by_kind and (sub_id, "ResourceUpdated") in by_kind
    assert by_kind.index((call_id, "Progress")) < by_kind.index((call_id, "ToolResult"))
    note = next(e for e in events if e["kind"] == "ResourceUpdated")
    assert note["value"]["content"] == "changed"
    assert ok(results[6]) is True


def test_guest_log_messages_reach_the_host_log(
    demo_host: Host, probe_wasm: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="agent_host.guest"):
        probe(demo_host, probe_wasm, [log("watch out", level="warn")], agent="logger")
    assert ("agent_host.guest", logging.WARNING, "[logger] warn: watch out") in caplog.record_tuples


def test_a_dropped_handle_is_released_and_a_new_one_works(demo_host: Host, probe_wasm: Path) -> None:
    results = probe(demo_host, probe_wasm, [GET, drop("d"), GET, call_blocking("d", "echo", text="again")])
    assert ok(results[3])["value"]["content"][0]["text"] == "again"


def test_a_guest_whose_run_raises_has_failed_and_the_host_goes_on(demo_host: Host, probe_wasm: Path) -> None:
    outcome = demo_host.run(probe_wasm, script(GET, raise_("boom")), agent="t")
    assert outcome.status == "error"
    assert outcome.exit_code == 1
    assert outcome.text.startswith("RuntimeError: boom (at app.py:")
    results = probe(demo_host, probe_wasm, [GET, call_blocking("d", "echo", text="x")])
    assert ok(results[1])["value"]["content"][0]["text"] == "x"


def test_run_returning_err_is_an_error_outcome(demo_host: Host, probe_wasm: Path) -> None:
    outcome = demo_host.run(probe_wasm, script(fail("no luck")), agent="t")
    assert (outcome.status, outcome.text, outcome.exit_code) == ("error", "no luck", 1)
