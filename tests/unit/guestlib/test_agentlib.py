"""agentlib (guests/lib/agentlib) in plain CPython, against a stub of the generated bindings.

The guest library's result type, its one exception with the kebab-case code and its helper names. The
WIT's records and enums are the real ones componentize-py generates (`agent-host bindings`, well under a
second); `wit_world.imports.tooling` and `wit_world.imports.inbox` are replaced in `sys.modules` by
fakes that record what the library asked and answer as scripted, so nothing runs in wasmtime.
"""

from __future__ import annotations

import base64
import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Final

import pytest

from agent_host._support.paths import wit_dir
from tests.support.guestlib_fakes import FakeTooling, World


def test_call_returns_a_tool_result_with_structured_text_content_and_raw(world: World, agentlib: ModuleType) -> None:
    demo = world.tooling("demo")
    mcp = {
        "content": [{"type": "text", "text": "5"}, {"type": "image", "data": "AA=="}, {"type": "text", "text": "ok"}],
        "structuredContent": {"sum": 5},
        "isError": False,
    }
    demo.answers["call_tool_blocking"] = lambda name, arguments: world.result(name, json.loads(arguments), mcp)
    result = agentlib.call(demo, "add", a=2, b=3)
    assert demo.asked == [("call_tool_blocking", ("add", '{"a": 2, "b": 3}'))]
    assert isinstance(result, agentlib.ToolResult)
    assert result.structured == {"sum": 5}
    assert result.text == "5\nok"
    assert result.content == mcp["content"]
    assert result.raw == mcp and result.is_error is False
    assert (result.name, result.arguments) == ("add", {"a": 2, "b": 3})


def test_a_tool_result_without_structured_content_or_blocks_has_none_and_empty_text(
    world: World, agentlib: ModuleType
) -> None:
    bare = agentlib.ToolResult.of(world.result("ping", {}, {"content": []}))
    assert (bare.structured, bare.text, bare.content, bare.is_error) == (None, "", [], False)
    flagged = agentlib.ToolResult.of(world.result("x", {}, {"content": [], "isError": True}))
    assert flagged.is_error is True


def _every_failing_function(agentlib: ModuleType, world: World) -> dict[str, Callable[[FakeTooling], object]]:
    """How each agentlib function that asks the host is called, by the method of the handle it uses."""
    return {
        "call_tool_blocking": lambda t: agentlib.call(t, "add", a=1),
        "call_tool": lambda t: agentlib.start(t, "sleep", seconds=1),
        "list_tools": agentlib.list_tools,
        "list_resources": agentlib.list_resources,
        "read_resource": lambda t: agentlib.read_resource(t, "demo://readme"),
        "subscribe_resource": lambda t: agentlib.subscribe_resource(t, "demo://note"),
        "subscribe_resource_list": agentlib.subscribe_resource_list,
        "subscribe_tool_list": agentlib.subscribe_tool_list,
        "respond": lambda t: agentlib.Call(t, "ask", "call-1").respond(world.types.ElicitAction.DECLINE),
    }


FAILING: Final = (
    "call_tool_blocking",
    "call_tool",
    "list_tools",
    "list_resources",
    "read_resource",
    "subscribe_resource",
    "subscribe_resource_list",
    "subscribe_tool_list",
    "respond",
)


@pytest.mark.parametrize("method", FAILING)
def test_every_function_that_asks_the_host_raises_one_tooling_error_with_the_kebab_code(
    method: str, world: World, agentlib: ModuleType
) -> None:
    demo = world.tooling("demo")
    demo.fail[method] = world.error("LIMIT_EXCEEDED", "too many open calls (256)", '{"limit": 256}')
    with pytest.raises(agentlib.ToolingError) as raised:
        _every_failing_function(agentlib, world)[method](demo)
    error = raised.value
    assert (error.code, error.message, error.data) == ("limit-exceeded", "too many open calls (256)", '{"limit": 256}')
    assert str(error) == "limit-exceeded: too many open calls (256)"
    assert error.error_code is world.types.ErrorCode.LIMIT_EXCEEDED
    assert error.__cause__ is None and error.__suppress_context__  # one exception, not a chain of two


