"""What a call of an offered tool ends with (`Answer`), and a tool as offered (`ServedTool`).

An `Answer` is in MCP's wire form (content blocks, optional structured content) whatever answered:
an agent's guest or a proxied tool. A failure carries the WIT `error-code` name in `code`, its
`message` (which never repeats the code) and, in the content, `CODE: MESSAGE` (MCP has no field for
the code); a failed proxied call keeps the upstream result's own content. A guest's answer is JSON
when it is strict JSON (`strict_json`: nested at most 128 deep, ...) of at most `MAX_STRUCTURED`
characters; other text, however much it looks like JSON, is answered as text. Making an answer from
a large text costs time linear in it: callers on the loop build one with `off_loop.run` (`of_text`,
`rendered`); past `MAX_STRUCTURED` it is never parsed (one parse holds the interpreter for its whole
length, worker thread or not: ~30 ms a MiB).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agent_host._support import off_loop, strict_json
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import JsonObject


@dataclass(frozen=True)
class ServedTool:
    """One tool offered to clients: an agent (`agent` set) or a proxied tool (`TOOLING.TOOL`)."""

    name: str
    description: str | None
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    builtin: bool = False


MAX_STRUCTURED: Final = 1024 * 1024
"""Characters of a guest's answer parsed as JSON at most (for `structuredContent` and the HTTP API's
JSON `result`); a longer answer is answered as its text."""

_NOT_PARSED: Final = object()
_NOT_JSON: Final = object()


def _parse(text: str) -> Any:
    """The value of `text` when it is strict JSON of at most `MAX_STRUCTURED` characters, else
    `_NOT_JSON` (linear in its length)."""
    if len(text) > MAX_STRUCTURED:
        return _NOT_JSON
    try:
        return strict_json.parse(text)
    except strict_json.JsonTextError:
        return _NOT_JSON


@dataclass(frozen=True)
class Answer:
    """A finished call (see the module docstring)."""

    content: tuple[JsonObject, ...]
    structured: JsonObject | None = None
    code: str | None = None
    """The WIT `error-code` name when the call failed (`invalid-arguments`, `denied`, ...)."""
    failure_message: str | None = None
    """For a failure made here (`failure`): what went wrong, without the code."""
    parsed: Any = field(default=_NOT_PARSED, compare=False, repr=False)
    """The JSON value of `text`, parsed once (`of_text`); `_NOT_JSON` when it is not strict JSON."""

    @property
    def message(self) -> str:
        """What went wrong, for the HTTP API's `{"error": {"code", "message"}}`: never prefixed by
        the code (a failed upstream result: its text)."""
        return self.failure_message if self.failure_message is not None else self.text

    @property
    def failed(self) -> bool:
        return self.code is not None

    @property
    def text(self) -> str:
        """The text of the text blocks, joined by newlines."""
        return "\n".join(str(block.get("text", "")) for block in self.content if block.get("type") == "text")

    @property
    def value(self) -> Any:
        """The result as one JSON value (the HTTP API's `result`): the structured content when there is
        some; else the text, as its JSON value when it is JSON; else the content blocks."""
        if self.structured is not None:
            return self.structured
        if any(block.get("type") != "text" for block in self.content):
            return list(self.content)
        parsed = self.parsed if self.parsed is not _NOT_PARSED else _parse(self.text)
        return self.text if parsed is _NOT_JSON else parsed

    @property
    def size(self) -> int:
        """About how much work rendering it is: the characters of its text blocks, or the values of
        its structured content (`off_loop.size_of`), whichever is more."""
        structured = off_loop.size_of(self.structured) if self.structured is not None else 0
        return max(sum(len(str(block.get("text", ""))) for block in self.content), structured)

    def rendered(self) -> bytes:
        """The HTTP API's body of a successful answer: `{"result": VALUE}` as UTF-8 JSON."""
        body = {"result": self.value}
        return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")

    def wire(self) -> JsonObject:
        """The MCP `CallToolResult` of this answer, as JSON."""
        value: JsonObject = {"content": list(self.content), "isError": self.failed}
        if self.structured is not None:
            value["structuredContent"] = self.structured
        return value

    @classmethod
    def of_text(cls, text: str) -> Answer:
        """A successful answer of one text block; structured too when the text is a strict JSON object."""
        parsed = _parse(text)
        structured = parsed if isinstance(parsed, dict) else None
        return cls(({"type": "text", "text": text},), structured, parsed=parsed)

    @classmethod
    def failure(cls, code: ErrorCode | str, message: str) -> Answer:
        """A failed answer: `message` (without the code), and one text block `CODE: MESSAGE`."""
        return cls(({"type": "text", "text": f"{code}: {message}"},), code=str(code), failure_message=message)

    @classmethod
    def of_result(cls, result: JsonObject) -> Answer:
        """An upstream `CallToolResult` (as JSON) as it came."""
        content = tuple(block for block in result.get("content", ()) if isinstance(block, dict))
        structured = result.get("structuredContent")
        failed = bool(result.get("isError"))
        return cls(
            content, structured if isinstance(structured, dict) else None, ErrorCode.TOOL_FAILED if failed else None
        )

    @classmethod
    def of_error(cls, error: ToolingError) -> Answer:
        """A refused or failed call: a `tool-failed` error keeps the upstream result it carries."""
        if error.code is ErrorCode.TOOL_FAILED and error.data is not None:
            try:
                result = json.loads(error.data)
            except ValueError:
                result = None
            if isinstance(result, dict) and result.get("content"):
                return cls.of_result({**result, "isError": True})
        return cls.failure(error.code, error.message)
