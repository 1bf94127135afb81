"""Asynchronous calls from real guests: ids, exactly-once envelopes, progress, cancel, limits.

100 `call-tool` in flight from one guest (every envelope exactly once, with the right id and value;
`is-open` goes false for each); cancelling a long call (the server observes it, no envelope arrives,
the connection keeps serving); progress in order before the result. Run against the SDK-2.x test
server (2026-07-28 era) over stdio and streamable HTTP, and server-everything (2025-11-25 era) over
stdio.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host
from tests.support.component import OBSERVED_TOML as OBSERVED
from tests.support.component import Server, err, everything_toml, ok, probe

pytestmark = pytest.mark.component


@dataclass
class Peer:
    toml: str
    echo: Callable[[str], dict[str, Any]]
    """Arguments of the peer's echo tool for a text."""
    echoed: Callable[[str], str]
    """The text its echo returns for a text."""


def observed_peer(toml: str) -> Peer:
    return Peer(toml, lambda text: {"text": text}, lambda text: text)


@pytest.fixture(params=["observed-stdio", "observed-http", "everything-stdio"])
def peer(request: pytest.FixtureRequest) -> Iterator[Peer]:
    if request.param == "observed-stdio":
        yield observed_peer(OBSERVED)
    elif request.param == "observed-http":
        server = Server([sys.executable, "-m", "tests.servers.observed", "--http", "0"])
        yield observed_peer(f'[tooling.t]\nurl = "{server.url}"\n')
        server.stop()
    else:
        binary = request.getfixturevalue("everything_bin")
        yield Peer(everything_toml(binary, "t"), lambda text: {"message": text}, lambda text: f"Echo: {text}")


def test_a_hundred_calls_in_flight_each_end_exactly_once(
    make_host: Callable[[str], Host], probe_wasm: Path, peer: Peer
) -> None:
    host = make_host(peer.toml)
    texts = [f"message {index}" for index in range(100)]
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "t", "as": "t"},
         {"op": "call_each", "h": "t", "tool": "echo", "args_list": [peer.echo(t) for t in texts]},
         {"op": "all_open", "h": "t", "ids": {"ref": 1}},
         {"op": "drain", "ids": {"ref": 1}, "timeout_ms": 30000},
         {"op": "all_open", "h": "t", "ids": {"ref": 1}},
         {"op": "pending"}],
    )  # fmt: skip
    ids = ok(results[1])
    assert len(set(ids)) == 100
    assert all(len(i) == 36 and i.count("-") == 4 for i in ids)
    assert ok(results[2]) == [True] * 100
    envelopes = ok(results[3])
    finals = [e for e in envelopes if e["kind"] in ("ToolResult", "Error")]
    assert sorted(e["id"] for e in finals) == sorted(ids)  # every id exactly once
    by_id = {e["id"]: e for e in finals}
    for call_id, text in zip(ids, texts, strict=True):
        envelope = by_id[call_id]
        assert envelope["kind"] == "ToolResult", envelope
        assert envelope["value"]["value"]["content"][0]["text"] == peer.echoed(text)
        assert envelope["value"]["arguments"] == json.dumps(peer.echo(text))
    assert ok(results[4]) == [False] * 100
    assert ok(results[5]) == []


def test_cancelling_a_long_call_cancels_it_upstream_and_nothing_arrives(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    host = make_host(OBSERVED)
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "t", "as": "t"},
         {"op": "call", "h": "t", "tool": "wait", "args": '{"seconds": 60}'},
         {"op": "poll", "h": "t", "tool": "activity", "key": "started", "equals": 1},
         {"op": "cancel", "h": "t", "id": {"ref": 1}},
         {"op": "is_open", "h": "t", "id": {"ref": 1}},
         {"op": "cancel", "h": "t", "id": {"ref": 1}},
         {"op": "poll", "h": "t", "tool": "activity", "key": "cancelled", "equals": 1},
         {"op": "call", "h": "t", "tool": "echo", "args": '{"text": "after"}'},
         {"op": "drain", "timeout_ms": 1500}],
    )  # fmt: skip
    cancelled_id = ok(results[1])
    assert ok(results[3]) is True
    assert ok(results[4]) is False
    assert ok(results[5]) is False
    activity = ok(results[6])
    assert activity["cancelled"] == 1 and activity["finished"] == 0
    envelopes = ok(results[8])
    assert all(e["id"] != cancelled_id for e in envelopes)
    assert [(e["id"], e["value"]["value"]["content"][0]["text"]) for e in envelopes] == [(ok(results[7]), "after")]


