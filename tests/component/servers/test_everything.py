"""A guest against @modelcontextprotocol/server-everything (npm, TypeScript SDK, 2025-11-25 era), over stdio.

A guest written against wit/ alone gets results that match what the MCP SDK returns for the same
calls (compared call by call). server-everything is installed by the test set-up into the cache
folder; the tests are skipped, with the reason, where node/npm are absent.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters

from agent_host import Host
from tests.support.component import err, everything_toml, ok, probe

pytestmark = [pytest.mark.component, pytest.mark.npm]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"message": "hello everything"}),
    ("get-sum", {"a": 19, "b": 23}),
    ("get-structured-content", {"location": "New York"}),
    ("get-tiny-image", {}),
    ("get-annotated-message", {"messageType": "error", "includeImage": False}),
]
STATIC = "demo://resource/static/document/features.md"
DYNAMIC_TEXT = "demo://resource/dynamic/text/3"
DYNAMIC_BLOB = "demo://resource/dynamic/blob/3"
CLOCK = re.compile(r"\d{1,2}:\d{2}:\d{2}\s?[AP]M")


async def _decline(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


async def _no_sampling(context: Any, params: Any) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message="no sampling here")


async def _no_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[])


def _sdk_view(binary: Path) -> dict[str, Any]:
    """What the raw MCP SDK returns for the same operations, from a client declaring what agent-host
    declares (elicitation, sampling and roots: the server offers more tools to such a client)."""

    async def collect() -> dict[str, Any]:
        params = StdioServerParameters(command=str(binary), args=["stdio"], env=dict(os.environ))
        callbacks: dict[str, Any] = {
            "elicitation_callback": _decline,
            "sampling_callback": _no_sampling,
            "list_roots_callback": _no_roots,
        }
        async with Client(params, cache=None, **callbacks) as client:
            tools = (await client.list_tools()).tools
            calls = []
            for name, args in CALLS:
                result = await client.call_tool(name, args)
                calls.append(result.model_dump(by_alias=True, mode="json", exclude_none=True))
            resources = (await client.list_resources()).resources
            reads = {}
            for uri in (STATIC, DYNAMIC_TEXT, DYNAMIC_BLOB):
                contents = (await client.read_resource(uri)).contents[0]
                reads[uri] = contents.model_dump(by_alias=True, mode="json", exclude_none=True)
            return {"tools": tools, "calls": calls, "resources": resources, "reads": reads}

    return anyio.run(collect)


def test_guest_results_match_the_mcp_sdk(
    make_host: Callable[[str], Host], probe_wasm: Path, everything_bin: Path
) -> None:
    host = make_host(everything_toml(everything_bin))
    steps: list[dict[str, Any]] = [{"op": "get", "tooling": "everything", "as": "e"}, {"op": "list_tools", "h": "e"}]
    steps += [{"op": "call_blocking", "h": "e", "tool": name, "args": json.dumps(args)} for name, args in CALLS]
    steps += [{"op": "list_resources", "h": "e"}]
    steps += [{"op": "read_resource", "h": "e", "uri": uri} for uri in (STATIC, DYNAMIC_TEXT, DYNAMIC_BLOB)]
    results = probe(host, probe_wasm, steps)
    sdk = _sdk_view(everything_bin)

    guest_tools = ok(results[1])
    assert [t["name"] for t in guest_tools] == [t.name for t in sdk["tools"]]
    for mine, theirs in zip(guest_tools, sdk["tools"], strict=True):
        assert mine["description"] == theirs.description
        assert mine["input_schema"] == theirs.input_schema
        assert mine["output_schema"] == theirs.output_schema

    for index, (name, _) in enumerate(CALLS):
        value = ok(results[2 + index])["value"]
        expected = sdk["calls"][index]
        assert value["content"] == expected["content"], name
        assert value.get("structuredContent") == expected.get("structuredContent"), name
        assert value["isError"] is expected.get("isError", False) is False, name

    offset = 2 + len(CALLS)
    listed = ok(results[offset])
    assert [(r["uri"], r["name"], r["mime_type"]) for r in listed] == [
        (str(r.uri), r.name, r.mime_type) for r in sdk["resources"]
    ]
    static, text, blob = (ok(r) for r in results[offset + 1 : offset + 4])
    assert static["content"] == sdk["reads"][STATIC]["text"]
    assert CLOCK.sub("T", text["content"]) == CLOCK.sub("T", sdk["reads"][DYNAMIC_TEXT]["text"])
    # A blob whose MIME type is text/* reaches the guest as text (the WIT contract), the SDK keeps base64.
    assert blob["mime_type"] == "text/plain"
    decoded = base64.b64decode(sdk["reads"][DYNAMIC_BLOB]["blob"]).decode()
    assert CLOCK.sub("T", blob["content"]) == CLOCK.sub("T", decoded)


def test_failures_against_everything_have_their_documented_codes(
    make_host: Callable[[str], Host], probe_wasm: Path, everything_bin: Path
) -> None:
    host = make_host(everything_toml(everything_bin))
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "everything", "as": "e"},
         {"op": "call_blocking", "h": "e", "tool": "no-such-tool", "args": "{}"},
         {"op": "call_blocking", "h": "e", "tool": "get-sum", "args": '{"a": "x"}'},
         {"op": "call_blocking", "h": "e", "tool": "get-sum", "args": "not json"},
         {"op": "read_resource", "h": "e", "uri": "demo://nope"},
         {"op": "call_blocking", "h": "e", "tool": "get-sum", "args": '{"a": 1, "b": 2}'}],
    )  # fmt: skip
    assert err(results[1])["code"] == "not-found"
    assert err(results[2])["code"] == "invalid-arguments"  # checked against the schema by the host
    assert "at $.a: 'x' is not of type 'number' (rule: type)" in err(results[2])["message"]
    assert err(results[3])["code"] == "invalid-arguments"
    assert err(results[4])["code"] == "not-found"
    assert "demo://nope" in err(results[4])["message"]
    assert ok(results[5])["value"]["content"][0]["text"] == "The sum of 1 and 2 is 3."


def test_a_stdio_server_gets_its_configured_env_and_not_the_hosts(
    make_host: Callable[[str], Host], probe_wasm: Path, everything_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST_SECRET", "do-not-leak")
    monkeypatch.setenv("GREETING_SOURCE", "from the host")
    toml = everything_toml(everything_bin) + 'env = { GREETING = "${GREETING_SOURCE}" }\n'
    host = make_host(toml)
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "everything", "as": "e"}, {"op": "call_blocking", "h": "e", "tool": "get-env"}],
    )
    env = json.loads(ok(results[1])["value"]["content"][0]["text"])
    assert env["GREETING"] == "from the host"
    assert "HOST_SECRET" not in env
