"""The configuration a test's `toolings` argument stands for: tables validated like the TOML file.

A dict is a `[tooling.NAME]` table (any kind: `{"kind": "mock", "tools": [...]}`, a stdio or HTTP
MCP server...): it is written as TOML (`tomli-w`) and read back by `parse_config`, so it is checked,
`${VAR}`-expanded and path-resolved exactly as the file would be, relative paths against `base`. An
MCP SDK server object (`MCPServer`, low-level `Server`) becomes a `MemoryToolingConfig`: served in
this process, no subprocess. Anything else raises `TypeError` naming the tooling. The MCP SDK is
imported only when a value is not a dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import tomli_w

from agent_host.config import Config, MemoryToolingConfig, parse_config

SOURCE_NAME: Final = "agent_host.run(toolings=...)"
"""How messages name the configuration built from a test's arguments (as if it were a file in `base`)."""


def is_mcp_server(value: object) -> bool:
    """Whether `value` is an MCP SDK server object (imports the SDK)."""
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    return isinstance(value, MCPServer | Server)


def config_for(
    toolings: Mapping[str, object], *, audit_log: Path, base: Path, providers: Mapping[str, object] | None = None
) -> Config:
    """A configuration with `toolings` (see the module docstring), the `[provider.NAME]`-shaped dicts
    `providers`, and `[host] audit_log = audit_log`.

    Raises `ConfigError` naming every problem of the dict tables, `TypeError` for a value that is
    neither a dict nor an MCP server object.
    """
    tables: dict[str, Any] = {}
    servers: dict[str, object] = {}
    for name, value in toolings.items():
        if isinstance(value, Mapping):
            tables[name] = dict(value)
        elif is_mcp_server(value):
            servers[name] = value
        else:
            raise TypeError(
                f"toolings[{name!r}]: expected an MCP server object (MCPServer or Server) or a dict shaped like a "
                f"[tooling.NAME] table, got {type(value).__name__}"
            )
    text = tomli_w.dumps({"host": {"audit_log": str(audit_log)}, "tooling": tables, "provider": dict(providers or {})})
    config = parse_config(text, base / SOURCE_NAME)
    if not servers:
        return config
    memory = {
        name: MemoryToolingConfig(server=server).named(name, f"{SOURCE_NAME} [tooling.{name}]")
        for name, server in servers.items()
    }
    # Built in code, on purpose past validation: no table of a file may name a server object.
    return config.model_copy(update={"tooling": {**config.tooling, **memory}})
