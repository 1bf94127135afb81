"""Toolings from Python (`Host.tooling`, `Host.atooling`) against the demo server over stdio.

Calls return a `ToolResult` (structured content, text, and a result the tool marked as an error,
returned rather than raised); refusals raise `ToolingError` with their code; resources are read and
subscribed to, a subscription being an iterator of the new contents (two at once on one client,
each getting its own), closed by its `with` block; the agent's grants and audit apply; the async
client does the same from a coroutine, its calls cancelled with their task.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host import AsyncToolingClient, Host, ResourceData, ToolingClient, ToolingError, ToolResult
from agent_host.config import parse_config
from agent_host.errors import ErrorCode

pytestmark = pytest.mark.component

CONFIG = """
[host]
audit_log = "{audit}"

[tooling.demo]
command = "${{AGENT_HOST_PYTHON}}"
args = ["-m", "agent_host.demo_server"]

[agents.scout]
toolings = ["demo"]
tools = {{ demo = ["echo", "add", "fail", "set_note", "sleep", "no*"] }}

[agents.nobody]
"""


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    folder = tmp_path_factory.mktemp("client")
    with Host(parse_config(CONFIG.format(audit=folder / "audit.jsonl"), folder / "agent-host.toml")) as host:
        host.tooling("demo", agent="scout").close()  # the server starts here, not in the first test
        yield host


@pytest.fixture
def demo(host: Host) -> Iterator[ToolingClient]:
    with host.tooling("demo", agent="scout") as client:
        yield client


def audit_lines(host: Host) -> list[dict[str, object]]:
    path = Path(str(host.config.host.audit_log))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_call_returns_the_tools_result_with_its_structured_content(demo: ToolingClient) -> None:
    added = demo.call("add", {"a": 2, "b": 3})
    assert isinstance(added, ToolResult) and not added.is_error
    assert added.structured == {"sum": 5.0}
    assert json.loads(added.text) == {"sum": 5.0}
    assert demo.call("echo", {"text": "hi"}).text == "hi"


def test_a_result_the_tool_marks_as_an_error_is_returned_not_raised(demo: ToolingClient) -> None:
    failed = demo.call("fail", {"message": "down for maintenance"})
    assert failed.is_error
    assert "down for maintenance" in failed.text


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("word_count", {"text": "a b"}, ErrorCode.DENIED),  # not in the agent's allow-list
        ("add", {"a": "two"}, ErrorCode.INVALID_ARGUMENTS),
        ("nope", {}, ErrorCode.NOT_FOUND),
    ],
)
def test_a_refusal_raises_with_its_code(
    demo: ToolingClient, tool: str, arguments: dict[str, object], code: ErrorCode
) -> None:
    with pytest.raises(ToolingError) as caught:
        demo.call(tool, arguments)
    assert caught.value.code is code


def test_arguments_that_are_not_json_are_a_type_error_before_anything_is_sent(demo: ToolingClient) -> None:
    with pytest.raises(TypeError, match="must be a JSON object"):
        demo.call("echo", {"text": object()})


def test_listings_show_what_the_agent_may_see(demo: ToolingClient) -> None:
    assert sorted(tool.name for tool in demo.list_tools()) == ["add", "echo", "fail", "set_note", "sleep"]
    assert {resource.uri for resource in demo.list_resources()} >= {"demo://readme", "demo://note"}
    readme = demo.read("demo://readme")
    assert isinstance(readme, ResourceData) and readme.text and readme.mime_type == "text/markdown"


def test_a_tooling_the_agent_is_not_granted_is_refused_when_connecting(host: Host) -> None:
    with pytest.raises(ToolingError) as caught:
        host.tooling("demo", agent="nobody")
    assert caught.value.code is ErrorCode.DENIED
    with pytest.raises(ToolingError) as missing:
        host.tooling("search", agent="scout")
    assert missing.value.code is ErrorCode.NOT_FOUND


def test_a_subscription_iterates_the_new_contents_and_its_block_unsubscribes(demo: ToolingClient) -> None:
    with demo.subscribe("demo://note") as updates:
        demo.call("set_note", {"text": "first"})
        assert next(updates).text == "first"
        demo.call("set_note", {"text": "second"})
        assert next(updates).text == "second"
    assert list(updates) == []  # closed: the iteration ends at once


def test_two_subscriptions_of_one_client_each_get_their_own_updates(demo: ToolingClient) -> None:
    with demo.subscribe("demo://note") as notes, demo.subscribe_tool_list() as tools:
        demo.call("set_note", {"text": "for both"})
        assert next(notes).text == "for both"  # the tool list subscription's envelopes, if any, are kept
        demo.call("set_note", {"text": "again"})
        assert next(notes).text == "again"
    assert list(tools) == []


def test_closing_the_client_ends_its_subscriptions(host: Host) -> None:
    client = host.tooling("demo", agent="scout")
    updates = client.subscribe("demo://note")
    client.close()
    assert list(updates) == []
    with pytest.raises(ToolingError):
        client.call("echo", {"text": "after"})


def test_every_operation_is_audited_as_the_agent(host: Host) -> None:
    with host.tooling("demo", agent="scout") as demo:
        demo.call("echo", {"text": "audited"})
    mine = [
        (line["operation"], line["tooling"], line["target"]) for line in audit_lines(host) if line["agent"] == "scout"
    ]
    assert ("get", "demo", None) in mine and ("call-tool-blocking", "demo", "echo") in mine


def test_the_async_client_calls_lists_reads_and_subscribes(host: Host) -> None:
    async def main() -> tuple[ToolResult, ToolResult, list[str], str, list[str]]:
        async with host.atooling("demo", agent="scout") as demo:
            assert isinstance(demo, AsyncToolingClient)
            added = await demo.call("add", {"a": 1, "b": 1})
            failed = await demo.call("fail", {})
            names = sorted(tool.name for tool in await demo.list_tools())
            readme = (await demo.read("demo://readme")).text or ""
            seen: list[str] = []
            async with await demo.subscribe("demo://note") as updates:
                await demo.call("set_note", {"text": "async"})
                async for data in updates:
                    seen.append(data.text or "")
                    break
            return added, failed, names, readme, seen

    added, failed, names, readme, seen = asyncio.run(main())
    assert added.structured == {"sum": 2.0} and failed.is_error
    assert names == ["add", "echo", "fail", "set_note", "sleep"] and readme
    assert seen == ["async"]


def test_cancelling_an_async_call_cancels_it_and_a_refusal_raises(host: Host) -> None:
    async def main() -> None:
        async with host.atooling("demo", agent="scout") as demo:
            slow = asyncio.ensure_future(demo.call("sleep", {"seconds": 60}))
            await asyncio.sleep(0)  # the call starts
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
            with pytest.raises(ToolingError) as caught:
                await demo.call("word_count", {"text": "x"})
            assert caught.value.code is ErrorCode.DENIED
            assert (await demo.call("echo", {"text": "still here"})).text == "still here"

    asyncio.run(main())


def test_the_async_client_must_be_entered_first(host: Host) -> None:
    async def main() -> None:
        client = host.atooling("demo", agent="scout")
        with pytest.raises(RuntimeError, match="async with"):
            await client.list_tools()
        await client.aclose()

    asyncio.run(main())
