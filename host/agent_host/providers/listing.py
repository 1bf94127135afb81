"""The models a provider lists: the server's list, bounded, filtered by the table's `models` globs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from agent_host.config.providers import ProviderConfig

MAX_MODELS: Final = 10_000
"""Models read from a server's list at most (its pages are followed until then)."""


def allowed_models(config: ProviderConfig, listed: Iterable[str]) -> list[str]:
    """The models of `listed` the provider of `config` may be asked for, sorted, each once."""
    return sorted({model for model in listed if model and config.allows(model)})
