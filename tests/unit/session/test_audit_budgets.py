"""One run, or one client of `agent-host serve`, cannot rotate away the audit lines of others.

A run's lines are charged to its budget (`[host] audit_run_max`); past it they are counted, not
written, and one `audit-budget` line at the run's end says how many and why (a line refused after
the end is told at once). A client's allowance (`[serve] audit_client_max`) refills over time
(`audit_client_rate`): once it has, one line tells what was counted before the client's next line;
what is still counted when the server stops is told then. A served run draws from its client's
allowance too. The clock is injected: nothing here waits.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host, ToolingError, parse_config
from agent_host.session.audit_budget import SWEEP_AT, Allowances, AuditBudget, run_budget
from agent_host.session.audit_log import BUDGET_OPERATION, AuditLog
from tests.support.sessionkit import MOCK

NAME = "\x01" * 100_000
"""A tool name the host refuses (too long), escaped to 6 bytes a character: 600 KB a line unbounded."""


def lines_of(*paths: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in paths if path.exists() for line in path.read_text().splitlines()]


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(log: AuditLog, agent: str, budget: AuditBudget | None, target: str = "echo") -> None:
    log.record(
        agent=agent, tooling="m", operation="call-tool", target=target, argument_bytes=2, outcome="ok", duration=0.0,
        budget=budget,
    )  # fmt: skip


def line_size(tmp_path: Path) -> int:
    """Bytes of one line `record` writes for agent `a` (measured once, in a log of its own)."""
    log = AuditLog(tmp_path / "measure.jsonl")
    record(log, "a", None)
    log.close()
    return len((tmp_path / "measure.jsonl").read_bytes())


@pytest.fixture
def log(tmp_path: Path) -> Iterator[AuditLog]:
    log = AuditLog(tmp_path / "audit.jsonl")
    yield log
    log.close()


def test_many_refused_calls_of_one_run_cannot_push_another_agents_line_out_of_the_history(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    text = MOCK + f'[host]\naudit_log = "{audit}"\naudit_log_max = "256KiB"\naudit_log_keep = 1\n'
    config = parse_config(text + 'audit_run_max = "64KiB"\n', tmp_path / "agent-host.toml", {})
    with Host(config) as host:
        other = host.session("other")
        with pytest.raises(ToolingError):
            other.get("m")  # denied: its line is the history to keep
        other.close()
        attacker = host.session("tester")
        rep = attacker.get("m")
        for _ in range(200):
            with pytest.raises(ToolingError):
                attacker.call_tool_blocking(rep, NAME, "{}")
        attacker.close()
    lines = lines_of(audit.with_name("audit.jsonl.1"), audit)
    assert [(line["agent"], line["operation"]) for line in lines if line["agent"] == "other"] == [("other", "get")]
    written = [line for line in lines if line["agent"] == "tester" and line["operation"] == "call-tool-blocking"]
    (told,) = [line for line in lines if line["operation"] == BUDGET_OPERATION]
    assert len(written) + told["lines_not_written"] == 200
    assert told["agent"] == "tester" and told["outcome"] == "limit-exceeded"
    assert "audit_run_max in " in told["reason"] and "65536 bytes" in told["reason"]
    sizes = [path.stat().st_size for path in (audit, audit.with_name("audit.jsonl.1")) if path.exists()]
    assert sum(sizes) < 64 * 1024 + 2048  # the run's budget, the other's line and the telling line


def test_a_run_within_its_budget_writes_every_line_and_no_telling_line(log: AuditLog, tmp_path: Path) -> None:
    budget = run_budget("a", 10 * line_size(tmp_path), "[host] audit_run_max")
    for _ in range(10):
        record(log, "a", budget)
    log.end(budget)
    assert [line["operation"] for line in lines_of(tmp_path / "audit.jsonl")] == ["call-tool"] * 10


def test_a_line_refused_after_the_run_ended_is_told_at_once(log: AuditLog, tmp_path: Path) -> None:
    size = line_size(tmp_path)
    budget = run_budget("a", size, "[host] audit_run_max")
    record(log, "a", budget)
    record(log, "a", budget)
    log.end(budget)
    log.end(budget)  # idempotent
    record(log, "a", budget)  # an asynchronous call cancelled at the run's end
    told = [(line["operation"], line.get("lines_not_written")) for line in lines_of(tmp_path / "audit.jsonl")]
    assert told == [("call-tool", None), (BUDGET_OPERATION, 1), (BUDGET_OPERATION, 1)]


def test_a_client_past_its_allowance_is_counted_while_other_clients_are_written(log: AuditLog, tmp_path: Path) -> None:
    clock = Clock()
    size = line_size(tmp_path)
    allowances = Allowances(3 * size, 1, agent="serve", keys="[serve] audit_client_max", clock=clock)
    for _ in range(10):
        record(log, "a", allowances.of("token 1"))
    record(log, "a", allowances.of("token 2"), target="other")
    lines = lines_of(tmp_path / "audit.jsonl")
    assert [line["target"] for line in lines] == ["echo"] * 3 + ["other"]
    assert allowances.pending() == [allowances.of("token 1")]


def test_once_a_clients_allowance_refilled_one_line_tells_what_was_counted(log: AuditLog, tmp_path: Path) -> None:
    clock = Clock()
    size = line_size(tmp_path)
    allowances = Allowances(4 * size, size, agent="serve", keys="[serve] audit_client_max", clock=clock)
    for _ in range(10):
        record(log, "a", allowances.of("token 1"))
    clock.now += 1.0  # one line's worth: not enough for the telling line and the line
    record(log, "a", allowances.of("token 1"))
    clock.now += 4.0  # full again
    record(log, "a", allowances.of("token 1"), target="after")
    lines = lines_of(tmp_path / "audit.jsonl")
    assert [line["operation"] for line in lines] == ["call-tool"] * 4 + [BUDGET_OPERATION, "call-tool"]
    told = lines[4]
    assert (told["agent"], told["target"], told["lines_not_written"]) == ("serve", "token 1", 7)
    assert told["bytes_not_written"] == 7 * size and "refilled at" in told["reason"]
    assert lines[5]["target"] == "after" and not allowances.pending()


def test_a_served_run_draws_from_its_clients_allowance_too(log: AuditLog, tmp_path: Path) -> None:
    size = line_size(tmp_path)
    allowances = Allowances(5 * size, 1, agent="serve", keys="[serve] audit_client_max", clock=Clock())
    client = allowances.of("token 1")
    for _ in range(4):  # each call a run of its own, each within its own budget
        run = run_budget("a", 3 * size, "[host] audit_run_max", parent=client)
        record(log, "a", run)
        record(log, "a", run)
        log.end(run)
    assert len(lines_of(tmp_path / "audit.jsonl")) == 5
    assert client.refused is not None and client.refused.lines == 3


def test_what_a_client_counted_is_told_when_the_server_stops(log: AuditLog, tmp_path: Path) -> None:
    size = line_size(tmp_path)
    allowances = Allowances(size, 1, agent="serve", keys="[serve] audit_client_max", clock=Clock())
    for _ in range(3):
        record(log, "a", allowances.of("address 10.0.0.5"))
    log.tell(allowances.pending())
    log.tell(allowances.pending())  # told once
    lines = lines_of(tmp_path / "audit.jsonl")
    assert [(line["operation"], line.get("lines_not_written")) for line in lines] == [
        ("call-tool", None),
        (BUDGET_OPERATION, 2),
    ]


def test_clients_whose_allowance_is_full_again_are_forgotten_but_not_while_a_call_holds_one() -> None:
    clock = Clock()
    allowances = Allowances(100, 10, agent="serve", keys="[serve] audit_client_max", clock=clock)
    with allowances.held("busy") as busy:
        busy.spend(100)
        spent = allowances.of("spent")
        spent.spend(100)
        for n in range(3 * SWEEP_AT):
            allowances.of(f"client {n}")
        assert len(allowances) <= 2 * SWEEP_AT
        assert allowances.of("busy") is busy and allowances.of("spent") is spent
        clock.now += 10.0  # both full again; only the one no call holds may go
        for n in range(3 * SWEEP_AT, 6 * SWEEP_AT):
            allowances.of(f"client {n}")
        assert allowances.of("busy") is busy and allowances.of("spent") is not spent


def test_a_budget_refills_up_to_its_capacity_and_a_run_budget_never_does() -> None:
    clock = Clock()
    bucket = AuditBudget(100, agent="serve", reason="r", refill=10, clock=clock)
    run = AuditBudget(100, agent="a", reason="r", clock=clock)
    assert bucket.spend(100) is None and run.spend(100) is None
    assert bucket.spend(1) is bucket and run.spend(1) is run
    clock.now += 1000.0
    assert bucket.available() == 100 and run.available() == 0
