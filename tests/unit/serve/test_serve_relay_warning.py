"""A proxied tooling whose changes cannot be watched is a warning of `agent-host serve`.

With `[serve] toolings`, the relay subscribes to each tooling's tool and resource lists; when that
fails (its server cannot start, say), the clients will not hear of changes: the host logs
`changes of tooling NAME are not relayed: ...` at WARNING, which the command line shows as
`agent-host: warning: ...`.
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio.to_thread
import pytest

from agent_host import Host, parse_config
from agent_host.cli import logs
from agent_host.serve.catalog import build_catalog
from tests.support.log_records import Records

pytestmark = pytest.mark.anyio

BROKEN = '[tooling.broken]\ncommand = "/nonexistent/server"\n[serve]\ntoolings = ["broken"]\n'
"""A proxied tooling whose server cannot start."""


async def test_a_tooling_whose_changes_cannot_be_relayed_is_a_warning(tmp_path: Path) -> None:
    config = parse_config(BROKEN, tmp_path / "agent-host.toml", {})
    with Records.on("agent_host") as records, Host(config) as host:
        catalog = build_catalog(host, config)
        async with catalog.running():
            record = await anyio.to_thread.run_sync(records.wait_for, "changes of tooling broken are not relayed", 60)
    assert record.levelno == logging.WARNING, record
    shown = logs._Formatter(tracebacks=False).format(record)
    assert shown.startswith("agent-host: warning: changes of tooling broken are not relayed: unavailable: "), shown
