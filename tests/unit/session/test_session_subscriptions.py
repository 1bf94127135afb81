"""Subscriptions of one guest: registered upstream through `Watchers`, delivered cut to its grants.

Allow-lists apply to list events too. Subscriptions are their own part of the session, tested with a
mock tooling and no wasm.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Envelope, ResourceData, ToolSpec
from agent_host.policy.pins import LOCK_NAME, Pins
from agent_host.session import GuestSession
from tests.support.sessionkit import WAIT, World, small_inbox


def next_envelope(session: GuestSession) -> Envelope:
    envelope = session.recv(int(WAIT * 1000))
    assert envelope is not None, "no envelope came"
    return envelope


def test_a_resource_subscription_delivers_the_new_content(world: World, session: GuestSession) -> None:
    rep = session.get("m")
    sub_id = session.subscribe(rep, "resource", "mock://a")
    envelope = next_envelope(session)
    assert (envelope.id, envelope.kind) == (sub_id, "resource-updated")
    assert envelope.payload == ResourceData("mock://a", None, text="A2")
    assert ("subscribe-resource", "mock://a", "ok") in [
        (line["operation"], line["target"], line["outcome"]) for line in world.audit_lines()
    ]


def test_a_resource_outside_the_allow_list_is_denied_and_nothing_stays_open(session: GuestSession) -> None:
    rep = session.get("m")
    with pytest.raises(ToolingError) as caught:
        session.subscribe(rep, "resource", "mock://private")
    assert caught.value.code is ErrorCode.DENIED
    assert "may not use resource 'mock://private' of tooling 'm'" in caught.value.message
    assert session.inbox.open_ids() == ([], [])


def test_tool_list_events_carry_only_the_tools_the_agent_may_see(session: GuestSession) -> None:
    rep = session.get("m")
    sub_id = session.subscribe(rep, "tool-list")
    seen: list[list[str]] = []
    while not seen or "echo2" not in seen[-1]:
        envelope = next_envelope(session)
        assert (envelope.id, envelope.kind) == (sub_id, "tool-list-updated")
        assert isinstance(envelope.payload, list)
        seen.append([spec.name for spec in envelope.payload if isinstance(spec, ToolSpec)])
    assert all("hidden" not in names and "hidden2" not in names for names in seen)
    assert seen[-1] == ["echo", "write", "slow", "echo2"]


def test_unsubscribe_needs_the_id_and_the_kind_and_ends_delivery(world: World, session: GuestSession) -> None:
    rep = session.get("m")
    sub_id = session.subscribe(rep, "resource", "mock://a")
    assert session.unsubscribe(rep, "resource", "no-such-id") is False
    assert session.unsubscribe(rep, "tool-list", sub_id) is False
    assert session.unsubscribe(rep, "resource", sub_id) is True
    assert session.unsubscribe(rep, "resource", sub_id) is False
    assert session.recv(200) is None
    assert ("unsubscribe-resource", sub_id, "ok") in [
        (line["operation"], line["target"], line["outcome"]) for line in world.audit_lines()
    ]


def test_a_tooling_without_resources_refuses_resource_subscriptions_and_leaves_nothing_open(
    session: GuestSession,
) -> None:
    rep = session.get("py")
    with pytest.raises(ToolingError) as caught:
        session.subscribe(rep, "resource", "file:///x")
    assert caught.value == ToolingError(
        ErrorCode.UNAVAILABLE, "tooling 'py' has no resources to subscribe to (it is a python tooling)"
    )
    assert session.inbox.open_ids() == ([], [])
    assert session.subscribe(rep, "tool-list")  # list subscriptions are accepted and stay silent
    assert session.recv(100) is None


def test_subscriptions_beyond_the_limit_are_refused(world: World) -> None:
    session = world.session(inbox=small_inbox())
    try:
        rep = session.get("m")
        session.subscribe(rep, "tool-list")
        session.subscribe(rep, "resource-list")
        with pytest.raises(ToolingError) as caught:
            session.subscribe(rep, "resource", "mock://a")
        assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    finally:
        session.close()


def test_dropping_a_handle_ends_its_subscriptions_but_not_the_others(session: GuestSession) -> None:
    first, second = session.get("m"), session.get("m")
    ended = session.subscribe(first, "resource", "mock://a")
    kept = session.subscribe(second, "tool-list")
    session.drop(first)
    assert session.inbox.open_ids() == ([], [kept])
    assert session.unsubscribe(second, "resource", ended) is False


def test_a_broken_lock_file_empties_the_tool_list_events_of_a_pinning_tooling(world: World, tmp_path: Path) -> None:
    """A lock file that cannot be read leaves no tool of a pinning tooling usable; its events say so
    (an empty list) instead of breaking the delivery of the others."""
    (tmp_path / LOCK_NAME).write_text("version = 1\n[tooling.m]\necho = 'not a digest'\n")
    session = world.session(pins=Pins(tmp_path / LOCK_NAME, ["m"]))
    rep = session.get("m")
    tools = session.subscribe(rep, "tool-list")
    resource = session.subscribe(rep, "resource", "mock://a")
    seen: dict[str, object] = {}
    while len(seen) < 2:
        envelope = next_envelope(session)
        seen[envelope.kind] = envelope.payload
        assert envelope.id == (tools if envelope.kind == "tool-list-updated" else resource)
    assert seen["tool-list-updated"] == []
    assert seen["resource-updated"] == ResourceData("mock://a", None, text="A2")
    with pytest.raises(ToolingError) as caught:
        session.list_tools(rep)
    assert caught.value.code is ErrorCode.DENIED and "is broken" in caught.value.message
    session.close()