def test_get_raises_a_tooling_error_and_returns_the_wit_handle(world: World, agentlib: ModuleType) -> None:
    world.refuse_get["files"] = world.error("DENIED", "tooling 'files' is not granted to agent 'scout'")
    with pytest.raises(agentlib.ToolingError, match=r"^denied: tooling 'files' is not granted"):
        agentlib.get("files")
    with agentlib.get("demo") as demo:
        assert demo is world.toolings["demo"]
    assert demo.handle is None


def test_a_tooling_error_is_an_err_carrying_the_wit_record_so_except_err_still_catches_it(
    world: World, agentlib: ModuleType
) -> None:
    record = world.error("NOT_FOUND", "no tool named 'nosuch'")
    error = agentlib.ToolingError(record)
    assert isinstance(error, world.Err) and error.value is record
    assert agentlib.Err is world.Err
    demo = world.tooling("demo")
    demo.fail["call_tool_blocking"] = record
    with pytest.raises(world.Err) as caught:  # a guest's `except Err` written before ToolingError
        agentlib.call(demo, "nosuch")
    assert caught.value.value is record


def test_a_guests_own_err_passes_through_unchanged(world: World, agentlib: ModuleType) -> None:
    demo = world.tooling("demo")
    demo.fail["call_tool_blocking"] = "plain text"
    with pytest.raises(world.Err) as caught:
        agentlib.call(demo, "x")
    assert type(caught.value) is world.Err and caught.value.value == "plain text"


def wit_error_codes() -> list[str]:
    """The cases of `enum error-code` in `wit/types.wit`, in order."""
    body = re.search(r"enum error-code \{(.*?)\}", (wit_dir() / "types.wit").read_text(), re.S)
    assert body is not None
    return [m.group(1) for line in body.group(1).splitlines() if (m := re.match(r"^\s*([a-z-]+),?\s*$", line))]


def test_every_generated_error_code_becomes_its_wit_name(world: World, agentlib: ModuleType) -> None:
    names = wit_error_codes()
    assert {"not-found", "limit-exceeded", "unauthorized"} <= set(names)
    codes = list(world.types.ErrorCode)
    assert [agentlib.ToolingError(world.types.Error(code, "m", None)).code for code in codes] == names
    assert [code.value for code in codes] == list(range(len(names)))  # in the WIT's order


def test_read_resource_returns_a_resource_that_decodes_text_and_base64(world: World, agentlib: ModuleType) -> None:
    demo = world.tooling("demo")
    png = b"\x89PNG\r\n\x1a\n"
    contents = {
        "demo://readme": world.types.ResourceContent("demo://readme", "text/markdown", "# Démo\nline"),
        "demo://bare": world.types.ResourceContent("demo://bare", None, "plain"),
        "demo://logo.png": world.types.ResourceContent("demo://logo.png", "image/png", base64.b64encode(png).decode()),
    }
    demo.answers["read_resource"] = contents.__getitem__
    readme = agentlib.read_resource(demo, "demo://readme")
    assert isinstance(readme, agentlib.Resource) and readme.raw is contents["demo://readme"]
    assert (readme.uri, readme.mime_type, readme.text) == ("demo://readme", "text/markdown", "# Démo\nline")
    assert readme.data == "# Démo\nline".encode() and readme.is_text
    assert agentlib.read_resource(demo, "demo://bare").text == "plain"
    logo = agentlib.read_resource(demo, "demo://logo.png")
    assert logo.data == png and not logo.is_text and logo.text.startswith("\ufffdPNG")


def test_list_functions_return_the_hosts_lists(world: World, agentlib: ModuleType) -> None:
    demo = world.tooling("demo")
    tools = [world.types.Tool("echo", None, "{}", None)]
    demo.answers["list_tools"] = tools
    demo.answers["list_resources"] = []
    assert agentlib.list_tools(demo) is tools and agentlib.list_resources(demo) == []


