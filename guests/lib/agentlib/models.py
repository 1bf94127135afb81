"""Asking a model from a guest: `provider`, `chat`, `stream`, and `run_agent` (the tool loop).

`provider(name)` is a `Model`, taken at its first use, whose `chat` and `stream` are the functions
below. Messages are dicts (`{"role": "user", "content": "..."}`; an assistant's `tool_calls` and a
tool message's `tool_call_id` as in the OpenAI wire) or the WIT records. `chat` returns a `Reply`;
`stream` yields text pieces (`str`) and whole tool calls (`ToolCall`), then returns the `Reply`
(`reply = yield from stream(...)`, or read `Stream.reply` after the loop). `run_agent` offers a
tooling's tools to the model, runs the calls it asks for through the tooling, feeds the results
back, and stops at an answer or after `max_steps` chats. Every function raises `ToolingError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from wit_world.imports import inbox, types
from wit_world.imports import provider as _provider
from wit_world.imports.provider import Provider
from wit_world.imports.tooling import Tooling

from agentlib.errors import ToolingError, raising
from agentlib.lazy import Taken
from agentlib.toolbox import Toolbox

__all__ = ("Model", "Reply", "Stream", "ToolCall", "provider", "chat", "stream", "run_agent")

Message = Mapping[str, Any] | types.ChatMessage


@dataclass(frozen=True)
class ToolCall:
    """A model's request to call a tool: `arguments` parsed from the model's JSON text ({} if not an object)."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw: str

    @classmethod
    def of(cls, call: types.ToolCall) -> ToolCall:
        try:
            parsed = json.loads(call.arguments)
        except ValueError:
            parsed = {}
        return cls(call.id, call.name, parsed if isinstance(parsed, dict) else {}, call.arguments)


@dataclass(frozen=True)
class Reply:
    """A model's whole answer: `content`, `tool_calls`, `finish_reason` ("stop", "length",
    "tool-calls", "content-filter", "other"), `model`, and the tokens used."""

    content: str | None
    tool_calls: list[ToolCall]
    finish_reason: str
    model: str
    input_tokens: int
    output_tokens: int

    @classmethod
    def of(cls, result: types.ChatResult) -> Reply:
        return cls(
            result.content,
            [ToolCall.of(call) for call in result.tool_calls],
            result.finish_reason.name.lower().replace("_", "-"),
            result.model,
            result.usage.input_tokens,
            result.usage.output_tokens,
        )

    def message(self) -> dict[str, Any]:
        """This answer as the assistant message that continues the conversation."""
        calls = [{"id": c.id, "name": c.name, "arguments": c.raw} for c in self.tool_calls]
        return {"role": "assistant", "content": self.content, "tool_calls": calls}


class Model(Taken[Provider]):
    """A provider, by name, taken at its first use (`agentlib.lazy`). Its methods are the functions
    of this module; `with` drops the handle at the end (its open streams are cancelled)."""

    def __init__(self, name: str) -> None:
        super().__init__(name, _get)

    @raising
    def models(self) -> list[str]:
        """The models this agent may ask for here (`models`)."""
        return self.handle.models()

    def chat(self, messages: Iterable[Message], **options: Any) -> Reply:
        """`chat(self, messages, ...)`."""
        return chat(self, messages, **options)

    def stream(self, messages: Iterable[Message], **options: Any) -> Stream:
        """`stream(self, messages, ...)`."""
        return stream(self, messages, **options)

    def __repr__(self) -> str:
        return f"provider({self._name!r})"


@raising
def _get(name: str) -> Provider:
    return _provider.get(name)


def provider(name: str) -> Model:
    """Provider `name` as a `Model` (nothing is asked of the host before its first use)."""
    return Model(name)


def _handle(model: Provider | Model) -> Provider:
    return model.handle if isinstance(model, Model) else model


def _message(message: Message) -> types.ChatMessage:
    if isinstance(message, types.ChatMessage):
        return message
    calls = [
        types.ToolCall(str(c["id"]), str(c["name"]), c["arguments"] if isinstance(c["arguments"], str) else
                       json.dumps(c["arguments"]))
        for c in message.get("tool_calls") or ()
    ]  # fmt: skip
    return types.ChatMessage(
        types.Role[str(message.get("role", "user")).upper()], message.get("content"), calls, message.get("tool_call_id")
    )


def _request(
    messages: Iterable[Message], model: str | None, tools: Iterable[types.Tool], max_tokens: int | None,
    temperature: float | None, schema: Mapping[str, Any] | None,
) -> types.ChatRequest:  # fmt: skip
    return types.ChatRequest(
        model,
        [_message(m) for m in messages],
        list(tools),
        max_tokens,
        temperature,
        json.dumps(schema) if schema is not None else None,
    )


