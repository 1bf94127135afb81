"""The audit lines of `agent-host serve`'s calls are bounded and charged to each call's client.

A client's `serve-call` lines (refused calls with huge tool names too) are cut like every line and
drawn from its allowance (`[serve] audit_client_max`); past it they are counted, not written, while
another client's lines still are; when the server stops, one line tells what was counted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host, parse_config
from agent_host.serve.agents import AgentCalls
from agent_host.serve.catalog import Catalog
from agent_host.serve.proxy import ToolingProxy
from agent_host.serve.turns import Turns
from agent_host.session.audit_line import MAX_FIELD_CHARS, MAX_LINE_BYTES
from agent_host.session.audit_log import BUDGET_OPERATION, AuditLog

pytestmark = pytest.mark.anyio

CALLS = 20
"""Calls the first client makes, each of a tool that is not offered."""
READS = 50
"""Rounds of listing and reading by one client (two lines each: far past its 4 KiB allowance)."""


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_one_clients_refused_calls_are_counted_past_its_allowance_and_others_still_written(
    tmp_path: Path,
) -> None:
    config = parse_config(
        '[serve]\naudit_client_max = "4KiB"\naudit_client_rate = 1\n', tmp_path / "agent-host.toml", {}
    )
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    with Host(config, audit=log) as host:
        catalog = Catalog(AgentCalls(host, []), None, Turns(1, 1), config.serve, log)
        async with catalog.running():
            huge = "\x01" * 1_000_000
            answers = [await catalog.call(huge, {}, client="token 1")]
            answers += [await catalog.call("x" * 1000, {}, client="token 1") for _ in range(CALLS - 1)]
            answers.append(await catalog.call("nothing", {}, client="token 2"))
    assert {answer.code for answer in answers} == {"not-found"}
    assert all(len(line) <= MAX_LINE_BYTES for line in path.read_bytes().splitlines())
    lines = lines_of(path)
    calls = [line for line in lines if line["operation"] == "serve-call"]
    told = [line for line in lines if line["operation"] == BUDGET_OPERATION]
    assert calls[-1]["target"] == "nothing"  # the other client's line is written
    assert {(line["agent"], line["target"]) for line in told} == {("serve", "token 1")}
    assert len(calls) - 1 + sum(line["lines_not_written"] for line in told) == CALLS
    assert all("audit_client_max, audit_client_rate in " in line["reason"] for line in told)
    huge_line = lines[0]  # over the allowance (cut, still 49 KB escaped): counted, told before the next line
    assert (huge_line["operation"], huge_line["lines_not_written"]) == (BUDGET_OPERATION, 1)
    assert MAX_FIELD_CHARS < huge_line["bytes_not_written"] <= MAX_LINE_BYTES  # counted as it would be written, cut
    assert path.stat().st_size < 4096 + 2048  # the allowance, the other's line and the telling line


async def test_listing_and_reading_through_the_proxy_are_charged_to_the_clients_allowance(tmp_path: Path) -> None:
    """A client listing the offered tools and reading a resource again and again: the audit lines of
    those operations upstream (`get`, `list-tools`, `read-resource`) come out of its allowance, so it
    cannot rotate away another client's lines with many small ones."""
    text = (
        '[tooling.mock]\nkind = "mock"\n[[tooling.mock.tools]]\nname = "echo"\nresults = [{ text = "hi" }]\n'
        '[[tooling.mock.resources]]\nuri = "mem://a"\ntext = "a"\n'
        '[serve]\ntoolings = ["mock"]\naudit_client_max = "4KiB"\naudit_client_rate = 1\n'
    )
    config = parse_config(text, tmp_path / "agent-host.toml", {})
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    with Host(config, audit=log) as host:
        proxy = ToolingProxy(host, ["mock"], host.policy("serve", None, ["mock"]))
        catalog = Catalog(AgentCalls(host, []), proxy, Turns(1, 1), config.serve, log)
        async with catalog.running():
            for _ in range(READS):
                await catalog.tools("token 1")
                await proxy.read("mem://a", catalog.allowances.of("token 1"))
            await proxy.read("mem://a", catalog.allowances.of("token 2"))
    lines = lines_of(path)
    told = [line for line in lines if line["operation"] == BUDGET_OPERATION]
    assert {(line["agent"], line["target"]) for line in told} == {("serve", "token 1")}
    # Each round writes two lines (`get`, `read-resource`; the listing is kept): ~370 bytes, so 4 KiB
    # hold ~22 lines of the 100 and most are counted (a margin of ~30 lines against any refill).
    assert sum(line["lines_not_written"] for line in told) > READS
    assert [line["operation"] for line in lines[-3:]] == ["get", "read-resource", BUDGET_OPERATION]  # token 2's
