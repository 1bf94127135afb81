"""What the host returns, as Python: `ToolResult` (a tool call's outcome) and `Resource` (a resource's content).

Both are frozen and built from the WIT records with `of()`: `ToolResult.of(types.ToolResult)` parses
the JSON once; `Resource.of(types.ResourceContent)` decodes on access (`text`, `data`). `raw` is
what the host sent: the MCP `CallToolResult` in wire form (a dict) for a tool result, the WIT record
for a resource.
"""

from __future__ import annotations

import base64
import json
import warnings
from dataclasses import dataclass
from typing import Any

from wit_world.imports import types

__all__ = ("Resource", "ToolResult")


@dataclass(frozen=True)
class ToolResult:
    """The outcome of a tool call: `name` (the tool), `arguments` (as sent), `raw` (the MCP result).

    `structured` is its `structuredContent` (None when the tool returned none), `content` its
    content blocks, `text` the text of its text blocks joined by newlines, `is_error` its `isError`
    (the host turns an `isError` result into `tool-failed`, so a result that arrives is a success).
    """

    name: str
    arguments: dict[str, Any]
    raw: dict[str, Any]

    @classmethod
    def of(cls, result: types.ToolResult) -> ToolResult:
        """The `ToolResult` of a WIT `tool-result` (from `call-tool-blocking` or a `tool-result` event)."""
        return cls(result.name, json.loads(result.arguments), json.loads(result.value))

    @property
    def structured(self) -> Any:
        return self.raw.get("structuredContent")

    @property
    def content(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = self.raw.get("content", [])
        return blocks

    @property
    def text(self) -> str:
        return "\n".join(block.get("text", "") for block in self.content if block.get("type") == "text")

    @property
    def is_error(self) -> bool:
        return bool(self.raw.get("isError", False))

    def __getitem__(self, key: str) -> Any:
        """Deprecated: `result["structuredContent"]` as when `call()` returned the dict; use `.structured`,
        `.content`, `.raw`."""
        warnings.warn(
            "agentlib: call() returns a ToolResult; use .structured, .text, .content or .raw instead of [...]",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.raw[key]


@dataclass(frozen=True)
class Resource:
    """A resource's content: `uri`, `mime_type`, `text` (decoded as UTF-8 for a binary type), `data`
    (bytes; text encoded as UTF-8) and `raw` (the WIT `resource-content`: text for `text/*` or no
    MIME type, else base64)."""

    raw: types.ResourceContent

    @classmethod
    def of(cls, content: types.ResourceContent) -> Resource:
        """The `Resource` of a WIT `resource-content` (from `read-resource` or a `resource-updated` event)."""
        return cls(content)

    @property
    def uri(self) -> str:
        return self.raw.uri

    @property
    def mime_type(self) -> str | None:
        return self.raw.mime_type

    @property
    def is_text(self) -> bool:
        """Whether the host sent the content as text (no MIME type or `text/*`), not base64."""
        return self.raw.mime_type is None or self.raw.mime_type.lower().startswith("text/")

    @property
    def text(self) -> str:
        if self.is_text:
            return self.raw.content
        return base64.b64decode(self.raw.content).decode("utf-8", errors="replace")

    @property
    def data(self) -> bytes:
        if self.is_text:
            return self.raw.content.encode("utf-8")
        return base64.b64decode(self.raw.content)
