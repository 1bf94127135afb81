"""Joining a model's answer from its pieces, within bounds: `Answer`.

A provider's answer is untrusted text: the host keeps at most `MAX_CONTENT_CHARS` of its text,
`MAX_ARGUMENTS_CHARS` of its tool calls' arguments (every call together), `MAX_TOOL_CALLS` calls and
`MAX_NAME_CHARS` of each name and id; past a bound the answer fails with `limit-exceeded`, naming
it. Pieces are kept in lists and joined once, so an answer costs time and memory linear in its
size. Tool-call fragments are joined by their key (OpenAI's `index`, Anthropic's block index) and a
call is handed out whole, once (`end_call`); a fragment of a call already handed out is a protocol
error, as is a call without a name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatResult, FinishReason, ToolCall, Usage

MAX_CONTENT_CHARS: Final = 4 * 1024 * 1024
"""Characters of one answer's text the host joins and keeps (a stream's pieces together)."""

MAX_ARGUMENTS_CHARS: Final = 4 * 1024 * 1024
"""Characters of one answer's tool-call arguments (every call together) the host joins and keeps."""

MAX_TOOL_CALLS: Final = 128
"""Tool calls one answer may make."""

MAX_NAME_CHARS: Final = 256
"""Characters of a tool call's name, of its id, and of the model's name an answer gives."""


@dataclass
class _Call:
    """A tool call being joined."""

    number: int
    """Its place among the answer's calls, from 1."""
    id: str | None = None
    name: list[str] = field(default_factory=list)
    name_chars: int = 0
    arguments: list[str] = field(default_factory=list)
    ended: bool = False


class Answer:
    """One answer being joined: its text and its tool calls, each bounded (see the module docstring)."""

    def __init__(self, where: str) -> None:
        """`where` names the provider in messages (`provider 'llm'`)."""
        self._where = where
        self._text: list[str] = []
        self._text_chars = 0
        self._arguments_chars = 0
        self._calls: dict[int | str, _Call] = {}

    @property
    def chars(self) -> int:
        """Characters joined so far: text and arguments (what an estimate of its tokens counts)."""
        return self._text_chars + self._arguments_chars

    def text(self, piece: str) -> None:
        """Add `piece` to the text. Raises `limit-exceeded` past `MAX_CONTENT_CHARS`."""
        self._text_chars += len(piece)
        if self._text_chars > MAX_CONTENT_CHARS:
            raise self._over(f"{MAX_CONTENT_CHARS} characters of text (MAX_CONTENT_CHARS)")
        self._text.append(piece)

    def call(self, key: int | str, *, id: str | None = None, name: str | None = None, arguments: str = "") -> None:
        """Add a fragment of the tool call `key`: its id (the first one given is kept), a piece of
        its name, a piece of its arguments. Raises `limit-exceeded` past a bound, `protocol` for a
        call already handed out."""
        call = self._calls.get(key)
        if call is None:
            if len(self._calls) >= MAX_TOOL_CALLS:
                raise self._over(f"{MAX_TOOL_CALLS} tool calls (MAX_TOOL_CALLS)")
            call = self._calls[key] = _Call(len(self._calls) + 1)
        if call.ended:
            raise ToolingError(
                ErrorCode.PROTOCOL, f"{self._where} sent more of tool call #{call.number} after it had ended"
            )
        if id and call.id is None:
            call.id = self._name(id, "a tool call's id")
        if name:
            call.name_chars += len(name)
            if call.name_chars > MAX_NAME_CHARS:
                raise self._over(f"{MAX_NAME_CHARS} characters of a tool's name (MAX_NAME_CHARS)")
            call.name.append(name)
        if arguments:
            self._arguments_chars += len(arguments)
            if self._arguments_chars > MAX_ARGUMENTS_CHARS:
                raise self._over(f"{MAX_ARGUMENTS_CHARS} characters of tool-call arguments (MAX_ARGUMENTS_CHARS)")
            call.arguments.append(arguments)

    def has_call(self, key: int | str) -> bool:
        """Whether a fragment of tool call `key` was added."""
        return key in self._calls

    def end_call(self, key: int | str) -> ToolCall:
        """The tool call `key`, whole (its id `call_N` when the server gave none; its arguments `{}`
        when empty), handed out once. Raises `protocol` for a call without a name, or one already handed out."""
        call = self._calls[key]
        if call.ended:
            raise ToolingError(ErrorCode.PROTOCOL, f"{self._where} ended tool call #{call.number} twice")
        call.ended = True
        return self._whole(call)

    def open_calls(self) -> list[ToolCall]:
        """The calls not handed out yet, whole, in the order they began (each then handed out)."""
        return [self.end_call(key) for key, call in self._calls.items() if not call.ended]

    def result(self, model: str, finish_reason: FinishReason, usage: Usage) -> ChatResult:
        """The whole answer: its text (None when there is none) and every tool call, in order."""
        calls = tuple(self._whole(call) for call in self._calls.values())
        content = "".join(self._text) if self._text else None
        return ChatResult(self._name(model, "the model's name"), content, calls, finish_reason, usage)

    def _whole(self, call: _Call) -> ToolCall:
        name = "".join(call.name)
        if not name:
            raise ToolingError(ErrorCode.PROTOCOL, f"{self._where} sent tool call #{call.number} without a name")
        return ToolCall(call.id or f"call_{call.number}", name, "".join(call.arguments) or "{}")

    def _name(self, value: str, what: str) -> str:
        if len(value) > MAX_NAME_CHARS:
            raise self._over(f"{MAX_NAME_CHARS} characters of {what} (MAX_NAME_CHARS)")
        return value

    def _over(self, bound: str) -> ToolingError:
        return ToolingError(ErrorCode.LIMIT_EXCEEDED, f"{self._where} answered with more than {bound}")
