"""Subscriptions from real guests: content on every change, coalescing, one upstream subscription
shared by every guest, list subscriptions, unsubscribe, both protocol eras.

A server writing a resource 1,000 times while the guest is busy (at most one pending
`resource-updated` per subscription, the last content, the inbox within its bound); two guests on
one URI (both receive each update; the server saw one upstream subscription, and none after both
unsubscribed).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host
from tests.support.component import OBSERVED_TOML as OBSERVED
from tests.support.component import Era, activity, err, everything_toml, granted, ok, probe

pytestmark = pytest.mark.component
GET = {"op": "get", "tooling": "t", "as": "t"}
WAIT = 10.0


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"op": "call_blocking", "h": "t", "tool": tool, "args": json.dumps(args)}


def test_a_resource_subscription_delivers_the_new_content_after_each_change(
    make_host: Callable[[str], Host], probe_wasm: Path, era: Era
) -> None:
    host = make_host(era.toml)
    results = probe(
        host,
        probe_wasm,
        [GET, {"op": "subscribe_resource", "h": "t", "uri": "obs://a"},
         call("set", name="a", text="first"), {"op": "drain", "count": 1},
         call("set", name="b", text="not watched"),
         call("set", name="a", text="second"), {"op": "drain", "count": 1},
         {"op": "unsubscribe_resource", "h": "t", "id": {"ref": 1}},
         {"op": "unsubscribe_resource", "h": "t", "id": {"ref": 1}},
         call("set", name="a", text="after unsubscribe"), {"op": "drain", "timeout_ms": 1000}],
    )  # fmt: skip
    sub_id = ok(results[1])
    first, second = ok(results[3])[0], ok(results[6])[0]
    for envelope, text in ((first, "first"), (second, "second")):
        assert envelope["id"] == sub_id and envelope["kind"] == "ResourceUpdated"
        assert envelope["value"] == {"uri": "obs://a", "mime_type": "text/plain", "content": text}
    assert ok(results[7]) is True and ok(results[8]) is False
    assert ok(results[10]) == []


def test_a_thousand_writes_while_the_guest_is_busy_leave_one_envelope_with_the_last_content(
    make_host: Callable[[str], Host], probe_wasm: Path, era: Era
) -> None:
    """The server may still be sending its notifications after `churn` answered (2026: on the listen
    stream, which the answer can overtake), so what the guest may see after its busy spell is not a
    fixed list: it is one coalesced envelope per subscription at a time, contents that never go back,
    ending with the last write; never one envelope per write."""
    host = make_host("[host]\ninbox_size = 24\nmax_open_calls = 8\nmax_subscriptions = 8\n" + era.toml)
    outcome = host.run(
        probe_wasm,
        json.dumps(
            {"steps": [
                GET, {"op": "subscribe_resource", "h": "t", "uri": "obs://a"},
                {"op": "subscribe_resource", "h": "t", "uri": "obs://b"},
                call("churn", name="a", times=1000),
                {"op": "busy", "ms": 1500},
                {"op": "until", "content": "v1000", "timeout_ms": 20000},
            ]}
        ),
        agent="busy",
        policy=granted(host, "busy"),
    )  # fmt: skip
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    seen = ok(results[5])
    assert seen and {e["id"] for e in seen} == {ok(results[1])}, "only obs://a changed"
    versions = [int(e["value"]["content"].removeprefix("v")) for e in seen]
    assert versions == sorted(versions) and versions[-1] == 1000, versions
    assert len(seen) < 100, f"{len(seen)} envelopes for 1000 writes: updates were not coalesced"
    assert outcome.inbox_peak <= 24


def test_two_guests_on_one_uri_share_one_upstream_subscription(
    make_host: Callable[[str], Host], probe_wasm: Path, era: Era
) -> None:
    host = make_host(era.toml)
    first = host.start(
        probe_wasm,
        json.dumps({"steps": [GET, {"op": "subscribe_resource", "h": "t", "uri": "obs://a"},
                              {"op": "drain", "count": 1, "timeout_ms": 20000}]}),
        agent="first",
        policy=granted(host, "first"),
    )  # fmt: skip
    deadline = time.monotonic() + WAIT
    while era.upstream(activity(host)) != [["obs://a"]]:
        assert time.monotonic() < deadline, "the first guest did not subscribe"
        time.sleep(0.05)
    second = probe(
        host,
        probe_wasm,
        [GET, {"op": "subscribe_resource", "h": "t", "uri": "obs://a"},
         call("activity"),
         call("set", name="a", text="for both"),
         {"op": "drain", "count": 1},
         {"op": "unsubscribe_resource", "h": "t", "id": {"ref": 1}}],
        agent="second",
    )  # fmt: skip
    assert era.upstream(ok(second[2])["value"]["structuredContent"]) == [["obs://a"]]
    assert ok(second[4])[0]["value"]["content"] == "for both"
    outcome = first.join(WAIT)
    assert outcome is not None and outcome.status == "ok", outcome
    assert json.loads(outcome.text)[2]["ok"][0]["value"]["content"] == "for both"
    assert era.upstream(activity(host)) == []


def test_list_subscriptions_deliver_the_full_current_lists(make_host: Callable[[str], Host], probe_wasm: Path) -> None:
    host = make_host(OBSERVED)
    results = probe(
        host,
        probe_wasm,
        [GET, {"op": "subscribe_resource_list", "h": "t"}, {"op": "subscribe_tool_list", "h": "t"},
         call("add_resource", name="c"), {"op": "drain", "count": 1},
         call("add_tool", name="late_tool"), {"op": "drain", "count": 1},
         call("late_tool"),
         {"op": "unsubscribe_resource_list", "h": "t", "id": {"ref": 2}},
         {"op": "unsubscribe_tool_list", "h": "t", "id": {"ref": 2}}],
    )  # fmt: skip
    resources = ok(results[4])[0]
    assert resources["kind"] == "ResourceListUpdated" and resources["id"] == ok(results[1])
    assert [r["uri"] for r in resources["value"]] == ["obs://a", "obs://b", "obs://c"]
    tools = ok(results[6])[0]
    assert tools["kind"] == "ToolListUpdated" and tools["id"] == ok(results[2])
    assert tools["value"][-1]["name"] == "late_tool"
    assert ok(results[7])["value"]["content"][0]["text"] == "late_tool"  # the tool cache was refreshed
    assert ok(results[8]) is False  # a tool-list id is not a resource-list subscription
    assert ok(results[9]) is True


def test_a_server_without_subscription_support_is_unavailable_at_subscribe_time(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    demo = '[tooling.t]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
    host = make_host(demo + 'protocol = "2025-11-25"\n')  # MCPServer has no resources/subscribe handler
    results = probe(
        host,
        probe_wasm,
        [GET, {"op": "subscribe_resource", "h": "t", "uri": "obs://a"}, call("echo", text="still fine")],
    )  # fmt: skip
    error = err(results[1])
    assert error["code"] == "unavailable"
    assert "cannot notify resource subscriptions" in error["message"]
    assert ok(results[2])["value"]["content"][0]["text"] == "still fine"


def test_a_2025_era_subscription_receives_updates(
    make_host: Callable[[str], Host], probe_wasm: Path, everything_bin: Path
) -> None:
    uri = "demo://resource/static/document/features.md"
    host = make_host(everything_toml(everything_bin, "t"))
    results = probe(
        host,
        probe_wasm,
        [GET, {"op": "subscribe_resource", "h": "t", "uri": uri},
         call("toggle-subscriber-updates"),
         {"op": "drain", "count": 1, "timeout_ms": 20000},
         {"op": "unsubscribe_resource", "h": "t", "id": {"ref": 1}},
         call("toggle-subscriber-updates")],
    )  # fmt: skip
    envelope = ok(results[3])[0]
    assert envelope["id"] == ok(results[1]) and envelope["kind"] == "ResourceUpdated"
    assert envelope["value"]["uri"] == uri and envelope["value"]["content"].startswith("#")
    assert ok(results[4]) is True
