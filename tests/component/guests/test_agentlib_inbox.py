"""agentlib's inbox helpers in a real guest: `events()`, `start()`, subscriptions as `with` blocks,
and `match` on the generated event classes, against the bundled demo server and the observed one.

A guest library that reads like Python: iterate the inbox until a timeout or until given calls are
finished; subscriptions as context managers whose `id` envelopes carry; class patterns, keyword and
positional, on `types.Envelope` and `types.Event_*`; the helpers' names (`subscribe_*`, `get`) and
`ToolingError` inside a real component.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import pytest

from agent_host import Host
from agent_host.components.build import build_guest
from tests.support.component import OBSERVED_TOML, REPO, granted

pytestmark = pytest.mark.component
LISTENER: Final = REPO / "tests" / "guests" / "probe"  # its listener part (listener.py)


@pytest.fixture(scope="module")
def listener_wasm() -> Path:
    return build_guest(LISTENER)


def listen(host: Host, wasm: Path, scenario: str) -> dict[str, Any]:
    outcome = host.run(wasm, json.dumps({"scenario": scenario}), agent="listener", policy=granted(host, "listener"))
    assert outcome.status == "ok", outcome
    seen: dict[str, Any] = json.loads(outcome.text)
    return seen


@pytest.fixture(scope="module")
def demo_seen(demo_host: Host, listener_wasm: Path) -> dict[str, Any]:
    return listen(demo_host, listener_wasm, "demo")


def test_events_until_a_call_yields_its_progress_the_subscriptions_changes_and_ends_after_its_result(
    demo_seen: dict[str, Any],
) -> None:
    assert demo_seen["watch"] == [
        "progress 1/3",
        "note: written while sleeping",
        "progress 2/3",
        "progress 3/3",
        "done: slept 1.5 s",
    ]
    assert demo_seen["watch_ended"] == {"timed_out": False, "pending": []}
    assert demo_seen["slow_open_after"] is False


def test_leaving_a_subscription_block_unsubscribes_once_and_nothing_arrives_after(demo_seen: dict[str, Any]) -> None:
    unsubscribed = demo_seen["unsubscribed"]
    assert unsubscribed["closed"] is True and unsubscribed["close_again"] is False
    assert unsubscribed["repr"].startswith("Subscription('demo://note', id=") and unsubscribed["repr"].endswith(
        ", closed)"
    )
    assert demo_seen["after_unsubscribe"] == {"kinds": [], "timed_out": True}
    assert demo_seen["lists"] == {
        "targets": ["resource list", "tool list"],
        "distinct": True,
        "close_again": [False, False],
    }


def test_a_failed_call_matches_a_keyword_pattern_on_its_error_code(demo_seen: dict[str, Any]) -> None:
    assert demo_seen["error"].endswith("nope")
    assert demo_seen["error_as_tooling_error"].startswith("tool-failed: ")


def test_a_call_the_host_refuses_at_once_raises_a_tooling_error_with_the_kebab_code(
    demo_seen: dict[str, Any],
) -> None:
    """agentlib's one exception, inside a real component (a subclass of `Err`)."""
    assert demo_seen["refused"] == {"code": "not-found", "is_err": True, "str_starts": "not-found: "}


def test_events_until_several_ids_ends_once_all_are_final(demo_seen: dict[str, Any]) -> None:
    assert demo_seen["echoes"] == ["a", "b", "c"]
    assert demo_seen["echoes_ended"] == {"timed_out": False, "pending": []}
    assert demo_seen["nothing_to_wait_for"] is True


def test_events_end_on_timeout_with_the_unfinished_ids_and_a_call_block_cancels_its_call(
    demo_seen: dict[str, Any],
) -> None:
    long = demo_seen["long"]
    assert long["kinds"] == [] and long["timed_out"] is True and long["pending_is_the_call"] is True
    assert long["open_inside"] is True and long["repr"].startswith("Call('sleep', id=")
    assert long["open_after_with"] is False and long["cancel_again"] is False
    assert demo_seen["drained"] == {"kinds": [], "timed_out": True}


def test_the_generated_classes_support_positional_class_patterns(demo_seen: dict[str, Any]) -> None:
    """componentize-py's records and variant cases are dataclasses: `__match_args__` comes with them."""
    assert demo_seen["match_args"] == {
        "Envelope": ["id", "event"],
        "Event_ToolResult": ["value"],
        "Event_Error": ["value"],
        "Event_Progress": ["value"],
        "Progress": ["progress", "total", "message"],
    }


def test_a_subscription_and_a_call_outliving_their_tooling_handle_answer_false_without_a_trap(
    demo_host: Host, listener_wasm: Path
) -> None:
    assert listen(demo_host, listener_wasm, "orphan") == {"close": False, "is_open": False, "cancel": False}


def test_list_subscriptions_deliver_their_lists_to_a_match_on_their_ids(
    make_host: Callable[[str], Host], listener_wasm: Path
) -> None:
    seen = listen(make_host(OBSERVED_TOML), listener_wasm, "lists")
    assert seen["resources"] == ["obs://a", "obs://b", "obs://c"]
    assert seen["tools"] is not None and seen["tools"][-1] == "late_tool"
