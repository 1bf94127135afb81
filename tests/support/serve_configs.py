"""The configuration most `agent-host serve` tests serve, and the probe input that waits in it.

`CONFIG` offers agent `idle` (the probe guest's idle part: input = milliseconds to wait in its inbox,
then "idle done"), agent `probe` (the probe guest, granted mock tooling `mock` whose tool `echo`
answers "hello") and agent `lonely` (no component: not served), at most 2 guests at once.
`configured` writes it to a file with more keys and an audit log; `WAITING` is a probe input that
makes one audited call and then waits ten minutes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from tests.support import probe_steps as s
from tests.support.component import PROBE, REPO

IDLE: Final = REPO / "tests" / "guests" / "probe"  # its idle part: input = milliseconds to wait
CONFIG: Final = f"""
[tooling.mock]
kind = "mock"
[[tooling.mock.tools]]
name = "echo"
repeat_last = true
results = [{{ text = "hello" }}]

[agents.idle]
component = "{IDLE}"
description = "Waits N milliseconds in its inbox, then answers."

[agents.probe]
component = "{PROBE}"
toolings = ["mock"]

[agents.lonely]
input = "no component: not served"

[serve]
max_concurrent = 2
"""

WAITING: Final = {"steps": [s.get("mock", as_="t"), s.call_blocking("t", "echo"), s.recv(600_000)]}
"""A probe that makes one audited call, then waits ten minutes in its inbox (in the host)."""


def configured(tmp_path: Path, serve: str = "", host: str = "") -> tuple[Path, Path]:
    """A config file of `CONFIG` with more `[serve]` keys and `[host]` keys, auditing to a file."""
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG + serve + f'\n[host]\naudit_log = "{audit}"\n' + host)
    return config, audit
