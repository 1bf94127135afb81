"""`agent-host serve` offering tests/servers/observed.py (tooling `t` of `OBSERVED_TOML`), run in
this process: the `[serve]` table that re-exports it, and `run_served` to drive its catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import anyio

from agent_host import Host
from agent_host.config import parse_config
from agent_host.serve.catalog import build_catalog

SERVE: Final = (
    '[serve]\ntoolings = ["t"]\n'
    'grants = { tools = { t = ["set"] }, resources = { t = ["obs://*"] }, capabilities = ["external_side_effect"] }\n'
)
"""A `[serve]` table offering tooling `t`: its tool `set`, and every `obs://` resource (the grants
allow invented URIs too)."""
WAIT: Final = 30.0
"""Seconds to wait for the server to reach a state."""


def run_served(config_text: str, tmp_path: Path, body: Any) -> Any:
    """Run `await body(catalog, host)` on a new event loop while the serve catalog of `config_text`
    is running; its result."""
    config = parse_config(config_text, tmp_path / "agent-host.toml")
    with Host(config) as host:
        catalog = build_catalog(host, config)

        async def main() -> Any:
            async with catalog.running():
                return await body(catalog, host)

        return anyio.run(main)
