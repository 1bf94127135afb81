"""OpenAI-compatible providers (`kind = "openai"`): the Chat Completions wire protocol through the
official `openai` package's `AsyncOpenAI` (its SSE reading, its retries; nothing hand-rolled).

One client per provider, made with the table's `base_url`, `api_key` (else `PLACEHOLDER_KEY`),
`timeout`, `max_retries` and `headers`. A stream asks for `stream_options.include_usage`; text
pieces are handed out as they come, a tool call whole once its fragments (joined by `index`) end: at
the next call's first fragment or at the finish reason; the usage chunk ends it. Answers are read
defensively (`protocol` for a shape the protocol does not allow) and bounded (`providers.joining`).
Failures go through `ERRORS`, this SDK's rows of the error table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
import anyio.lowlevel
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from agent_host._support import off_loop, tracing
from agent_host.config.providers import OpenAIProviderConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatDelta, ChatRequest, ChatResult, Usage
from agent_host.providers.base import PLACEHOLDER_KEY, ChatStream, Provider, as_they_are, request_size
from agent_host.providers.capped_http import CappedClient, streaming
from agent_host.providers.checks import check_request, response_schema
from agent_host.providers.errors import ErrorMap, Failure
from agent_host.providers.estimates import estimated
from agent_host.providers.joining import Answer
from agent_host.providers.listing import MAX_MODELS, allowed_models
from agent_host.providers.openai_params import chat_params, finish_reason
from agent_host.providers.shapes import count, expect, text

WIRE: Final = "Chat Completions"

ERRORS: Final[Mapping[type[BaseException], Failure]] = {
    openai.BadRequestError: Failure.REFUSED,
    openai.UnprocessableEntityError: Failure.REFUSED,
    openai.AuthenticationError: Failure.UNAUTHORIZED,
    openai.PermissionDeniedError: Failure.UNAUTHORIZED,
    openai.NotFoundError: Failure.NOT_FOUND,
    openai.RateLimitError: Failure.RATE_LIMITED,
    openai.ConflictError: Failure.SERVER,
    openai.InternalServerError: Failure.SERVER,
    openai.APITimeoutError: Failure.TIMEOUT,
    openai.APIConnectionError: Failure.UNREACHABLE,
    openai.APIResponseValidationError: Failure.PROTOCOL,
    openai.APIStatusError: Failure.STATUS,
    openai.APIError: Failure.REPORTED,
    openai.OpenAIError: Failure.PROTOCOL,
}
"""The `openai` package's exceptions -> failures (the first class along an exception's MRO wins):
a status error of another status by its hundreds, an error inside a stream (`APIError` itself) by
its `type`."""


@dataclass
class _Reading:
    """What a stream has said besides its pieces."""

    model: str
    finish: str | None = None
    usage: Usage | None = None
    open_call: int | None = None
    """The key of the tool call whose fragments are arriving."""


class _HttpClient(CappedClient, openai.DefaultAsyncHttpxClient):
    """The SDK's own client (its timeouts, pool limits, redirects), its answers read within bounds."""


