"""Mock providers (`kind = "mock"`): answers scripted in TOML, for tests and demos without a model.

A script is played once per provider and host, shared by every guest: each chat (or stream) takes
the next turn. Past the last turn, `repeat_last = true` repeats it; otherwise the chat fails with
`unavailable` naming the provider, the chat's number and the script's length. A turn's usage is
its `usage`, else estimated (`providers.estimates`); a turn whose output passes `max_tokens` is cut
to it (its text to `max_tokens * CHARS_PER_TOKEN` characters, no tool call, finish "length"), as a
model would be, so that a budget holds against a mock too. A stream splits the text into at most
`STREAM_PIECES` pieces, then hands out each tool call, then the whole answer.
"""

from __future__ import annotations

import json
from typing import Final

from agent_host.config.providers import MockProviderConfig, MockTurn
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatDelta, ChatRequest, ChatResult, FinishReason, ToolCall, Usage
from agent_host.providers.base import ChatStream, Provider
from agent_host.providers.checks import check_request, response_schema
from agent_host.providers.estimates import CHARS_PER_TOKEN, estimated

STREAM_PIECES: Final = 3
"""Pieces at most a mock stream splits a turn's text into."""


def pieces(text: str, count: int = STREAM_PIECES) -> list[str]:
    """`text` split into at most `count` pieces of about the same length (none for "")."""
    size = max(1, -(-len(text) // count))
    return [text[start : start + size] for start in range(0, len(text), size)]


class MockProvider(Provider):
    """A scripted provider: one turn per chat, in order (see the module docstring)."""

    kind = "mock"
    _config: MockProviderConfig

    def __init__(self, config: MockProviderConfig) -> None:
        super().__init__(config)
        self._taken = 0

    async def models(self) -> list[str]:
        """The models its table lists in `models`, else its default `model`."""
        if self._config.models is not None:
            return sorted(set(self._config.models))
        return [self._config.model] if self._config.model is not None else []

    async def chat(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatResult:
        """The next turn, as the answer of `model` (see the module docstring)."""
        return self._answer(request, model, max_tokens)

    async def stream(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatStream:
        """The next turn, in pieces (see the module docstring)."""
        result = self._answer(request, model, max_tokens)
        for piece in pieces(result.content or ""):
            yield ChatDelta(content=piece)
        for call in result.tool_calls:
            yield ChatDelta(tool_call=call)
        yield result

    def _answer(self, request: ChatRequest, model: str, max_tokens: int | None) -> ChatResult:
        check_request(request, self.where(), max_tokens)
        response_schema(request, self.where())
        number, turn = self._next_turn()
        calls = tuple(
            ToolCall(call.id or f"call_{number}_{index}", call.name, json.dumps(call.arguments, ensure_ascii=False))
            for index, call in enumerate(turn.tool_calls, start=1)
        )
        content = turn.content
        finish: FinishReason = "tool-calls" if calls else "stop"
        written = len(content or "") + sum(len(call.arguments) for call in calls)
        usage = Usage(turn.usage.input_tokens, turn.usage.output_tokens) if turn.usage else estimated(request, written)
        if max_tokens is not None and usage.output_tokens > max_tokens:
            content = content[: max_tokens * CHARS_PER_TOKEN] if content is not None else None
            calls, finish, usage = (), "length", Usage(usage.input_tokens, max_tokens)
        return ChatResult(model, content, calls, finish, usage)

    def _next_turn(self) -> tuple[int, MockTurn]:
        """The next turn and its number (counting the chat), or `unavailable` past the script."""
        number, turns = self._taken + 1, self._config.turns
        if number <= len(turns):
            turn = turns[number - 1]
        elif self._config.repeat_last and turns:
            turn = turns[-1]
        else:
            raise ToolingError(
                ErrorCode.UNAVAILABLE,
                f"mock provider {self.name!r} has no scripted turn for chat #{number} (its script has "
                f"{len(turns)}); add turns to it in {self._config.origin}, or set repeat_last = true",
            )
        self._taken = number
        return number, turn
