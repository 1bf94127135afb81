"""JSON text a guest hands the host that no peer could take is refused for that guest alone, and no
request the host cannot encode ever drops a connection other guests share.

Tool arguments with a lone surrogate (`"\\ud800"`), nested very deep, with integers past Python's
digit limit or with `NaN` are refused to the guest as its error: they neither break the writer of
the shared stdio or HTTP connection (every call on it failing `unavailable`) nor trap the guest with
a host `RecursionError`/`ValueError`. The servers are real (tests/servers/observed.py,
tests/servers/asking.py), over stdio and streamable HTTP; a call of the same guest is in flight on
the shared connection while the bad ones are refused, and it still succeeds.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host
from agent_host._support.strict_json import MAX_DEPTH
from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from tests.support.component import REPO, TRANSPORTS, Steps, err, ok, probe, served_keys
from tests.support.probe_steps import call, call_blocking, drain, get, recv, ref, respond

pytestmark = pytest.mark.component

BAD_ARGUMENTS = {
    "surrogate": ('{"text": "\\ud800"}', "a lone UTF-16 surrogate (\\ud800) that no UTF-8 text can hold at $.text"),
    "deep": (
        '{"text": "x", "deep": ' + "[" * (MAX_DEPTH + 100) + "]" * (MAX_DEPTH + 100) + "}",
        f"nested more than {MAX_DEPTH} levels deep at $.deep",
    ),
    "very deep": ('{"text": ' + "[" * 100_000 + "]" * 100_000 + "}", f"nested more than {MAX_DEPTH} levels deep"),
    "long integer": ('{"text": "x", "n": ' + "7" * 5000 + "}", "an integer of 5000 digits (more than 1000) at $.n"),
    "NaN": ('{"text": "x", "n": NaN}', "NaN is not a JSON number at $.n"),
}


@pytest.fixture(scope="module", params=["stdio-2026", "http-2026"])
def observed(request: pytest.FixtureRequest) -> Iterator[str]:
    with served_keys("tests.servers.observed", request.param) as keys:
        yield keys


def host_of(keys: str, tmp_path: Path, extra: str = "") -> Host:
    return Host(parse_config("[tooling.t]\n" + keys + extra, tmp_path / "agent-host.toml"))


def test_arguments_no_peer_can_take_are_refused_for_the_caller_while_its_call_in_flight_succeeds(
    observed: str, tmp_path: Path, probe_wasm: Path, caplog: pytest.LogCaptureFixture
) -> None:
    steps: Steps = [
        get("t", as_="t"),
        call("t", "wait", seconds=1, steps=4),
        drain(count=1, timeout_ms=20_000),  # its first progress: the call is on the connection
    ]
    for text, _ in BAD_ARGUMENTS.values():
        steps += [call_blocking("t", "echo", text), call("t", "echo", text)]
    steps += [drain([ref(1)], timeout_ms=20_000), call_blocking("t", "echo", text="fine")]
    with caplog.at_level(logging.WARNING), host_of(observed, tmp_path) as host:
        results = probe(host, probe_wasm, steps)
    for index, (name, (_, named)) in enumerate(BAD_ARGUMENTS.items()):
        for result in results[3 + 2 * index : 5 + 2 * index]:
            error = err(result)
            assert error["code"] == "invalid-arguments", (name, error)
            assert named in error["message"], (name, error["message"])
            assert "the arguments of tool 'echo' are not valid JSON" in error["message"]
    final = ok(results[-2])[-1]
    assert (final["kind"], final["value"]["value"]["content"][0]["text"]) == ("ToolResult", "waited 1 s")
    assert ok(results[-1])["value"]["content"][0]["text"] == "fine"
    assert "connection lost" not in caplog.text


def test_an_answer_no_peer_can_take_is_refused_and_the_question_stays_open(tmp_path: Path, probe_wasm: Path) -> None:
    steps: Steps = [
        get("t", as_="t"),
        call("t", "ask", message="Your name?"),
        recv(30_000),
        respond("t", ref(1), "accept", {"name": "\ud800"}),
        respond("t", ref(1), "accept", {"name": "Ada"}),
        recv(30_000),
    ]
    with (
        served_keys("tests.servers.asking", "stdio-2025") as keys,
        host_of(keys, tmp_path, 'elicitation = "guest"\n') as host,
    ):
        results = probe(host, probe_wasm, steps)
    refused = err(results[3])
    assert refused["code"] == "invalid-arguments"
    assert "the answer's content is not valid JSON (a lone UTF-16 surrogate (\\ud800)" in refused["message"]
    assert ok(results[4]) is True
    final = ok(results[5])
    assert final["kind"] == "ToolResult" and final["value"]["value"]["content"][0]["text"] == "hello Ada"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_request_the_host_cannot_encode_fails_alone_and_the_shared_connection_stays(
    transport: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Past admission (a host bug, or a value no guest sent): the request fails with `invalid-arguments`
    naming the encoding problem, never `unavailable`; a call in flight on the connection succeeds."""
    unencodable: list[dict[str, Any]] = [{"text": "\ud800"}, {"text": "x", "deep": json.loads("[" * 300 + "]" * 300)}]
    with (
        served_keys("tests.servers.observed", transport) as keys,
        caplog.at_level(logging.WARNING),
        host_of(keys, tmp_path) as host,
    ):
        session = host.session("tester", allow=["*"])
        rep = session.get("t")
        tooling = session.handle(rep).tooling
        session.call_tool(rep, "wait", '{"seconds": 1, "steps": 4}')
        assert session.recv(20_000) is not None  # its first progress: the call is on the connection
        for arguments in unencodable:
            with pytest.raises(ToolingError) as caught:
                host.bridge.call(
                    tooling.call_tool, "echo", arguments, timeout=20,
                    on_timeout=lambda: ToolingError(ErrorCode.TIMEOUT, "no answer"),
                )  # fmt: skip
            assert caught.value.code is ErrorCode.INVALID_ARGUMENTS, caught.value
            assert "the host could not encode the call of tool 'echo'; nothing was sent" in caught.value.message
        with pytest.raises(ToolingError) as caught:
            host.bridge.call(
                tooling.read_resource, "obs://\ud800", timeout=20,
                on_timeout=lambda: ToolingError(ErrorCode.TIMEOUT, "no answer"),
            )  # fmt: skip
        assert caught.value.code is ErrorCode.INVALID_ARGUMENTS, caught.value  # refused by the write guard
        assert "the host could not encode the read of resource 'obs://\\ud800'; nothing was sent" in (
            caught.value.message
        )
        kinds: list[str] = []
        while "tool-result" not in kinds and len(kinds) < 8:
            envelope = session.recv(20_000)
            assert envelope is not None, kinds
            kinds.append(envelope.kind)
        assert kinds[-1] == "tool-result", kinds
        assert json.loads(session.call_tool_blocking(rep, "echo", '{"text": "fine"}').value)["content"][0]["text"] == (
            "fine"
        )
        session.close()
    assert "connection lost" not in caplog.text