class OpenAIProvider(Provider):
    """A server speaking the Chat Completions wire protocol."""

    kind = "openai"
    _config: OpenAIProviderConfig

    def __init__(self, config: OpenAIProviderConfig) -> None:
        super().__init__(config)
        self._errors = ErrorMap(config, ERRORS, WIRE)
        self._client = openai.AsyncOpenAI(
            api_key=config.api_key or PLACEHOLDER_KEY,
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=config.max_retries,
            default_headers=dict(config.headers),
            http_client=_HttpClient(),
        )

    async def models(self) -> list[str]:
        """The server's `/models`, at most `MAX_MODELS`, filtered by the `models` globs."""
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
            completion = await self._client.chat.completions.create(**params, extra_headers=tracing.headers())
        return self._result(completion, request, model)

    async def stream(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatStream:
        params = await off_loop.run(self._params, request, model, max_tokens, size=request_size(request))
        with self._errors.mapped(model), anyio.fail_after(self._config.timeout), streaming():
            upstream = await self._client.chat.completions.create(
                **params, extra_headers=tracing.headers(), stream=True, stream_options={"include_usage": True}
            )
        try:
            answer, reading = Answer(self.where()), _Reading(model)
            while True:
                # Each piece within `timeout` of the last (a server sending only keep-alives is cut), and
                # the loop served between two (chunks already buffered would not yield to it).
                with self._errors.mapped(model), anyio.fail_after(self._config.timeout):
                    chunk = await anext(upstream, None)
                await anyio.lowlevel.checkpoint()
                if chunk is None:
                    break
                for delta in self._read(chunk, answer, reading):
                    yield delta
            for call in answer.open_calls():
                yield ChatDelta(tool_call=call)
            usage = reading.usage or estimated(request, answer.chars)
            yield answer.result(reading.model, finish_reason(reading.finish), usage)
        finally:
            with anyio.CancelScope(shield=True):
                await upstream.close()

    async def aclose(self) -> None:
        """Close the client's connections; idempotent."""
        await self._client.close()

    def _params(self, request: ChatRequest, model: str, max_tokens: int | None) -> dict[str, Any]:
        check_request(request, self.where(), max_tokens)
        schema = response_schema(request, self.where())
        return as_they_are(chat_params(request, model=model, max_tokens=max_tokens, schema=schema))

    def _result(self, completion: ChatCompletion, request: ChatRequest, model: str) -> ChatResult:
        """The whole answer of a blocking chat (its first choice)."""
        where = self.where()
        choices = expect(completion.choices, list, where, "`choices`")
        if not choices:
            raise ToolingError(ErrorCode.PROTOCOL, f"{where} answered with no choice")
        message = choices[0].message
        answer = Answer(where)
        content = text(message.content, where, "the content")
        if content:
            answer.text(content)
        for index, call in enumerate(expect(message.tool_calls or [], list, where, "`tool_calls`")):
            function = getattr(call, "function", None)  # a `custom` tool call has none: not ours to offer
            if function is not None:
                name = text(function.name, where, "a tool call's name")
                arguments = text(function.arguments, where, "a tool call's arguments") or ""
                answer.call(index, id=text(call.id, where, "a tool call's id"), name=name, arguments=arguments)
        usage = _usage(completion.usage) or estimated(request, answer.chars)
        answered = text(completion.model, where, "the model") or model
        return answer.result(answered, finish_reason(text(choices[0].finish_reason, where, "finish_reason")), usage)

    def _read(self, chunk: ChatCompletionChunk, answer: Answer, reading: _Reading) -> list[ChatDelta]:
        """The pieces one chunk hands out, joining what it adds to `answer` and noting the rest."""
        where, out = self.where(), []
        reading.model = text(chunk.model, where, "the model") or reading.model
        reading.usage = _usage(chunk.usage) or reading.usage
        for choice in expect(chunk.choices or [], list, where, "`choices`"):
            if choice.index != 0:
                continue  # one answer is asked for (n = 1)
            content = text(choice.delta.content, where, "the content")
            if content:
                answer.text(content)
                out.append(ChatDelta(content=content))
            for fragment in expect(choice.delta.tool_calls or [], list, where, "`tool_calls`"):
                key = expect(fragment.index, int, where, "a tool call's index")
                if reading.open_call is not None and key != reading.open_call:
                    out.append(ChatDelta(tool_call=answer.end_call(reading.open_call)))
                function = fragment.function
                answer.call(
                    key,
                    id=text(fragment.id, where, "a tool call's id"),
                    name=text(function.name, where, "a tool call's name") if function else None,
                    arguments=(text(function.arguments, where, "a tool call's arguments") or "") if function else "",
                )
                reading.open_call = key
            if choice.finish_reason is not None:
                reading.finish = text(choice.finish_reason, where, "finish_reason")
                out.extend(ChatDelta(tool_call=call) for call in answer.open_calls())
                reading.open_call = None
        return out


def _usage(usage: Any) -> Usage | None:
    """The reported usage (`prompt_tokens`, `completion_tokens`); None when absent or unreadable."""
    prompt, completion = count(getattr(usage, "prompt_tokens", None)), count(getattr(usage, "completion_tokens", None))
    return Usage(prompt, completion) if prompt is not None and completion is not None else None
