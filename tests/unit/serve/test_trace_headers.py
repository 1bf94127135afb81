"""A `traceparent` header carried into the `_meta` of an MCP request that has none, and nothing else."""

from __future__ import annotations

import json

from agent_host.serve.trace_headers import TRACEPARENT, _carried

PARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_a_request_without_one_gets_the_headers_trace_and_others_pass_as_they_came() -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    carried = _carried(json.dumps(call).encode(), PARENT, b"k=v")
    assert carried is not None
    assert json.loads(carried)["params"]["_meta"] == {"traceparent": PARENT.decode(), "tracestate": "k=v"}
    own = {**call, "params": {"name": "x", "_meta": {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}}}
    assert _carried(json.dumps(own).encode(), PARENT, b"") is None  # the client's own `_meta` wins
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert _carried(json.dumps(notification).encode(), PARENT, b"") is None
    assert _carried(b"not json", PARENT, b"") is None
    lone = b'{"jsonrpc": "2.0", "id": 3, "method": "m", "params": {"text": "\\ud800"}}'
    assert b'"\\ud800"' in (_carried(lone, PARENT, b"") or b"")  # passed on as it came, for the SDK to judge
    assert _carried(b'{"id": 1, "method": "m", "params": [1]}', PARENT, b"") is None


def test_only_a_well_formed_traceparent_is_taken() -> None:
    assert TRACEPARENT.match(PARENT)
    for bad in (b"", b"garbage", PARENT + b"\n", PARENT.upper(), b"00-" + b"4" * 31 + b"-00f067aa0ba902b7-01"):
        assert not TRACEPARENT.match(bad)