def test_events_until_a_call_ends_after_its_final_envelope_and_yields_the_others(
    world: World, agentlib: ModuleType
) -> None:
    demo = world.tooling("demo")
    slow = agentlib.start(demo, "sleep", seconds=1)
    assert demo.asked[0] == ("call_tool", ("sleep", '{"seconds": 1}'))
    progress = world.envelope(slow.id, "Progress", world.types.Progress(1.0, 2.0, None))
    other = world.envelope("sub-9", "ResourceUpdated", world.types.ResourceContent("demo://note", None, "x"))
    final = world.envelope(slow.id, "ToolResult", world.result("sleep", {}, {"content": []}))
    after = world.envelope("sub-9", "ResourceUpdated", world.types.ResourceContent("demo://note", None, "y"))
    world.queue.extend([progress, other, final, after])
    stream = agentlib.events(2.5, until=slow)
    assert list(stream) == [progress, other, final]
    assert (stream.timed_out, stream.pending) == (False, set())
    assert world.waits == [2500, 2500, 2500] and list(world.queue) == [after]
    assert agentlib.is_final(final) and not agentlib.is_final(progress)


def test_events_end_on_timeout_naming_the_calls_still_open_and_bound_the_wait(
    world: World, agentlib: ModuleType
) -> None:
    waited = agentlib.events(10**9, until=["call-a", "call-b"])
    assert list(waited) == [] and waited.timed_out and waited.pending == {"call-a", "call-b"}
    assert world.waits == [2**32 - 1]  # the largest u32: never an out-of-range value for the host
    assert list(agentlib.events(0)) == [] and world.waits[-1] == "try"
    assert list(agentlib.events()) == [] and world.waits[-1] is None
    asked = len(world.waits)
    assert list(agentlib.events(5, until=[])) == [] and len(world.waits) == asked  # nothing to wait for


def test_a_call_and_a_subscription_end_what_they_opened_once(world: World, agentlib: ModuleType) -> None:
    demo = world.tooling("demo")
    with agentlib.start(demo, "sleep") as call:
        assert call.is_open()
    assert not call.is_open() and call.cancel() is False
    with agentlib.subscribe_resource(demo, "demo://note") as note:
        assert note.target == "demo://note" and not note.closed
    assert note.closed and note.close() is False
    assert [m for m, _ in demo.asked].count("unsubscribe_resource") == 1
    with agentlib.subscribe_resource_list(demo) as resources, agentlib.subscribe_tool_list(demo) as tools:
        assert (resources.target, tools.target) == ("resource list", "tool list")
    assert {"unsubscribe_resource_list", "unsubscribe_tool_list"} <= {m for m, _ in demo.asked}


def test_after_the_handle_is_dropped_calls_and_subscriptions_answer_false_without_asking(
    world: World, agentlib: ModuleType
) -> None:
    with agentlib.get("demo") as demo:
        note = agentlib.subscribe_resource(demo, "demo://note")
        slow = agentlib.start(demo, "sleep")
    asked = len(demo.asked)
    assert (note.close(), slow.is_open(), slow.cancel()) == (False, False, False)
    assert len(demo.asked) == asked


def test_respond_sends_the_answer_as_json(world: World, agentlib: ModuleType) -> None:
    demo = world.tooling("demo")
    call = agentlib.Call(demo, "ask", "call-1")
    call.respond(world.types.ElicitAction.ACCEPT, {"name": "Ada"})
    call.respond(world.types.ElicitAction.CANCEL)
    assert demo.asked == [
        ("respond", ("call-1", world.types.ElicitAction.ACCEPT, '{"name": "Ada"}')),
        ("respond", ("call-1", world.types.ElicitAction.CANCEL, None)),
    ]


def test_an_uncaught_tooling_error_leaves_run_as_code_message_and_the_guests_own_line(
    world: World, agentlib: ModuleType
) -> None:
    entry = importlib.import_module("agentlib.entry")
    demo = world.tooling("demo")
    demo.fail["call_tool_blocking"] = world.error("NOT_FOUND", "no tool named 'nosuch'")

    class Guest:
        def run(self, input: str) -> str:
            agentlib.call(demo, "nosuch")  # the guest's line
            return "unreachable"

    line = Guest.run.__code__.co_firstlineno + 1
    with pytest.raises(world.Err) as left:
        entry.wrap(Guest)().run("")
    assert type(left.value) is world.Err
    assert left.value.value == f"not-found: no tool named 'nosuch' (raised at {__file__}:{line})"


