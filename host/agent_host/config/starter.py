"""The starter config file that `agent-host config init` writes.

The text is the package data file `starter.toml`: commented, valid, and granting tooling `demo`
to ad-hoc runs (`[host] allow = ["demo"]`). It ends with a commented example agent. When guest
folders were found, that example is replaced by one `[agents.NAME]` table per guest (written with
tomli-w, so the values are valid TOML), each granted tooling `demo`. A guest that asks for a
tooling the starter does not define (`unmet`) gets its table in comments, after a line naming what
to add: every agent the file defines can run.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Final

import tomli_w

from agent_host.config.defaults import DEFAULT_RUN_TIMEOUT

STARTER_FILE: Final = "starter.toml"
"""The package data file holding the starter text."""

_EXAMPLE_AGENT: Final = "# A named agent (create its guest with"
"""The first line of the commented example agent, which ends the starter text."""

_FOUND_AGENTS: Final = (
    "# The guest folders found here, as named agents: agent-host run --agent NAME (or all: agent-host run)\n"
)


def starter_template() -> str:
    """The starter text as shipped (with the commented example agent)."""
    return resources.files("agent_host.config").joinpath(STARTER_FILE).read_text(encoding="utf-8")


def starter_toolings() -> frozenset[str]:
    """The names of the toolings the starter file defines."""
    tables = tomllib.loads(starter_template()).get("tooling", {})
    return frozenset(tables)


def starter_config_text(
    guests: Sequence[tuple[str, str]] = (), unmet: Mapping[str, Sequence[str]] | None = None
) -> str:
    """A commented starter file.

    `guests` are (agent name, component path relative to the file) of the guest folders found
    beside it: each gets an `[agents.NAME]` table granted tooling `demo`, in comments when `unmet`
    names toolings its guest asks for that the file does not define. Without any guest, the agent
    table is an example in comments (so that `config check` never meets a missing folder).
    """
    text = starter_template()
    if not guests:
        return text
    settings = {"input": "hello", "toolings": ["demo"], "timeout": DEFAULT_RUN_TIMEOUT}
    parts = [text[: text.index(_EXAMPLE_AGENT)], _FOUND_AGENTS]
    for index, (name, path) in enumerate(guests):
        parts.append("\n" if index else "")
        table = tomli_w.dumps({"agents": {name: {"component": path, **settings}}})
        missing = (unmet or {}).get(name, ())
        if missing:
            tables = ", ".join(f"[tooling.{tooling}]" for tooling in missing)
            parts.append(
                f"# Agent {name} asks for {_toolings(missing)} that this file does not define: add {tables},\n"
            )
            parts.append(f"# grant {'them' if len(missing) > 1 else 'it'} in toolings, then uncomment the table.\n")
            table = "".join(f"# {line}\n" if line else "#\n" for line in table.splitlines())
        parts.append(table)
    return "".join(parts)


def _toolings(names: Sequence[str]) -> str:
    quoted = ", ".join(repr(name) for name in names)
    return f"tooling {quoted}" if len(names) == 1 else f"toolings {quoted}"
