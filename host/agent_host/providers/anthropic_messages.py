"""Anthropic providers (`kind = "anthropic"`): the Messages API through the official `anthropic`
package's `AsyncAnthropic` (its SSE reading, its retries; nothing hand-rolled).

One client per provider, made with the table's `base_url`, `api_key` (else `PLACEHOLDER_KEY`),
`timeout`, `max_retries` and `headers`, its OpenTelemetry spans off (they may carry prompt text).
A stream hands out text deltas as they come and a `tool_use` block whole at its `content_block_stop`
(its `input_json_delta` fragments joined); the usage is `message_start`'s input (cache reads and
writes included) and `message_delta`'s output. Answers are read defensively (`protocol`) and
bounded (`providers.joining`). Failures go through `ERRORS`, this SDK's rows of the error table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anthropic
import anyio
import anyio.lowlevel
from anthropic.types import (
    Message,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
)

from agent_host._support import off_loop, tracing
from agent_host.config.providers import AnthropicProviderConfig
from agent_host.model import ChatDelta, ChatRequest, ChatResult, Usage
from agent_host.providers.anthropic_params import messages_params, stop_reason
from agent_host.providers.base import PLACEHOLDER_KEY, ChatStream, Provider, as_they_are, request_size
from agent_host.providers.capped_http import CappedClient, streaming
from agent_host.providers.checks import check_request, response_schema
from agent_host.providers.errors import ErrorMap, Failure
from agent_host.providers.estimates import estimated
from agent_host.providers.joining import Answer
from agent_host.providers.listing import MAX_MODELS, allowed_models
from agent_host.providers.shapes import count, expect, text

WIRE: Final = "Messages API"

ERRORS: Final[Mapping[type[BaseException], Failure]] = {
    anthropic.BadRequestError: Failure.REFUSED,
    anthropic.UnprocessableEntityError: Failure.REFUSED,
    anthropic.ContentTooLargeError: Failure.REFUSED,
    anthropic.RequestHeaderFieldsTooLargeError: Failure.REFUSED,
    anthropic.AuthenticationError: Failure.UNAUTHORIZED,
    anthropic.PermissionDeniedError: Failure.UNAUTHORIZED,
    anthropic.PaymentRequiredError: Failure.UNAUTHORIZED,
    anthropic.NotFoundError: Failure.NOT_FOUND,
    anthropic.RateLimitError: Failure.RATE_LIMITED,
    anthropic.RequestTimeoutError: Failure.SERVER,
    anthropic.ConflictError: Failure.SERVER,
    anthropic.ClientClosedRequestError: Failure.SERVER,
    anthropic.InternalServerError: Failure.SERVER,
    anthropic.APITimeoutError: Failure.TIMEOUT,
    anthropic.APIConnectionError: Failure.UNREACHABLE,
    anthropic.APIResponseValidationError: Failure.PROTOCOL,
    anthropic.APIStatusError: Failure.STATUS,
    anthropic.APIError: Failure.REPORTED,
    anthropic.AnthropicError: Failure.PROTOCOL,
}
"""The `anthropic` package's exceptions -> failures (the first class along an exception's MRO wins):
a status error of another status by its hundreds, an `error` event inside a stream (an
`APIStatusError` of status 200) by its `type`."""


@dataclass
class _Reading:
    """What a stream has said besides its pieces."""

    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop: str | None = None
    tool_blocks: set[int] = field(default_factory=set)
    """The indexes of its `tool_use` blocks."""


def _input_tokens(usage: Any) -> int | None:
    """The input tokens of `usage`: its `input_tokens` plus the cache's reads and writes."""
    tokens = count(getattr(usage, "input_tokens", None))
    if tokens is None:
        return None
    cached = (
        count(getattr(usage, key, None)) or 0 for key in ("cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return tokens + sum(cached)


class _HttpClient(CappedClient, anthropic.DefaultAsyncHttpxClient):
    """The SDK's own client (its timeouts, pool limits, redirects), its answers read within bounds."""


class AnthropicProvider(Provider):
    """The Anthropic Messages API."""

    kind = "anthropic"
    _config: AnthropicProviderConfig

    def __init__(self, config: AnthropicProviderConfig) -> None:
        super().__init__(config)
        self._errors = ErrorMap(config, ERRORS, WIRE)
        self._client = anthropic.AsyncAnthropic(
            api_key=config.api_key or PLACEHOLDER_KEY,
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=config.max_retries,
            default_headers=dict(config.headers),
            http_client=_HttpClient(),
            open_telemetry=False,
        )

    async def models(self) -> list[str]:
        """The server's `/v1/models` (its pages followed), at most `MAX_MODELS`, filtered by the `models` globs."""
        found: list[str] = []
        with self._errors.mapped(None), anyio.fail_after(self._config.timeout):
            async for item in self._client.models.list():
                found.append(text(item.id, self.where(), "a model's id") or "")
                if len(found) >= MAX_MODELS:
                    break
        return allowed_models(self._config, found)

    async def chat(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatResult:
        params = await off_loop.run(self._params, request, model, max_tokens, size=request_size(request))
        with self._errors.mapped(model), anyio.fail_after(self._config.timeout):
            message = await self._client.messages.create(**params, extra_headers=tracing.headers())
        return self._result(message, request, model)

    async def stream(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatStream:
        params = await off_loop.run(self._params, request, model, max_tokens, size=request_size(request))
        with self._errors.mapped(model), anyio.fail_after(self._config.timeout), streaming():
            upstream = await self._client.messages.create(**params, extra_headers=tracing.headers(), stream=True)
        try:
            answer, reading = Answer(self.where()), _Reading(model)
            while True:
                # Each piece within `timeout` of the last (a server sending only keep-alives is cut), and
                # the loop served between two (chunks already buffered would not yield to it).
                with self._errors.mapped(model), anyio.fail_after(self._config.timeout):
                    event = await anext(upstream, None)
                await anyio.lowlevel.checkpoint()
                if event is None:
                    break
                for delta in self._read(event, answer, reading):
                    yield delta
            for call in answer.open_calls():
                yield ChatDelta(tool_call=call)
            if reading.input_tokens is not None and reading.output_tokens is not None:
                usage = Usage(reading.input_tokens, reading.output_tokens)
            else:
                usage = estimated(request, answer.chars)
            yield answer.result(reading.model, stop_reason(reading.stop), usage)
        finally:
            with anyio.CancelScope(shield=True):
                await upstream.close()

    async def aclose(self) -> None:
        """Close the client's connections; idempotent."""
        await self._client.close()

    def _params(self, request: ChatRequest, model: str, max_tokens: int | None) -> dict[str, Any]:
        check_request(request, self.where(), max_tokens)
        schema = response_schema(request, self.where())
        bound = max_tokens if max_tokens is not None else self._config.max_tokens
        return as_they_are(messages_params(request, model=model, max_tokens=bound, schema=schema, where=self.where()))

    def _result(self, message: Message, request: ChatRequest, model: str) -> ChatResult:
        """The whole answer of a blocking chat: its text blocks joined, its `tool_use` blocks as calls."""
        where = self.where()
        answer = Answer(where)
        for index, block in enumerate(expect(message.content, list, where, "`content`")):
            kind = getattr(block, "type", None)
            if kind == "text":
                answer.text(text(getattr(block, "text", None), where, "a text block") or "")
            elif kind == "tool_use":
                arguments = json.dumps(expect(getattr(block, "input", None), dict, where, "a tool's input"))
                id, name = getattr(block, "id", None), getattr(block, "name", None)
                answer.call(
                    index,
                    id=text(id, where, "a tool's id"),
                    name=text(name, where, "a tool's name"),
                    arguments=arguments,
                )
        input_tokens, output_tokens = _input_tokens(message.usage), count(getattr(message.usage, "output_tokens", None))
        if input_tokens is not None and output_tokens is not None:
            usage = Usage(input_tokens, output_tokens)
        else:
            usage = estimated(request, answer.chars)
        answered = text(message.model, where, "the model") or model
        return answer.result(answered, stop_reason(text(message.stop_reason, where, "stop_reason")), usage)

    def _read(self, event: object, answer: Answer, reading: _Reading) -> list[ChatDelta]:
        """The pieces one event hands out, joining what it adds to `answer` and noting the rest."""
        where = self.where()
        if isinstance(event, RawMessageStartEvent):
            reading.model = text(event.message.model, where, "the model") or reading.model
            reading.input_tokens = _input_tokens(event.message.usage)
            reading.output_tokens = count(getattr(event.message.usage, "output_tokens", None))
        elif isinstance(event, RawContentBlockStartEvent):
            block, index = event.content_block, expect(event.index, int, where, "a block's index")
            if block.type == "text" and block.text:
                answer.text(block.text)
                return [ChatDelta(content=block.text)]
            if block.type == "tool_use":
                reading.tool_blocks.add(index)
                given = expect(block.input, dict, where, "a tool's input")
                answer.call(
                    index, id=text(block.id, where, "a tool's id"), name=text(block.name, where, "a tool's name")
                )
                answer.call(index, arguments=json.dumps(given) if given else "")
        elif isinstance(event, RawContentBlockDeltaEvent):
            delta, index = event.delta, expect(event.index, int, where, "a block's index")
            if delta.type == "text_delta":
                piece = text(delta.text, where, "a text delta") or ""
                if piece:
                    answer.text(piece)
                    return [ChatDelta(content=piece)]
            elif delta.type == "input_json_delta" and index in reading.tool_blocks:
                answer.call(index, arguments=text(delta.partial_json, where, "a tool's input") or "")
        elif isinstance(event, RawContentBlockStopEvent):
            index = expect(event.index, int, where, "a block's index")
            if index in reading.tool_blocks and answer.has_call(index):
                return [ChatDelta(tool_call=answer.end_call(index))]
        elif isinstance(event, RawMessageDeltaEvent):
            reading.stop = text(event.delta.stop_reason, where, "stop_reason") or reading.stop
            output_tokens, input_tokens = count(getattr(event.usage, "output_tokens", None)), _input_tokens(event.usage)
            reading.output_tokens = output_tokens if output_tokens is not None else reading.output_tokens
            reading.input_tokens = input_tokens if input_tokens is not None else reading.input_tokens
        return []
