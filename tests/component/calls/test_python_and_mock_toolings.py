"""Host-native Python tools and mock toolings, from real guests: the protocol, the decorator, sync and
async tools, cancel, progress, failed preparation; scripted results, an exhausted script, scripted
updates; schema validation for every kind; capability decisions and approvals.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host, RunResult
from agent_host.config import parse_config
from agent_host.policy.approval import ApprovalRequest, CallbackApprover
from tests.support import cli_process, pytools
from tests.support.component import OBSERVED_TOML, REPO, err, ok
from tests.support.probe_steps import (
    call,
    call_blocking,
    cancel,
    drain,
    get,
    kind,
    list_tools,
    read_resource,
    ref,
    script,
    subscribe_resource,
    subscribe_resource_list,
)

pytestmark = pytest.mark.component

PYTHON = f"""
[tooling.py]
kind = "python"
path = ["{REPO}"]
tools = [
    "tests.support.pytools:registry",
    "tests.support.pytools:Deploy",
    "tests.support.pytools:plain",
    "tests.support.pytools:Broken",
]
"""

MOCK = """
[tooling.fake]
kind = "mock"

[[tooling.fake.tools]]
name = "search"
description = "Search the index"
input_schema = { type = "object", properties = { q = { type = "string" } }, required = ["q"] }
results = [
  { text = "first" },
  { structured = { hits = 3 } },
  { error = "quota exceeded" },
  { text = "slow one", delay = 0.3, progress = 3 },
]

[[tooling.fake.tools]]
name = "ping"
results = [{ text = "pong" }]
repeat_last = true

[[tooling.fake.resources]]
uri = "mock://doc"
name = "doc"
mime_type = "text/plain"
text = "version 1"

[[tooling.fake.updates]]
after = 0.2
resource = "mock://doc"
text = "version 2"

[[tooling.fake.updates]]
after = 0.4
add_resource = { uri = "mock://new", name = "new", text = "fresh" }
"""

AGENTS = """
[agents.all]
toolings = ["py", "fake", "t"]

[agents.reader]
toolings = ["py", "t", "fake"]
capabilities = ["read_only"]