def test_cancelling_a_call_on_the_2025_era_server_keeps_the_connection_serving(
    make_host: Callable[[str], Host], probe_wasm: Path, everything_bin: Path
) -> None:
    host = make_host(everything_toml(everything_bin, "t"))
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "t", "as": "t"},
         {"op": "call", "h": "t", "tool": "trigger-long-running-operation", "args": '{"duration": 30, "steps": 30}'},
         {"op": "drain", "count": 1, "timeout_ms": 10000},
         {"op": "cancel", "h": "t", "id": {"ref": 1}},
         {"op": "call", "h": "t", "tool": "echo", "args": '{"message": "still here"}'},
         {"op": "drain", "timeout_ms": 2500}],
    )  # fmt: skip
    long_id = ok(results[1])
    assert ok(results[2])[0]["kind"] == "Progress" and ok(results[2])[0]["id"] == long_id
    assert ok(results[3]) is True
    envelopes = ok(results[5])
    assert all(e["id"] != long_id for e in envelopes)
    assert [e["value"]["value"]["content"][0]["text"] for e in envelopes] == ["Echo: still here"]


@pytest.mark.parametrize("era", ["2026", "2025"])
def test_progress_arrives_in_order_before_the_result(
    make_host: Callable[[str], Host], probe_wasm: Path, request: pytest.FixtureRequest, era: str
) -> None:
    if era == "2026":
        toml, tool, args = OBSERVED, "wait", {"seconds": 1.0, "steps": 5}
    else:
        toml = everything_toml(request.getfixturevalue("everything_bin"), "t")
        tool, args = "trigger-long-running-operation", {"duration": 2, "steps": 5}
    host = make_host(toml)
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "t", "as": "t"},
         {"op": "call", "h": "t", "tool": tool, "args": json.dumps(args)},
         {"op": "drain", "ids": [{"ref": 1}], "timeout_ms": 10000}],
    )  # fmt: skip
    call_id = ok(results[1])
    envelopes = ok(results[2])
    assert all(e["id"] == call_id for e in envelopes)
    kinds = [e["kind"] for e in envelopes]
    assert kinds[-1] == "ToolResult" and set(kinds[:-1]) == {"Progress"} and len(kinds) >= 3
    progress = [e["value"]["progress"] for e in envelopes[:-1]]
    assert progress == sorted(progress) and len(set(progress)) == len(progress)
    assert all(e["value"]["total"] == 5 for e in envelopes[:-1])


def test_call_tool_refuses_beyond_the_open_call_limit(make_host: Callable[[str], Host], probe_wasm: Path) -> None:
    host = make_host("[host]\nmax_open_calls = 3\nmax_subscriptions = 2\ninbox_size = 8\n" + OBSERVED)
    wait = {"op": "call", "h": "t", "tool": "wait", "args": '{"seconds": 60}'}
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "t", "as": "t"}, wait, wait, wait, wait,
         {"op": "cancel", "h": "t", "id": {"ref": 1}}, wait],
    )  # fmt: skip
    error = err(results[4])
    assert error["code"] == "limit-exceeded"
    assert "the limit is 3" in error["message"]
    assert isinstance(ok(results[6]), str)


def test_failures_of_an_asynchronous_call_arrive_as_error_envelopes(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    host = make_host(OBSERVED.replace('cwd = "', 'timeout = 1\ncwd = "'))
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "t", "as": "t"},
         {"op": "call", "h": "t", "tool": "echo", "args": "not json"},
         {"op": "call", "h": "t", "tool": "nosuch", "args": "{}"},
         {"op": "call", "h": "t", "tool": "wait", "args": '{"seconds": 30}'},
         {"op": "drain", "ids": [{"ref": 3}], "timeout_ms": 10000},
         {"op": "poll", "h": "t", "tool": "activity", "key": "cancelled", "equals": 1}],
    )  # fmt: skip
    assert err(results[1])["code"] == "invalid-arguments"  # refused at once, no id
    assert err(results[2])["code"] == "not-found"  # checked before the id is given
    envelopes = {e["id"]: e for e in ok(results[4])}
    slow = envelopes[ok(results[3])]
    assert (slow["kind"], slow["value"]["code"]) == ("Error", "timeout")
    assert "did not finish within 1 s" in slow["value"]["message"]
    assert ok(results[5])["cancelled"] == 1  # the timeout cancelled the request upstream too
