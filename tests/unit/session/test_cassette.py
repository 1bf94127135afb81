"""Cassettes (`agent_host.session.cassette`): every answer kind written and read back, divergence
named at the first difference, secrets replaced, files refused with what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_host.errors import CassetteError, ErrorCode, ToolingError
from agent_host.model import Asked, CallOutcome, Envelope, Progress, ResourceData, ResourceSpec, ToolSpec
from agent_host.session import cassette
from agent_host.session.cassette import Diverged, Playback, Recording

TOOL = ToolSpec("echo", "Echo.", {"type": "object"}, {"type": "object"}, {"readOnlyHint": True}, frozenset({"x"}))
ANSWERS: list[tuple[str, list[Any], Any]] = [
    ("get", ["demo"], 1),
    ("kind", [1], "mcp"),
    ("list-tools", [1], [TOOL]),
    ("call-tool-blocking", [1, "echo", "{}"], CallOutcome("echo", "{}", '{"content": []}')),
    ("list-resources", [1], [ResourceSpec("demo://a", "a", None, "text/plain")]),
    ("read-resource", [1, "demo://a"], ResourceData("demo://a", "text/plain", "hi")),
    ("call-tool", [1, "echo", "{}"], "0b7e2a40-0000-4000-8000-000000000000"),
    ("subscribe-resource", [1, "demo://a"], "sub-1"),
    ("is-open", [1, "sub-1"], True),
    ("respond", [1, "c", "accept", "{}"], None),
    ("recv", [100], Envelope("c", "progress", Progress(1.0, 2.0, "half"))),
    ("recv", [None], Envelope("c", "error", ToolingError(ErrorCode.TIMEOUT, "too slow", '{"s": 1}'))),
    ("recv", [None], Envelope("c", "elicitation", Asked("name?", {"type": "object"}))),
    ("recv", [None], Envelope("s", "tool-list-updated", [TOOL])),
    ("recv", [None], Envelope("s", "resource-updated", ResourceData("demo://a", None, None, "AAAA"))),
    ("try-recv", [], None),
]


def recorded(tmp_path: Path, secrets: tuple[str, ...] = ()) -> Path:
    recording = Recording(secrets)
    recorder = recording.recorder("agent", "the input")
    for fn, args, value in ANSWERS:
        recorder.answered(fn, args, value)
    recorder.failed("get", ["nosuch"], ToolingError(ErrorCode.NOT_FOUND, "no tooling named 'nosuch'"))
    recorder.ended("ok", "done")
    path = tmp_path / "c.json"
    cassette.save(recording.cassette, path)
    return path


def player(path: Path) -> cassette.Player:
    return Playback(cassette.load(path), path).player("agent")


def test_every_answer_comes_back_as_it_was_given(tmp_path: Path) -> None:
    play = player(recorded(tmp_path))
    for fn, args, value in ANSWERS:
        assert play.answer(fn, args) == value, fn
    with pytest.raises(ToolingError) as refused:
        play.answer("get", ["nosuch"])
    assert refused.value == ToolingError(ErrorCode.NOT_FOUND, "no tooling named 'nosuch'")
    assert play.ended("ok", "done") is None


def test_the_wait_of_recv_is_not_compared(tmp_path: Path) -> None:
    play = player(recorded(tmp_path))
    for fn, args, _ in ANSWERS[:10]:
        play.answer(fn, args)
    assert play.answer("recv", [60000]) == ANSWERS[10][2]  # recorded with 100 ms: replay never waits


@pytest.mark.parametrize(
    ("fn", "args", "expected"),
    [
        ("get", ["other"], 'call 1 of 17: recorded get("demo"), asked get("other")'),
        ("list-tools", [1], 'call 1 of 17: recorded get("demo"), asked list-tools(1)'),
    ],
)
def test_another_call_is_a_divergence_naming_both_and_the_index(
    tmp_path: Path, fn: str, args: list[Any], expected: str
) -> None:
    with pytest.raises(Diverged) as diverged:
        player(recorded(tmp_path)).answer(fn, args)
    assert str(diverged.value) == f"replay of agent agent diverged: {expected}"


def test_a_run_that_goes_on_past_or_ends_before_the_tape_or_answers_otherwise_diverges(tmp_path: Path) -> None:
    path = recorded(tmp_path)
    early = player(path)
    early.answer("get", ["demo"])
    assert early.ended("ok", "done") == (
        "the guest ended (ok) after call 1 of 17; the cassette has 16 more, next kind(1)"
    )
    whole = player(path)
    for fn, args, _ in ANSWERS:
        whole.answer(fn, args)
    with pytest.raises(ToolingError):
        whole.answer("get", ["nosuch"])
    with pytest.raises(Diverged, match=r"call 18 is get\(\"more\"\), but the cassette ends after call 17"):
        whole.answer("get", ["more"])
    assert whole.ended("error", "boom") == 'the run ended error "boom"; recorded ok "done"'


def test_values_from_the_environment_are_written_as_secret_and_compared_so(tmp_path: Path) -> None:
    recording = Recording(["s3cr3t-value", "short"])
    recorder = recording.recorder("agent", "key=s3cr3t-value")
    recorder.answered("call-tool", [1, "login", '{"key": "s3cr3t-value", "user": "short"}'], "id")
    path = tmp_path / "c.json"
    cassette.save(recording.cassette, path)
    text = path.read_text()
    assert "s3cr3t-value" not in text and "${secret}" in text
    assert '\\"user\\": \\"short\\"' in text  # under 6 characters: it would match anywhere
    replay = Playback(cassette.load(path), path, ["s3cr3t-value"]).player("agent")
    assert replay.answer("call-tool", [1, "login", '{"key": "s3cr3t-value", "user": "short"}']) == "id"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such cassette"),
        ("{", "not a cassette: "),
        ("[]", "not a cassette (no `agent-host-cassette` key)"),
        ('{"agent-host-cassette": 2}', "cassette format 2; this host reads format 1"),
        ('{"agent-host-cassette": 1, "wit": "agent-host:guest@9.0.0"}', "recorded against 'agent-host:guest@9.0.0'"),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": {"a": {"calls": [{"fn": "rm"}]}}}',
            "agents.a: call 1: not a recorded host function",
        ),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": {"a": {"calls": '
            '[{"fn": "get", "args": ["x"], "ok": -1}]}}}',
            "agents.a: call 1: not a get answer (Input should be greater than or equal to 1)",
        ),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": {"a": {"calls": '
            '[{"fn": "is-open", "args": [1, "c"], "ok": "false"}]}}}',
            "agents.a: call 1: not a is-open answer (Input should be a valid boolean)",
        ),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": {"a": {"calls": '
            '[{"fn": "recv", "args": [1], "ok": {"id": "c", "kind": "progress", "payload": {}}}]}}}',
            "agents.a: call 1: not a recv answer (payload of a progress envelope: progress: Field required",
        ),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": {"a": {"calls": '
            '[{"fn": "get", "args": ["x"], "err": {"code": "no-such-code", "message": "m"}}]}}}',
            "agents.a: call 1: not a get answer ('no-such-code' is not an error code)",
        ),
    ],
)
def test_a_file_that_is_not_a_usable_cassette_is_refused_saying_why(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "c.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CassetteError) as refused:
        cassette.load(path)
    assert expected in refused.value.message
    assert refused.value.exit_code == 2


def test_an_agent_without_a_tape_is_named_with_those_recorded(tmp_path: Path) -> None:
    path = recorded(tmp_path)
    with pytest.raises(CassetteError, match="no recording of agent other; recorded: agent"):
        Playback(cassette.load(path), path).player("other")


def test_a_tape_past_its_bound_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cassette, "MAX_TAPE_BYTES", 1000)
    recording = Recording()
    recorder = recording.recorder("agent", "")
    for _ in range(20):
        recorder.answered("call-tool", [1, "echo", json.dumps({"text": "x" * 100})], "id")
    assert recording.cassette.agents["agent"].calls == []  # nothing more is held once over
    path = tmp_path / "c.json"
    with pytest.raises(CassetteError, match="the recording of agent agent passed"):
        cassette.save(recording.cassette, path)
    assert not path.exists()


@pytest.mark.parametrize("secret", ['quo"te"secret', "back\\slash\\secret", "pässwörd-ünï", "line\nbreak-secret"])
def test_a_secret_is_replaced_however_deep_in_json_text_it_is_escaped(secret: str) -> None:
    scrub = cassette.Scrubber([secret])
    arguments = json.dumps({"text": secret})  # JSON text in a string: escaped once more in the file
    result = json.dumps({"content": [{"type": "text", "text": arguments}]}, ensure_ascii=True)  # twice, ASCII
    kept = scrub({"args": [1, "echo", arguments], "ok": {"value": result}, secret: "a key is never touched"})
    text = json.dumps(kept, ensure_ascii=False) + json.dumps(kept)
    for form in cassette._escapes(secret):
        assert form not in json.dumps(kept["args"]) + json.dumps(kept["ok"]), form
    assert secret in kept  # the key
    assert text.count("${secret}") >= 3


def test_the_value_of_each_variable_is_a_secret_on_its_own() -> None:
    from agent_host.config import parse_config

    config = parse_config(
        '[tooling.h]\nurl = "http://127.0.0.1:9/mcp"\nheaders = { Authorization = "Bearer ${TOKEN}" }\n',
        Path("/nowhere/agent-host.toml"),
        {"TOKEN": "verysecrettoken42"},
    )
    assert {"Bearer verysecrettoken42", "verysecrettoken42"} <= config.secrets
    scrub = cassette.Scrubber(config.secrets)
    assert scrub("the server said verysecrettoken42") == "the server said ${secret}"


def test_a_recording_is_written_only_over_a_regular_file_that_is_a_cassette(tmp_path: Path) -> None:
    import os

    recording = Recording()
    recording.recorder("agent", "in").answered("get", ["demo"], 1)
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path, why in (
        (link, "not a regular file"),
        (fifo, "not a regular file"),
        (target, "exists and is not a cassette"),
    ):
        with pytest.raises(CassetteError, match=why):
            cassette.save(recording.cassette, path)
    assert target.read_text() == "{}" and link.is_symlink()
    kept = tmp_path / "kept.json"
    other = Recording()
    other.recorder("other", "").answered("get", ["x"], 2)
    cassette.save(other.cassette, kept)
    cassette.save(recording.cassette, kept)  # keeps the other agent's tape (its mode: test_cassette_files)
    assert sorted(cassette.load(kept).agents) == ["agent", "other"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"agent-host-cassette": true, "wit": "agent-host:guest@0.2.0"}', "cassette format True"),
        ('{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": [1, 2]}', "`agents` is not an object"),
        ("[" * 100_000, "not a cassette: nested too deeply"),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": '
            '{"a": {"calls": [], "outcome": "ok"}}}',
            "`outcome` is not {status, text} strings",
        ),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": '
            '{"a": {"calls": [], "input": ["a"]}}}',
            "`input` is not a string",
        ),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": {"a": {"calls": '
            '[{"fn": "recv", "args": [1], "ok": {"id": 42, "kind": "progress", "payload": {}}}]}}}',
            "not a recv answer (an envelope's id is a string)",
        ),
        (
            '{"agent-host-cassette": 1, "wit": "agent-host:guest@0.2.0", "agents": {"a": {"calls": '
            '[{"fn": "call-tool-blocking", "args": [1], "ok": {"name": 42, "arguments": "{}", "value": "{}"}}]}}}',
            "not a call-tool-blocking answer (name: Input should be a valid string)",
        ),
    ],
)
def test_more_files_that_are_not_usable_cassettes_are_refused_saying_why(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(CassetteError) as refused:
        cassette.load(path)
    assert expected in refused.value.message


def test_a_run_the_host_ended_at_its_time_limit_ends_so_again_after_its_last_call(tmp_path: Path) -> None:
    recording = Recording()
    recorder = recording.recorder("agent", "")
    recorder.failed("call-tool-blocking", [1, "wait", "{}"], ToolingError(ErrorCode.CANCELLED, "stopped"))
    recorder.ended("trap", "wall-clock time limit: 2 s", "wall_time")
    path = tmp_path / "c.json"
    cassette.save(recording.cassette, path)
    play = player_of(path, "agent")
    with pytest.raises(cassette.ReplayedTrap) as trapped:  # as the last call returns, as live
        play.answer("call-tool-blocking", [1, "wait", "{}"])
    assert (trapped.value.text, trapped.value.tripped) == ("wall-clock time limit: 2 s", "wall_time")
    assert play.ended("trap", "wall-clock time limit: 2 s") is None


def test_a_divergence_between_long_texts_shows_where_they_differ() -> None:
    recorded, asked = cassette._apart("x" * 500 + "A" + "y" * 10, "x" * 500 + "B" + "y" * 10)
    assert "A" in recorded and "B" in asked and recorded.startswith("…")


def player_of(path: Path, agent: str) -> cassette.Player:
    return Playback(cassette.load(path), path).player(agent)