def test_a_result_no_json_text_can_hold_is_a_protocol_error_of_that_call(tmp_path: Path, probe_wasm: Path) -> None:
    """A host-native tool returning NaN or a lone surrogate: the guest gets `protocol` for that call,
    neither a result that is not JSON nor a host error that ends its run."""
    tools = '["tests.support.pytools:not_a_number", "tests.support.pytools:half_a_pair"]'
    toml = f'[tooling.t]\nkind = "python"\npath = ["{REPO}"]\ntools = {tools}\n'
    steps: Steps = [
        get("t", as_="t"),
        call_blocking("t", "not_a_number"),
        call_blocking("t", "half_a_pair"),
        call("t", "half_a_pair"),
        drain([ref(3)], timeout_ms=20_000),
    ]
    with Host(parse_config(toml, tmp_path / "agent-host.toml")) as host:
        results = probe(host, probe_wasm, steps)
    nan, surrogate = err(results[1]), err(results[2])
    assert nan["code"] == "protocol" and "the result of tool 'not_a_number' is not valid JSON" in nan["message"]
    assert "NaN" in nan["message"]
    assert surrogate["code"] == "protocol" and "a lone UTF-16 surrogate (\\ud800)" in surrogate["message"]
    final = ok(results[4])[-1]
    assert final["kind"] == "Error" and final["value"]["code"] == "protocol"
