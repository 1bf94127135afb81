"""The provider interface every kind implements (`Provider`), and `resolve_model`.

A provider lives on the bridge loop: its coroutines run there. It raises `ToolingError` for every
expected failure (the error table of `providers.errors`); any other exception is a host bug. The
caller resolves the model (`resolve_model`: the request's or the default, within the provider's
`models` globs) and the `max_tokens` sent upstream (the request's, lowered by the agent's budget)
before calling; grants and budgets are the caller's. `chat` is bounded by the provider's `timeout`
as a whole; a stream by `timeout` until its first piece, then between two pieces. `hidden` gives
an answer with the provider's secrets (its key, its header values) replaced wherever the server
wrote them verbatim: the caller passes every answer and piece through it.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import AsyncGenerator
from typing import Any, Final, overload

from agent_host.config.providers import ProviderConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatDelta, ChatRequest, ChatResult, ToolCall
from agent_host.providers.secrets import redacted, secrets_of

PLACEHOLDER_KEY: Final = "agent-host-no-key"
"""The key a network provider sends when its table has no `api_key` (a local server needs none; the
SDKs would otherwise read their own variables, OPENAI_API_KEY or ANTHROPIC_API_KEY, or files)."""

AS_THEY_ARE: Final = ("messages", "tools", "system")
"""The request's parts sent as they are (`as_they_are`): the conversation, the tools offered, the system prompt."""


def as_they_are(params: dict[str, Any]) -> dict[str, Any]:
    """`params` (an SDK's `create` arguments, made by `openai_params` or `anthropic_params` as the
    wire writes them) with `AS_THEY_ARE` moved to `extra_body`: sent as they are, without the SDK's
    own walk over every item, which runs on the host's loop at ~0.1 ms an item (10,000 short
    messages held the loop 1.5 s; measured). `messages` stays, empty, as the SDKs require it."""
    moved = {key: params.pop(key) for key in AS_THEY_ARE if key in params}
    return {**params, "messages": [], "extra_body": moved}


def request_size(request: ChatRequest) -> int:
    """About the characters of `request`'s messages and tools (for `off_loop.run`: mapping a large
    request to the wire's parameters is done off the loop)."""
    return 64 * (len(request.messages) + len(request.tools)) + sum(len(m.content or "") for m in request.messages)


ChatStream = AsyncGenerator[ChatDelta | ChatResult, None]
"""A streamed answer: `ChatDelta`s in order (some text, or one whole tool call), then exactly one
`ChatResult` (the whole answer, the pieces joined, and its usage), then nothing."""


def resolve_model(config: ProviderConfig, requested: str | None) -> str:
    """The model a request for `requested` (None: the default) goes to at the provider of `config`.

    Raises `ToolingError(not-found)` when neither the request nor the table names one, and
    `ToolingError(denied)`, naming the `models` key, for a model outside its globs.
    """
    model = requested if requested is not None else config.model
    if model is None:
        raise ToolingError(
            ErrorCode.NOT_FOUND,
            f"provider {config.name!r} has no default model: name one in the request, "
            f"or set `model` in {config.origin}",
        )
    if not config.allows(model):
        allowed = ", ".join(repr(glob) for glob in config.models or ())
        raise ToolingError(
            ErrorCode.DENIED,
            f"provider {config.name!r} may not be asked for model {model!r}: it matches none of `models` "
            f"({allowed}) in {config.origin}",
        )
    return model


class Provider(abc.ABC):
    """A named, configured source of model answers. Use it on the bridge loop only."""

    kind: str
    """"openai", "anthropic" or "mock"."""

    def __init__(self, config: ProviderConfig) -> None:
        self._config = config
        self._name = config.name
        self._secrets = secrets_of(config)

    @property
    def name(self) -> str:
        """The NAME of its `[provider.NAME]` table."""
        return self._name

    @property
    def config(self) -> ProviderConfig:
        return self._config

    @overload
    def hidden(self, answer: ChatDelta) -> ChatDelta: ...
    @overload
    def hidden(self, answer: ChatResult) -> ChatResult: ...
    def hidden(self, answer: ChatDelta | ChatResult) -> ChatDelta | ChatResult:
        """`answer` with this provider's secrets replaced by `[hidden]` in its text, its tool calls
        and its model's name (linear in its size; the same object when there is nothing to hide)."""
        if not self._secrets:
            return answer
        secrets = self._secrets

        def clean(text: str | None) -> str | None:
            return redacted(text, secrets) if text else text

        def call(found: ToolCall) -> ToolCall:
            return ToolCall(clean(found.id) or "", clean(found.name) or "", clean(found.arguments) or "")

        if isinstance(answer, ChatDelta):
            return ChatDelta(clean(answer.content), call(answer.tool_call) if answer.tool_call is not None else None)
        calls = tuple(call(found) for found in answer.tool_calls)
        return dataclasses.replace(
            answer, model=clean(answer.model) or "", content=clean(answer.content), tool_calls=calls
        )

    def where(self) -> str:
        """How messages name it: `provider 'llm'`."""
        return f"provider {self._name!r}"

    @abc.abstractmethod
    async def models(self) -> list[str]:
        """The models it may be asked for: the server's list (`/models`) filtered by the `models`
        globs, sorted, each once. Raises `ToolingError` as `chat` does."""

    @abc.abstractmethod
    async def chat(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatResult:
        """The whole answer to `request`, from `model` (resolved: `resolve_model`), writing at most
        `max_tokens` tokens (None: the provider's own bound). Raises `ToolingError`: the error table's
        codes, `invalid-arguments` for a request it cannot send, `limit-exceeded` for an answer past
        the bounds of `providers.joining`, `timeout` past the provider's `timeout`."""

    @abc.abstractmethod
    def stream(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatStream:
        """The answer to `request` as it is written (see `ChatStream`); nothing is sent before the
        first `__anext__`. Closing the iterator (`aclose`), or cancelling the task reading it, closes
        the upstream stream at once (the server sees the client go). Its `__anext__` raises
        `ToolingError` as `chat` does; after an error, the iterator is done."""

    async def aclose(self) -> None:
        """Release its connections; idempotent. Streams still open fail afterwards."""
        return None
