"""What a code agent's runner is told: the WASI environment variables of code mode.

A code agent (`[agents.NAME] code = "python"`) runs the prebuilt runner component, whose code mode
(`components/templates/code_mode.py.txt`) reads these: the language, the names of the granted
toolings (JSON list, sorted; the snippet's `toolings` module offers exactly those) and the bytes of
print output it keeps. They are set by the host after the agent's own `env`, so a table cannot
change them; they tell the snippet nothing it could not learn by calling `tooling.get`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Final

CODE_VARIABLE: Final = "AGENT_HOST_CODE"
"""The language of the snippet the run's input is ("python")."""

TOOLINGS_VARIABLE: Final = "AGENT_HOST_CODE_TOOLINGS"
"""The granted toolings' names, as a JSON list."""

STDOUT_VARIABLE: Final = "AGENT_HOST_CODE_STDOUT"
"""Bytes of the snippet's print output kept in its answer (the agent's `guest_output_max`)."""


def code_environment(language: str, granted: Iterable[str], stdout_bytes: int) -> Mapping[str, str]:
    """The variables a code agent's runner gets (see the module docstring)."""
    return {
        CODE_VARIABLE: language,
        TOOLINGS_VARIABLE: json.dumps(sorted(granted)),
        STDOUT_VARIABLE: str(stdout_bytes),
    }