[agents.careful]
toolings = ["py", "t"]
require_approval = ["workspace_write", "external_side_effect"]
"""

GET_PY = get("py", as_="py")
GET_FAKE = get("fake", as_="fake")
GET_T = get("t", as_="t")


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Callable[..., Host]]:
    hosts: list[Host] = []

    def build(extra: str = "", approver: Any = None) -> Host:
        host = Host(
            parse_config(PYTHON + MOCK + OBSERVED_TOML + extra + AGENTS, tmp_path / "agent-host.toml"),
            approver=approver,
        )
        hosts.append(host)
        return host

    yield build
    for host in hosts:
        host.close()


def run(host: Host, probe_wasm: Path, agent: str, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    outcome: RunResult = host.run(
        probe_wasm, script(*steps), agent=agent, policy=host.policy(agent, host.config.agents[agent])
    )
    assert outcome.status == "ok", outcome
    results: list[dict[str, Any]] = json.loads(outcome.text)
    return results


def test_the_tools_command_lists_python_tools_and_marks_builtins(tmp_path: Path) -> None:

    config = tmp_path / "agent-host.toml"
    config.write_text(PYTHON)
    done = cli_process.run("tools", "py", "--config", str(config), "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    tools = {t["name"]: t for t in json.loads(done.stdout)["py"]["tools"]}
    assert tools["deploy"]["builtin"] is True and tools["word_count"]["builtin"] is False
    assert "broken" not in tools
    assert "prepare() failed" in done.stderr  # the reason is logged


def test_python_tools_are_listed_with_schemas_from_type_hints(make: Callable[..., Host], probe_wasm: Path) -> None:
    results = run(make(), probe_wasm, "all", [GET_PY, kind("py"), list_tools("py"),
                                              call_blocking("py", "broken")])  # fmt: skip
    assert ok(results[1]) == "python"
    tools = {t["name"]: t for t in ok(results[2])}
    assert list(tools) == ["word_count", "slow", "threaded", "write_note", "explode", "deploy", "plain"]
    count = tools["word_count"]
    assert count["description"] == "Count the words of a text."
    assert count["input_schema"]["properties"]["text"] == {"type": "string", "description": "The text to count"}
    assert count["input_schema"]["required"] == ["text"]
    assert tools["plain"]["input_schema"]["properties"]["b"]["default"] == 2
    error = err(results[3])  # prepare() failed: not offered, and the guest is told why
    assert error["code"] == "not-found" and "prepare() failed: OSError: the database is not there" in error["message"]


def test_sync_async_decorated_and_class_tools_answer(make: Callable[..., Host], probe_wasm: Path) -> None:
    results = run(
        make(),
        probe_wasm,
        "all",
        [GET_PY, call_blocking("py", "word_count", text="one two three"), call_blocking("py", "plain", a=4),
         call_blocking("py", "deploy", service="api", env="staging"), call_blocking("py", "threaded", steps=2),
         call_blocking("py", "word_count", text="one", minimum=3), call_blocking("py", "explode"),
         call_blocking("py", "deploy", service="api", env="moon")],
    )  # fmt: skip
    assert ok(results[1])["value"]["structuredContent"] == {"words": 3}
    assert ok(results[2])["value"]["structuredContent"] == {"result": 8}
    assert ok(results[3])["value"]["structuredContent"] == {"deployed": "api", "to": "staging"}
    assert ok(results[4])["value"]["structuredContent"] == {"steps": 2, "agent": "all"}  # ctx names the agent
    assert err(results[5]) == {
        "code": "tool-failed",
        "message": "only 1 words, fewer than 3",
        "data": err(results[5])["data"],
    }
    assert err(results[6])["code"] == "tool-failed" and err(results[6])["message"] == "RuntimeError: kaboom"
    refused = err(results[7])
    assert (
        refused["code"] == "invalid-arguments" and "env must be staging or production, not 'moon'" in refused["message"]
    )


def test_a_slow_python_tool_reports_progress_and_is_cancelled_by_the_guest(
    make: Callable[..., Host], probe_wasm: Path
) -> None:
    pytools.EVENTS.clear()
    results = run(
        make(),
        probe_wasm,
        "all",
        [GET_PY,
         call("py", "slow", seconds=0.5),
         drain([ref(1)]),
         call("py", "slow", seconds=30),
         drain(count=2, timeout_ms=5000),
         cancel("py", ref(3)),
         call("py", "threaded", steps=3),
         drain([ref(6)])],
    )  # fmt: skip
    finished = ok(results[2])
    assert [e["kind"] for e in finished][-1] == "ToolResult"
    progress = [e["value"]["progress"] for e in finished if e["kind"] == "Progress"]
    assert progress and progress == sorted(progress)
    assert ok(results[5]) is True
    deadline = time.monotonic() + 5
    while "slow cancelled" not in pytools.EVENTS and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pytools.EVENTS == [
        "slow started by all on py",
        "slow finished",
        "slow started by all on py",
        "slow cancelled",
    ]
    threaded = ok(results[7])
    assert [e["kind"] for e in threaded][-1] == "ToolResult" and "Progress" in [e["kind"] for e in threaded]
    assert all(e["id"] != ok(results[3]) for e in threaded)


def test_a_mock_tooling_answers_its_script_in_order_then_says_it_ran_out(
    make: Callable[..., Host], probe_wasm: Path
) -> None:
    results = run(
        make(),
        probe_wasm,
        "all",
        [
            GET_FAKE,
            call_blocking("fake", "search", q="a"),
            call_blocking("fake", "search", q="b"),
            call_blocking("fake", "search", q="c"),
            call("fake", "search", q="d"),
            drain([ref(4)]),
            call_blocking("fake", "search", q="e"),
            call_blocking("fake", "ping"),
            call_blocking("fake", "ping"),
        ],
    )
    assert ok(results[1])["value"]["content"] == [{"type": "text", "text": "first"}]
    assert ok(results[2])["value"]["structuredContent"] == {"hits": 3}
    assert err(results[3])["code"] == "tool-failed" and err(results[3])["message"] == "quota exceeded"
    slow = ok(results[5])
    assert [e["kind"] for e in slow] == ["Progress", "Progress", "Progress", "ToolResult"]
    assert slow[-1]["value"]["value"]["content"][0]["text"] == "slow one"
    exhausted = err(results[6])
    assert exhausted["code"] == "tool-failed"
    assert "tool 'search' has no scripted result for call #5 (its script has 4)" in exhausted["message"]
    assert "repeat_last = true" in exhausted["message"]
    assert ok(results[7])["value"]["content"][0]["text"] == ok(results[8])["value"]["content"][0]["text"] == "pong"


def test_scripted_mock_updates_reach_a_subscribed_guest(make: Callable[..., Host], probe_wasm: Path) -> None:
    results = run(
        make(),
        probe_wasm,
        "all",
        [GET_FAKE, read_resource("fake", "mock://doc"),
         subscribe_resource("fake", "mock://doc"),
         subscribe_resource_list("fake"),
         drain(count=2, timeout_ms=5000)],
    )  # fmt: skip
    assert ok(results[1])["content"] == "version 1"
    events = {e["kind"]: e for e in ok(results[4])}
    assert events["ResourceUpdated"]["id"] == ok(results[2])
    assert events["ResourceUpdated"]["value"]["content"] == "version 2"
    assert [r["uri"] for r in events["ResourceListUpdated"]["value"]] == ["mock://doc", "mock://new"]


def test_arguments_are_checked_against_the_schema_for_every_kind(make: Callable[..., Host], probe_wasm: Path) -> None:
    results = run(
        make(),
        probe_wasm,
        "all",
        [GET_PY, GET_FAKE, GET_T,
         call_blocking("py", "word_count", text=5),
         call_blocking("fake", "search"),
         call_blocking("t", "wait", seconds="soon"),
         call("t", "wait", seconds=[1]),
         call_blocking("t", "activity")],
    )  # fmt: skip
    python, mock, mcp, asynchronous = (err(r) for r in results[3:7])
    for error in (python, mock, mcp, asynchronous):
        assert error["code"] == "invalid-arguments"
    assert "tool 'word_count' of tooling 'py' do not match its input schema" in python["message"]
    assert "at $.text: 5 is not of type 'string' (rule: type)" in python["message"]
    assert "at $: 'q' is a required property (rule: required)" in mock["message"]
    assert "at $.seconds: 'soon' is not of type 'number' (rule: type)" in mcp["message"]
    assert ok(results[7])["value"]["structuredContent"]["started"] == 0  # nothing reached the server


def test_capabilities_grant_or_deny_each_call(make: Callable[..., Host], probe_wasm: Path) -> None:
    host = make('capabilities = { "echo" = ["read_only"] }\n')  # appended to [tooling.t]
    results = run(
        host,
        probe_wasm,
        "reader",
        [GET_PY, GET_T, GET_FAKE,
         call_blocking("py", "word_count", text="a b"),
         call_blocking("py", "write_note", path="/n", text="x"),
         call_blocking("t", "echo", text="configured read_only"),
         call_blocking("t", "activity"),
         call_blocking("fake", "ping")],
    )  # fmt: skip
    assert ok(results[3])["value"]["structuredContent"] == {"words": 2}
    denied = err(results[4])
    assert denied["code"] == "denied"
    assert (
        "it needs workspace_write, which the agent does not hold (capabilities = ['read_only'] in" in denied["message"]
    )
    assert "[agents.reader]" in denied["message"]
    assert ok(results[5])["value"]["content"][0]["text"] == "configured read_only"
    assert "it needs external_side_effect" in err(results[6])["message"]  # MCP tool without annotations
    assert "it needs external_side_effect" in err(results[7])["message"]  # mock tool without declarations


def test_approvals_are_asked_per_invocation_and_may_be_refused(make: Callable[..., Host], probe_wasm: Path) -> None:
    asked: list[ApprovalRequest] = []

    def decide(request: ApprovalRequest) -> bool:
        asked.append(request)
        return request.arguments.get("path") != "/etc/forbidden"

    pytools.EVENTS.clear()
    host = make(approver=CallbackApprover(decide))
    results = run(
        host,
        probe_wasm,
        "careful",
        [GET_PY, GET_T,
         call_blocking("py", "write_note", path="/tmp/ok", text="secret text"),
         call_blocking("py", "write_note", path="/tmp/ok", text="again"),
         call_blocking("py", "write_note", path="/etc/forbidden", text="x"),
         call_blocking("py", "word_count", text="no approval needed"),
         call("t", "echo", text="async"),
         drain(count=1)],
    )  # fmt: skip
    assert ok(results[2])["value"]["content"][0]["text"] == "wrote 11 characters to /tmp/ok"
    assert ok(results[3])["value"]["content"][0]["text"] == "wrote 5 characters to /tmp/ok"
    refused = err(results[4])
    assert refused["code"] == "denied"
    assert "needs approval (workspace_write is in require_approval of" in refused["message"]
    assert refused["message"].endswith("was not approved: refused by the approval handler")
    assert ok(results[5])["value"]["structuredContent"] == {"words": 3}
    assert ok(results[7])[0]["value"]["value"]["content"][0]["text"] == "async"
    assert [(r.tool, r.arguments) for r in asked] == [
        ("write_note", {"path": "/tmp/ok"}),  # the effective arguments: the text is not shown
        ("write_note", {"path": "/tmp/ok"}),  # one approval per invocation
        ("write_note", {"path": "/etc/forbidden"}),
        ("echo", {"text": "async"}),
    ]
    assert asked[0].capabilities == {"workspace_write"} and asked[3].capabilities == {"external_side_effect"}
    assert pytools.EVENTS == ["wrote /tmp/ok", "wrote /tmp/ok"]


def test_without_an_approver_calls_needing_approval_are_denied_with_how_to_approve(
    make: Callable[..., Host], probe_wasm: Path
) -> None:
    results = run(make(), probe_wasm, "careful", [GET_PY, call_blocking("py", "write_note", path="/n", text="x")])
    message = err(results[1])["message"]
    assert "run with `--approve ask` to be asked, or `--approve all`" in message