@raising
def chat(
    handle: Provider | Model,
    messages: Iterable[Message],
    *,
    model: str | None = None,
    tools: Iterable[types.Tool] = (),
    max_tokens: int | None = None,
    temperature: float | None = None,
    schema: Mapping[str, Any] | None = None,
) -> Reply:
    """Ask the model and wait for its whole answer (`chat`). `schema`: a JSON Schema the answer
    must match (structured output). Raises `ToolingError` (`denied`, `limit-exceeded`, ...)."""
    request = _request(messages, model, tools, max_tokens, temperature, schema)
    return Reply.of(_handle(handle).chat(request))


class Stream:
    """The pieces of a streamed answer: iterate for text (`str`) and whole tool calls (`ToolCall`);
    `reply` is the whole answer once the iteration ended. `cancel()` (or leaving a `with` block
    early) closes it upstream."""

    def __init__(self, handle: Provider, id: str, timeout_ms: int) -> None:
        self.id = id
        self.reply: Reply | None = None
        self._handle = handle
        self._timeout_ms = timeout_ms

    def __iter__(self) -> Iterator[str | ToolCall]:
        while self.reply is None:
            envelope = inbox.recv(self._timeout_ms)
            if envelope is None:
                self.cancel()
                raise ToolingError(types.Error(types.ErrorCode.TIMEOUT, "the stream sent nothing in time", None))
            if envelope.id != self.id:
                continue  # another call's envelope: this loop is the only reader here
            event = envelope.event
            if isinstance(event, types.Event_ChatDelta):
                if event.value.content:
                    yield event.value.content
                if event.value.tool_call is not None:
                    yield ToolCall.of(event.value.tool_call)
            elif isinstance(event, types.Event_ChatEnd):
                self.reply = Reply.of(event.value)
            elif isinstance(event, types.Event_Error):
                raise ToolingError(event.value)

    def cancel(self) -> bool:
        return self._handle.cancel(self.id)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.reply is None:
            self.cancel()


@raising
def stream(
    handle: Provider | Model,
    messages: Iterable[Message],
    *,
    model: str | None = None,
    tools: Iterable[types.Tool] = (),
    max_tokens: int | None = None,
    temperature: float | None = None,
    timeout_ms: int = 60000,
) -> Stream:
    """Ask the model for a streamed answer (`chat-stream`): a `Stream` of its pieces. Raises
    `ToolingError` at once for a refused request, and while iterating for a failed stream."""
    request = _request(messages, model, tools, max_tokens, temperature, None)
    wit = _handle(handle)
    return Stream(wit, wit.chat_stream(request), timeout_ms)


def run_agent(
    handle: Provider | Model,
    tooling: Tooling | Toolbox | None,
    prompt: str,
    *,
    system: str | None = None,
    model: str | None = None,
    max_steps: int = 8,
    max_tokens: int | None = None,
) -> str:
    """Answer `prompt` with the model, letting it call `tooling`'s tools (none without one): each
    chat's tool calls run through the tooling (`call-tool-blocking`; a failure goes back to the
    model as the tool's answer), until an answer without calls, or `max_steps` chats (then
    `ToolingError` `limit-exceeded`). Returns the answer's text."""
    if isinstance(tooling, Toolbox):
        tooling = tooling.handle
    tools = tooling.list_tools() if tooling is not None else []
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    for _ in range(max_steps):
        reply = chat(handle, messages, model=model, tools=tools, max_tokens=max_tokens)
        if not reply.tool_calls or tooling is None:
            return reply.content or ""
        messages.append(reply.message())
        answers = [{"role": "tool", "tool_call_id": c.id, "content": _answer(tooling, c)} for c in reply.tool_calls]
        messages.extend(answers)
    raise ToolingError(
        types.Error(types.ErrorCode.LIMIT_EXCEEDED, f"no answer after {max_steps} chats (max_steps)", None)
    )


def _answer(tooling: Tooling, call: ToolCall) -> str:
    """What the tool answered, as text for the model (its error, if it failed)."""
    try:
        result = tooling.call_tool_blocking(call.name, json.dumps(call.arguments))
    except Exception as exc:  # the model reads the failure and may try otherwise
        value = getattr(exc, "value", None)
        return f"error: {getattr(value, 'message', exc)}"
    value = json.loads(result.value)
    texts = [b.get("text", "") for b in value.get("content", []) if b.get("type") == "text"]
    structured = value.get("structuredContent")
    return json.dumps(structured) if structured is not None else "\n".join(texts)
