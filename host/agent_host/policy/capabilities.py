"""Capabilities: what a tool needs, so an agent's configuration can grant it, refuse it or ask first.

The six capabilities: `read_only`, `network`, `workspace_write`, `process_execute`,
`external_side_effect`, `agent_delegate`. A call always needs at least one.

This module imports only `config` (the capability names), `globs` and `model`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from agent_host.config import CAPABILITIES as CAPABILITIES
from agent_host.model import ToolSpec
from agent_host.policy import globs

_HINTS: Final = {"readOnlyHint": "read_only", "destructiveHint": "workspace_write", "openWorldHint": "network"}


def needed(spec: ToolSpec, configured: Mapping[str, tuple[str, ...]]) -> frozenset[str]:
    """The capabilities a call of `spec` needs, by the first rule that applies.

    1. the tooling's config (`configured`), `capabilities = { "GLOB" = ["network", ...] }`: the first
       glob (in file order) matching the tool's name (a name with a dot segment matches none);
    2. what the tool declares: a Python tool's `capabilities()`, a mock tool's `capabilities`;
    3. an MCP tool's annotations, counting only hints that are explicitly true: `readOnlyHint` →
       `read_only`, `destructiveHint` → `workspace_write`, `openWorldHint` → `network`;
    4. otherwise (no rule, or rules that yield nothing): `external_side_effect`.
    """
    for glob, capabilities in configured.items():
        if globs.matches(spec.name, glob):
            return frozenset(capabilities) or frozenset({"external_side_effect"})
    if spec.capabilities is not None:
        return spec.capabilities or frozenset({"external_side_effect"})
    hinted = frozenset(cap for hint, cap in _HINTS.items() if (spec.annotations or {}).get(hint) is True)
    return hinted or frozenset({"external_side_effect"})
