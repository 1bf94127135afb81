"""`agent-host serve` re-exporting toolings (`[serve] toolings`) through the policy of `[serve] grants`.

The remote client is treated as an agent (`serve`) with its own grants: validation, capabilities,
approvals, elicitation, limits and the audit log apply to it as to a guest; listing, calling,
refusals, progress and cancellation, resource subscriptions and list-changed notifications pass
through, in both MCP eras. The upstream is tests/servers/observed.py over stdio (a real SDK server
that reports what it saw); clients are the SDK's `Client`, in process (both eras) and against the
real command over HTTP and stdio.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

from agent_host import Host
from agent_host.config import parse_config
from agent_host.serve.catalog import Catalog, build_catalog
from agent_host.serve.mcp_server import build_server
from tests.support.component import OBSERVED_TOML, REPO, activity, eventually
from tests.support.processes import leaked
from tests.support.serving import HttpServe, sdk_stdio

pytestmark = pytest.mark.component

GRANTS = (
    '[serve]\ntoolings = ["t"]\n'
    'grants = { tools = { t = ["echo", "wait", "set", "add_tool", "big", "activity", "fresh"] }, '
    'resources = { t = ["obs://a", "obs://new*"] }, capabilities = ["read_only", "network", "external_side_effect"] }\n'
)
CONFIG = OBSERVED_TOML + '[host]\naudit_log = "audit.jsonl"\nmax_result_bytes = 4096\n' + GRANTS


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[Host, Catalog]]:
    config = parse_config(CONFIG, tmp_path / "agent-host.toml")
    with Host(config) as host:
        yield host, build_catalog(host, config)


def run(catalog: Catalog, body: Any, **client: Any) -> Any:
    async def main() -> Any:
        async with catalog.running(), Client(build_server(catalog), **client) as session:
            return await body(session)

    return anyio.run(main)


def test_the_granted_tools_are_offered_as_tooling_dot_tool(proxied: tuple[Host, Catalog]) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(proxied[1], body)}
    assert sorted(tools) == ["t.activity", "t.add_tool", "t.big", "t.echo", "t.set", "t.wait"]  # granted ones only
    assert tools["t.echo"].input_schema["properties"]["text"]["type"] == "string"  # the upstream schema


def test_a_proxied_call_answers_as_the_tool_did_and_refusals_name_the_rule(proxied: tuple[Host, Catalog]) -> None:
    async def body(client: Client) -> Any:
        return (
            await client.call_tool("t.echo", {"text": "hi"}),
            await client.call_tool("t.exit_now", {}),
            await client.call_tool("t.echo", {"text": 3}),
            await client.call_tool("t.nothing", {}),
            await client.call_tool("t.big", {"size": 10_000}),
        )

    echo, denied, invalid, unknown, too_big = run(proxied[1], body)
    assert (echo.is_error, echo.content[0].text, echo.structured_content) == (False, "hi", {"result": "hi"})
    assert denied.is_error and denied.content[0].text.startswith(
        "denied: agent 'serve' may not call tool 'exit_now' of tooling 't': it matches none of tools.t = "
    )
    assert "[serve] grants" in denied.content[0].text  # where the grant would go
    assert invalid.is_error and invalid.content[0].text.startswith("invalid-arguments: ")
    assert "at $.text: 3 is not of type 'string'" in invalid.content[0].text
    assert unknown.is_error and unknown.content[0].text.startswith("denied: ")  # not granted, so not even looked up
    assert too_big.is_error and too_big.content[0].text.startswith("limit-exceeded: the result of tool 'big' is")


def test_the_audit_log_names_the_remote_client_as_agent_serve(proxied: tuple[Host, Catalog], tmp_path: Path) -> None:
    catalog = proxied[1]

    async def body(client: Client) -> Any:
        await client.call_tool("t.echo", {"text": "hi"})
        await client.call_tool("t.exit_now", {})

    run(catalog, body)
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    calls = [(line["agent"], line["target"], line["outcome"]) for line in lines if line["operation"] == "call-tool"]
    assert calls == [("serve", "echo", "ok"), ("serve", "exit_now", "denied")]


def test_progress_is_relayed_and_cancelling_cancels_the_call_upstream(proxied: tuple[Host, Catalog]) -> None:
    host, catalog = proxied
    reports: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total))

    async def body(client: Client) -> Any:
        done = await client.call_tool("t.wait", {"seconds": 0.2, "steps": 2}, progress_callback=on_progress)
        with anyio.move_on_after(1.0):
            await client.call_tool("t.wait", {"seconds": 600})
        return done

    done = run(catalog, body)
    assert done.is_error is False
    assert sorted(reports) == [(1, 2), (2, 2)]
    seen = eventually(host, lambda seen: seen["cancelled"] == 1)
    assert seen["finished"] == 1  # the short call; the long one was cancelled upstream


def test_resources_pass_through_the_grants(proxied: tuple[Host, Catalog]) -> None:
    async def body(client: Client) -> Any:
        listed = (await client.list_resources()).resources
        read = await client.read_resource("obs://a")
        try:
            await client.read_resource("obs://b")
        except MCPError as exc:
            return listed, read, exc
        raise AssertionError("obs://b is not granted")

    listed, read, refused = run(proxied[1], body)
    assert [str(resource.uri) for resource in listed] == ["obs://a"]
    assert read.contents[0].uri == "obs://a" and isinstance(read.contents[0], types.TextResourceContents)
    assert refused.code == -32003 and str(refused).startswith("denied: agent 'serve' may not use resource 'obs://b'")


def test_a_2026_client_listens_to_resource_updates_and_list_changes(proxied: tuple[Host, Catalog]) -> None:
    host, catalog = proxied

    async def body(client: Client) -> Any:
        assert "t.fresh" not in [tool.name for tool in (await client.list_tools()).tools]  # listed, and kept
        events: list[Any] = []
        async with client.listen(resource_subscriptions=["obs://a"], tools_list_changed=True) as sub:
            await client.call_tool("t.set", {"name": "a", "text": "changed"})
            with anyio.fail_after(20):
                async for event in sub:
                    events.append(event)
                    if isinstance(event, ResourceUpdated):
                        break
            await client.call_tool("t.add_tool", {"name": "fresh"})
            with anyio.fail_after(20):
                async for event in sub:
                    events.append(event)
                    if isinstance(event, ToolsListChanged):
                        break
            watched = activity(host)["listens"]
            names = [tool.name for tool in (await client.list_tools()).tools]
        return events, watched, (await client.read_resource("obs://a")).contents[0], names

    events, watched, content, names = run(catalog, body)
    assert "t.fresh" in names  # the kept listing was dropped at the change
    assert ResourceUpdated(uri="obs://a") in events and ToolsListChanged() in events
    assert ["obs://a"] in watched  # one subscription upstream, for the client's URI
    assert isinstance(content, types.TextResourceContents) and content.text == "changed"
    eventually(host, lambda seen: all("obs://a" not in uris for uris in seen["listens"]))  # released at its end


def test_a_2025_client_subscribes_and_is_notified(proxied: tuple[Host, Catalog]) -> None:
    host, catalog = proxied
    received: list[Any] = []
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        received.append(message)
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.set()

    async def body(client: Client) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource("obs://a")
            try:
                await client.subscribe_resource("obs://b")
                denied = None
            except MCPError as exc:
                denied = exc
            await client.call_tool("t.set", {"name": "a", "text": "again"})
            with anyio.fail_after(20):
                await updated.wait()
            await client.unsubscribe_resource("obs://a")
            released = eventually(host, lambda seen: all("obs://a" not in uris for uris in seen["listens"]))
        return client.server_capabilities, denied, released

    capabilities, denied, released = run(catalog, body, mode="legacy", message_handler=on_message)
    assert released is not None  # unsubscribed: released upstream
    assert capabilities.resources is not None and capabilities.resources.subscribe
    assert capabilities.tools is not None and capabilities.tools.list_changed
    assert any(isinstance(m, types.ResourceUpdatedNotification) and str(m.params.uri) == "obs://a" for m in received)
    assert denied is not None and denied.code == -32003


def test_a_2025_clients_subscriptions_end_with_its_connection(proxied: tuple[Host, Catalog]) -> None:
    host, catalog = proxied

    async def main() -> None:
        async with catalog.running():
            async with Client(build_server(catalog), mode="legacy") as client:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await client.subscribe_resource("obs://a")  # and leave without unsubscribing
                eventually(host, lambda seen: ["obs://a"] in seen["listens"])
            eventually(host, lambda seen: all("obs://a" not in uris for uris in seen["listens"]))  # still serving

    anyio.run(main)


def test_the_http_api_and_mcp_over_http_call_proxied_tools(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG.replace("[serve]\n", "[tooling.slow]\nkind = \"mock\"\ntimeout = 0.5\n"
                                     '[[tooling.slow.tools]]\nname = "nap"\nrepeat_last = true\n'
                                     'results = [{ text = "late", delay = 5 }]\n[serve]\n')
                      .replace('toolings = ["t"]', 'toolings = ["t", "slow"]')
                      .replace("grants = { tools", 'grants = { toolings = ["t", "slow"], tools'))  # fmt: skip
    served = HttpServe(config)
    try:
        listed = httpx2.get(f"{served.base}/tools/list").json()["tools"]
        ok = httpx2.post(f"{served.base}/tools/t.echo", json={"text": "hi"})
        denied = httpx2.post(f"{served.base}/tools/t.exit_now", json={})
        invalid = httpx2.post(f"{served.base}/tools/t.echo", json={"text": 3})
        late = httpx2.post(f"{served.base}/tools/slow.nap", json={}, timeout=30)

        async def main() -> Any:
            async with Client(served.url) as client:
                return await client.call_tool("t.echo", {"text": "over mcp"})

        over_mcp = anyio.run(main)
    finally:
        code = served.stop()
    assert code == 143
    names = [tool["name"] for tool in listed]
    assert "t.echo" in names and "slow.nap" in names and "t.exit_now" not in names
    assert ok.status_code == 200 and ok.json() == {"result": {"result": "hi"}}
    assert (denied.status_code, denied.json()["error"]["code"]) == (403, "denied")
    assert (invalid.status_code, invalid.json()["error"]["code"]) == (400, "invalid-arguments")
    assert (late.status_code, late.json()["error"]["code"]) == (504, "timeout")
    assert over_mcp.content[0].text == "over mcp"
    left = leaked()
    assert not left, f"the server left processes behind: {left}"


def test_a_proxied_call_over_http_does_not_list_the_upstream_tools_again(tmp_path: Path) -> None:
    """The SDK checks a call's `Mcp-Param-*` headers against the tool's input schema; without
    `get_tool_input_schema` it would ask the server's own `tools/list` handler for it at every call,
    which lists every offered tooling upstream (one more round trip, audited)."""
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    served = HttpServe(config)
    try:

        async def main() -> list[str]:
            async with Client(served.url) as client:
                return [(await client.call_tool("t.echo", {"text": f"call {n}"})).content[0].text for n in range(4)]  # type: ignore[union-attr]

        texts = anyio.run(main)
    finally:
        served.stop()
    assert texts == [f"call {n}" for n in range(4)]
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    operations = [line["operation"] for line in lines if line["agent"] == "serve"]
    assert operations.count("call-tool") == 4
    assert operations.count("list-tools") <= 1, operations  # the first call looks the tool up once


def test_proxied_tools_over_stdio_as_a_child_process(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)

    async def main() -> Any:
        async with Client(sdk_stdio("--config", str(config))) as client:
            return await client.call_tool("t.echo", {"text": "stdio"})

    started = time.monotonic()
    answer = anyio.run(main)
    assert answer.content[0].text == "stdio", time.monotonic() - started
    left = leaked()
    assert not left, f"the server left processes behind: {left}"


@pytest.mark.parametrize("approve", [False, True])
def test_calls_needing_approval_are_put_to_the_servers_approver(tmp_path: Path, approve: bool) -> None:
    """`require_approval` in `[serve] grants`: decided by `agent-host serve --approve` (deny by default)."""
    from agent_host.policy.approval import ApproveAll, DenyAll

    text = CONFIG.replace(
        'capabilities = ["read_only"', 'require_approval = ["external_side_effect"], capabilities = ["read_only"'
    )
    config = parse_config(text, tmp_path / "agent-host.toml")
    with Host(config, approver=ApproveAll() if approve else DenyAll()) as host:

        async def body(client: Client) -> Any:
            return await client.call_tool("t.set", {"name": "a", "text": "x"})

        answer = run(build_catalog(host, config), body)
    if approve:
        assert answer.is_error is False, answer.content[0].text
    else:
        assert answer.is_error and answer.content[0].text.startswith(
            "denied: the call of tool 'set' of tooling 't' by agent 'serve' needs approval"
        )


@pytest.mark.parametrize("mode", ["ask", "guest", None])
def test_a_proxied_servers_question_follows_the_grants_elicitation(tmp_path: Path, mode: str | None) -> None:
    """`[serve] grants` takes `elicitation` like an agent: `ask` puts a question during a proxied call
    to the serve host's approver; otherwise (and with `guest`: the remote client is not asked) it is
    declined at once and the call is `denied` naming the request."""
    from agent_host.policy.approval import CallbackApprover

    asking = f'[tooling.a]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.asking"]\ncwd = "{REPO}"\n'
    grants = f', grants = {{ elicitation = {{ a = "{mode}" }} }}' if mode else ""
    text = asking + '[serve]\ntoolings = ["a"]' + grants.replace(", grants", "\ngrants") + "\n"
    config = parse_config(text, tmp_path / "agent-host.toml")
    approver = CallbackApprover(bool, lambda request: {"name": f"{request.agent} via {request.tooling}"})
    with Host(config, approver=approver) as host:

        async def body(client: Client) -> Any:
            return await client.call_tool("a.ask", {"message": "Name?"})

        answer = run(build_catalog(host, config), body)
    if mode == "ask":
        assert (answer.is_error, answer.content[0].text) == (False, "hello serve via a")
    else:
        assert answer.is_error and answer.content[0].text.startswith("denied: tooling 'a': tool 'ask' failed after")
