"""`ProviderSet`: the configured providers of one host process, and the table of provider kinds.

Providers are created on first use (`get`), on the bridge loop, and shared by every guest of the
process; the network kinds run on a loop of the set's own (`own_loop`). `aclose` closes every one
created, concurrently, then that loop; later `get`s answer `unavailable`.
Kinds are registered in `KINDS`, each by a factory that imports its module when first called: a
process that uses no OpenAI or Anthropic provider never imports their SDKs. A kind whose SDK is
missing fails at load (`config.providers`); should it go missing after, `get` answers `unavailable`
with the same one line naming the extra to install.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import anyio

from agent_host.config.providers import (
    EXTRAS,
    AnthropicProviderConfig,
    MockProviderConfig,
    OpenAIProviderConfig,
    ProviderConfig,
    install_hint,
)
from agent_host.errors import ErrorCode, ToolingError
from agent_host.providers.base import Provider
from agent_host.providers.own_loop import OnOwnLoop, ProviderLoop

NETWORK_KINDS: Final = frozenset({"openai", "anthropic"})
"""The kinds run on the providers' own loop (`own_loop`); a mock answers on the caller's."""


def _openai(config: OpenAIProviderConfig) -> Provider:
    from agent_host.providers.openai_chat import OpenAIProvider  # lazily: imports the openai SDK

    return OpenAIProvider(config)


def _anthropic(config: AnthropicProviderConfig) -> Provider:
    from agent_host.providers.anthropic_messages import AnthropicProvider  # lazily: imports the anthropic SDK

    return AnthropicProvider(config)


def _mock(config: MockProviderConfig) -> Provider:
    from agent_host.providers.mock import MockProvider

    return MockProvider(config)


KINDS: Final[Mapping[str, Callable[[Any], Provider]]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "mock": _mock,
}
"""Provider kind (`kind = ...` in the config) -> factory. Each factory takes its own config model; the
config's discriminated union guarantees that `kind` selects that model, hence `Any` here."""


class ProviderSet:
    """The configured providers of one host process. Use only on the bridge loop."""

    def __init__(self, configs: Mapping[str, ProviderConfig]) -> None:
        self._configs = dict(configs)
        self._providers: dict[str, Provider] = {}
        self._closed = False
        self._own_loop = ProviderLoop()
        """Where the network providers run (`own_loop`): never on the loop that serves everyone."""

    @property
    def names(self) -> list[str]:
        """The configured providers' names, sorted."""
        return sorted(self._configs)

    def config(self, name: str) -> ProviderConfig:
        """The configuration of provider `name`; `not-found` naming the configured ones otherwise."""
        try:
            return self._configs[name]
        except KeyError:
            raise ToolingError(
                ErrorCode.NOT_FOUND,
                f"no provider named {name!r} is configured; configured: {', '.join(self.names) or '(none)'}",
            ) from None

    def get(self, name: str) -> Provider:
        """The provider called `name`, created on first use. Raises `not-found` for a name not
        configured, `unavailable` once the set is closed or when the kind's SDK is missing."""
        if self._closed:
            raise ToolingError(ErrorCode.UNAVAILABLE, f"provider {name!r} is closed: the host is shutting down")
        provider = self._providers.get(name)
        if provider is None:
            config = self.config(name)
            try:
                provider = KINDS[config.kind](config)
                if config.kind in NETWORK_KINDS:
                    provider = OnOwnLoop(provider, self._own_loop)
            except ModuleNotFoundError as exc:
                if exc.name != EXTRAS.get(config.kind):
                    raise
                raise ToolingError(ErrorCode.UNAVAILABLE, f"provider {name!r}: {install_hint(config.kind)}") from None
            self._providers[name] = provider
        return provider

    async def aclose(self) -> None:
        """Close every provider created so far, concurrently; idempotent."""
        self._closed = True
        providers, self._providers = list(self._providers.values()), {}
        try:
            async with anyio.create_task_group() as group:
                for provider in providers:
                    group.start_soon(provider.aclose)
        finally:
            self._own_loop.stop()