def test_the_deprecated_names_still_work_and_say_what_replaces_them(world: World, agentlib: ModuleType) -> None:
    demo = world.tooling("demo")
    mcp = {"content": [{"type": "text", "text": "hi"}], "structuredContent": {"n": 1}}
    demo.answers["call_tool_blocking"] = lambda name, arguments: world.result(name, {}, mcp)
    content = world.types.ResourceContent("demo://logo.png", "image/png", base64.b64encode(b"\x89PNG").decode())
    with pytest.deprecated_call(match="use .structured"):
        assert agentlib.call(demo, "echo")["structuredContent"] == {"n": 1}
    with pytest.deprecated_call(match=r"ToolResult\.of\(result\)\.raw"):
        assert agentlib.json_of(world.result("echo", {}, mcp)) == mcp
    with pytest.deprecated_call(match=r"\.text of a ToolResult"):
        assert agentlib.text_of(mcp) == "hi" and agentlib.text_of(agentlib.call(demo, "echo")) == "hi"
    with pytest.deprecated_call(match=r"Resource\.of\(content\)\.data"):
        assert agentlib.content_bytes(content) == b"\x89PNG"
    with pytest.deprecated_call(match=r"Resource\.of\(content\)\.text"):
        assert agentlib.content_text(content) == "\ufffdPNG"
    with pytest.deprecated_call(match="str\\(\\) of a ToolingError"):
        assert agentlib.failure(world.Err(world.error("TOOL_FAILED", "boom"))) == "tool-failed: boom"
        assert agentlib.failure(world.Err("mine")) == "mine"
    with pytest.deprecated_call(match=r"use subscribe_resource\(\)"):
        assert agentlib.subscription(demo, "demo://note").target == "demo://note"
    with pytest.deprecated_call(match=r"use subscribe_resource_list\(\)"):
        assert agentlib.resource_list_subscription(demo).target == "resource list"
    with pytest.deprecated_call(match=r"use subscribe_tool_list\(\)"):
        assert agentlib.tool_list_subscription(demo).target == "tool list"


API: Final = {
    "agent",
    "tooling",
    "Toolbox",
    "listen",
    "Progress",
    "Result",
    "Failed",
    "ResourceUpdated",
    "ResourceListUpdated",
    "ToolListUpdated",
    "Question",
    "ChatDelta",
    "ChatEnd",
    "Model",
    "Call",
    "Err",
    "Events",
    "Reply",
    "Resource",
    "Stream",
    "Subscription",
    "ToolCall",
    "ToolResult",
    "chat",
    "provider",
    "run_agent",
    "stream",
    "ToolingError",
    "call",
    "events",
    "get",
    "is_final",
    "list_resources",
    "list_tools",
    "read_resource",
    "start",
    "subscribe_resource",
    "subscribe_resource_list",
    "subscribe_tool_list",
}
"""agentlib's public names: adding one is an API decision (the guest guide's table lists each)."""

DEPRECATED: Final = {
    "content_bytes",
    "content_text",
    "failure",
    "json_of",
    "resource_list_subscription",
    "subscription",
    "text_of",
    "tool_list_subscription",
}


def test_the_api_is_pinned_and_the_deprecated_names_are_importable_but_not_exported(
    world: World, agentlib: ModuleType
) -> None:
    assert set(agentlib.__all__) == API and len(agentlib.__all__) == len(API)
    deprecated = importlib.import_module("agentlib.deprecated")
    assert set(deprecated.__all__) == DEPRECATED
    assert all(callable(getattr(agentlib, name)) for name in API | DEPRECATED)
    guide = (Path(__file__).resolve().parents[3] / "docs" / "guests" / "python.md").read_text()
    assert all(f"`{name}" in guide for name in API - {"Err"}), "the guest guide documents every name"
