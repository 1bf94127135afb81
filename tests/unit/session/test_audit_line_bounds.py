"""Every audit line is bounded, whatever a guest, a client or a worker puts in it.

A string field longer than its bound is cut to its head with `…[cut: N characters]` and followed by
`KEY_chars` (its full length); a line never passes `MAX_LINE_BYTES`, escaping included; a line
forwarded from a Ray worker that is over the bound, or not one line, is replaced by an
`audit-line-replaced` line holding its head.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent_host.cluster.executor import event_handler
from agent_host.cluster.messages import AuditLine
from agent_host.errors import ToolingError
from agent_host.session.admission import MAX_URI_CHARS
from agent_host.session.audit_line import MAX_ARGUMENTS_CHARS, MAX_FIELD_CHARS, MAX_LINE_BYTES, REPLACED
from agent_host.session.audit_log import AuditLog
from tests.support.sessionkit import World

HUGE = 20_000_000
"""Characters of the names and arguments of the attack: each a control character, escaped to 6 bytes."""


def raw_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def parsed(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw_lines(path)]


CONTROL_ARGUMENTS = '{"text": "' + "\x01" * HUGE + '"}'
ESCAPED_ARGUMENTS = '{"text": "' + "\\u0001" * 170_000 + '"}'  # strict JSON under max_argument_bytes

REFUSED = {
    "invalid-arguments": ("\x01" * HUGE, "{}"),
    "denied": ("hidden", CONTROL_ARGUMENTS),
    "not-found": ("echo-nowhere", ESCAPED_ARGUMENTS),
    "limit-exceeded": ("echo", CONTROL_ARGUMENTS),
}
"""RunResult → (tool name, arguments) of a call the policy refuses with it."""


@pytest.mark.parametrize("outcome", list(REFUSED))
def test_a_refused_call_with_a_huge_name_or_huge_arguments_writes_one_bounded_line(world: World, outcome: str) -> None:
    name, arguments = REFUSED[outcome]
    session = world.session(audit=world.audit_log(include_arguments=True))
    try:
        rep = session.get("m")
        with pytest.raises(ToolingError) as refused:
            session.call_tool_blocking(rep, name, arguments)
    finally:
        session.close()
    assert refused.value.code.value == outcome
    path = world.tmp_path / "audit.jsonl"
    lines = raw_lines(path)
    assert all(len(line) <= MAX_LINE_BYTES for line in lines)
    line = parsed(path)[-1]
    assert (line["operation"], line["outcome"]) == ("call-tool-blocking", outcome)
    assert line["argument_bytes"] == len(arguments.encode())
    for key, value, bound in (("target", name, MAX_FIELD_CHARS), ("arguments", arguments, MAX_ARGUMENTS_CHARS)):
        if len(value) > bound:
            assert line[key] == value[:bound] + f"…[cut: {len(value)} characters]"
            assert line[f"{key}_chars"] == len(value)
        else:
            assert line[key] == value and f"{key}_chars" not in line


def test_a_line_with_every_field_at_its_worst_stays_within_the_bound_and_fields_within_theirs_stay_whole(
    tmp_path: Path,
) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", include_arguments=True)
    worst = "\x01" * (MAX_ARGUMENTS_CHARS + 1)
    log.record(
        agent=worst, tooling=worst, operation=worst, target=worst, argument_bytes=1, outcome=worst, duration=0.0,
        arguments=worst,
    )  # fmt: skip
    uri = "mock://" + "é" * (MAX_URI_CHARS - 7)  # the longest URI a guest may name
    log.record(
        agent="a", tooling="m", operation="read-resource", target=uri, argument_bytes=2, outcome="ok", duration=0.0,
        arguments="{}",
    )  # fmt: skip
    log.close()
    first, second = raw_lines(tmp_path / "audit.jsonl")
    assert len(first) <= MAX_LINE_BYTES
    entry = json.loads(first)
    for key in ("agent", "tooling", "operation", "target", "outcome", "arguments"):
        assert entry[f"{key}_chars"] == len(worst), key
    whole = json.loads(second)
    assert (whole["target"], whole["arguments"]) == (uri, "{}")
    assert not [key for key in whole if key.endswith("_chars")]


def test_a_forwarded_line_over_the_bound_is_replaced_by_one_holding_its_head(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    handle = event_handler(log, io.StringIO())
    forged = json.dumps({"agent": "w", "target": "x" * HUGE}) + "\n"
    handle(AuditLine(forged))
    handle(AuditLine(json.dumps({"agent": "w", "target": "\x01" * (MAX_LINE_BYTES // 4)}) + "\n"))
    log.close()
    lines = raw_lines(tmp_path / "audit.jsonl")
    assert len(lines) == 2 and all(len(line) <= MAX_LINE_BYTES for line in lines)
    first = json.loads(lines[0])
    assert (first["operation"], first["outcome"], first["line_chars"]) == (REPLACED, "limit-exceeded", len(forged))
    assert first["line"] == forged[:MAX_FIELD_CHARS] + f"…[cut: {len(forged)} characters]"
    assert json.loads(lines[1])["operation"] == REPLACED  # few characters, but over the bound once escaped


def test_a_forwarded_line_that_is_not_one_line_is_replaced(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.write_line('{"agent": "w"}\n{"agent": "forged"}\n')
    log.write_line('{"agent": "w"}')  # would run into the next line
    log.write_line('{"agent": "w"}\n')
    log.close()
    lines = parsed(tmp_path / "audit.jsonl")
    assert [(line.get("operation"), line.get("outcome")) for line in lines] == [
        (REPLACED, "protocol"),
        (REPLACED, "protocol"),
        (None, None),
    ]
    assert lines[-1] == {"agent": "w"}


def test_a_line_break_that_json_leaves_as_it_is_is_written_escaped() -> None:
    """U+2028, U+2029 and U+0085 are valid in JSON strings but end a line for `str.splitlines`: a
    name holding them must not split its line for such a reader."""
    from agent_host.session.audit_line import encode

    line = encode({"agent": "a", "target": "x\u2028{}\x85\u2029y", "outcome": "ok"}).decode("utf-8")
    assert len(line.splitlines()) == 1
    assert json.loads(line)["target"] == "x\u2028{}\x85\u2029y"
