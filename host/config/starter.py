"""The starter config file that `agent-host config init` writes.

The text is the package data file `starter.toml`: commented, valid, and granting tooling `demo`
to ad-hoc runs (`[host] allow = ["demo"]`). It ends with a commented example agent. When guest
folders were found, that example is replaced by one `[agents.NAME]` table per guest (written with
tomli-w, so the values are valid TOML), each granted tooling `demo`.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Final

import tomli_w

from host.config.defaults import DEFAULT_RUN_TIMEOUT

STARTER_FILE: Final = "starter.toml"
"""The package data file holding the starter text."""

_EXAMPLE_AGENT: Final = "# A named agent (create its guest with"
"""The first line of the commented example agent, which ends the starter text."""

_FOUND_AGENTS: Final = (
    "# The guest folders found here, as named agents: agent-host run --agent NAME (or all: agent-host run)\n"
)


def starter_template() -> str:
    """The starter text as shipped (with the commented example agent)."""
    return resources.files("host.config").joinpath(STARTER_FILE).read_text(encoding="utf-8")


def starter_config_text(guests: Sequence[tuple[str, str]] = ()) -> str:
    """A commented starter file.

    `guests` are (agent name, component path relative to the file) of the guest folders found
    beside it: each gets an `[agents.NAME]` table granted tooling `demo`. Without any, the agent
    table is an example in comments (so that `config check` never meets a missing folder).
    """
    text = starter_template()
    if not guests:
        return text
    settings = {"input": "hello", "toolings": ["demo"], "timeout": DEFAULT_RUN_TIMEOUT}
    agents = {"agents": {name: {"component": path, **settings} for name, path in guests}}
    return text[: text.index(_EXAMPLE_AGENT)] + _FOUND_AGENTS + tomli_w.dumps(agents)
