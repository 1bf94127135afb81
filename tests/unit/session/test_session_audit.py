"""Audit spans: one line per operation, its outcome taken from how the span ended.

A span is a context manager writing the audit log's line format, each operation named as its WIT
function.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Operation
from agent_host.session.audit import AuditTrail
from agent_host.session.audit_log import AuditLog


def lines(path: Path | None) -> list[dict[str, Any]]:
    assert path is not None
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def log(tmp_path: Path) -> Iterator[AuditLog]:
    log = AuditLog(tmp_path / "audit.jsonl", include_arguments=True)
    yield log
    log.close()


def test_a_span_that_ends_normally_is_ok_and_timed(log: AuditLog) -> None:
    trail = AuditTrail("a", log)
    with trail.span(Operation.CALL_TOOL_BLOCKING, "m", "echo", '{"text": "é"}'):
        pass
    (line,) = lines(log.path)
    assert {k: line[k] for k in ("agent", "tooling", "operation", "target", "argument_bytes", "outcome")} == {
        "agent": "a",
        "tooling": "m",
        "operation": "call-tool-blocking",
        "target": "echo",
        "argument_bytes": len('{"text": "é"}'.encode()),
        "outcome": "ok",
    }
    assert line["arguments"] == '{"text": "é"}' and line["duration_ms"] >= 0


@pytest.mark.parametrize(
    ("raised", "outcome"),
    [
        (ToolingError(ErrorCode.DENIED, "no"), "denied"),
        (RuntimeError("bug"), "internal"),
        (KeyboardInterrupt(), "cancelled"),
    ],
)
def test_a_span_ended_by_an_exception_records_it_and_lets_it_through(
    log: AuditLog, raised: BaseException, outcome: str
) -> None:
    with pytest.raises(type(raised)), AuditTrail("a", log).span(Operation.GET, "m"):
        raise raised
    assert [(line["operation"], line["target"], line["outcome"]) for line in lines(log.path)] == [
        ("get", None, outcome)
    ]


def test_a_failure_handled_inside_the_span_is_recorded_with_fail(log: AuditLog) -> None:
    with AuditTrail("a", log).span(Operation.CALL_TOOL, "m", "slow", "{}") as span:
        span.fail(ToolingError(ErrorCode.TIMEOUT, "late"))
    assert [line["outcome"] for line in lines(log.path)] == ["timeout"]


def test_a_deferred_span_records_only_a_failure_before_the_hand_off(log: AuditLog) -> None:
    trail = AuditTrail("a", log)
    with trail.span(Operation.CALL_TOOL, "m", "echo", "{}") as span:
        span.defer()
    assert not lines(log.path)
    with pytest.raises(ToolingError), trail.span(Operation.CALL_TOOL, "m", "echo", "{}") as span:
        raise ToolingError(ErrorCode.LIMIT_EXCEEDED, "too many")
    assert [line["outcome"] for line in lines(log.path)] == ["limit-exceeded"]


def test_without_an_audit_log_spans_write_nothing() -> None:
    trail = AuditTrail("a", None)
    with trail.span(Operation.LIST_TOOLS, "m"):
        pass
    assert trail.log is None


def test_operations_are_named_as_the_wit_functions() -> None:
    assert [op.value for op in Operation] == [
        "get", "list-tools", "call-tool", "call-tool-blocking", "list-resources", "read-resource",
        "subscribe-resource", "subscribe-resource-list", "subscribe-tool-list",
        "unsubscribe-resource", "unsubscribe-resource-list", "unsubscribe-tool-list", "respond",
        "get-provider", "models", "chat", "chat-stream",
    ]  # fmt: skip
