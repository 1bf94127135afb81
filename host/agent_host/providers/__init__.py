"""Providers: the named, configured sources of model answers a guest can reach (`[provider.NAME]`).

Kinds: `openai` (the Chat Completions wire protocol, `openai_chat`), `anthropic` (the Messages API,
`anthropic_messages`), `mock` (scripted turns), each a module extending `base.Provider`, imported
only when a provider of that kind is created (`providerset.KINDS`): importing this package imports
neither SDK. The request mapping of each wire is pure data (`openai_params`, `anthropic_params`);
failures become `ToolingError`s through one table (`errors`); answers are joined within bounds
(`joining`). Grants, budgets, streams into the inbox and audit lines are the session's.
"""

from agent_host.providers.base import ChatStream as ChatStream
from agent_host.providers.base import Provider as Provider
from agent_host.providers.base import resolve_model as resolve_model
from agent_host.providers.providerset import KINDS as KINDS
from agent_host.providers.providerset import ProviderSet as ProviderSet

__all__ = ("KINDS", "ChatStream", "Provider", "ProviderSet", "resolve_model")
