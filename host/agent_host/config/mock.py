"""The script of a mock tooling (`kind = "mock"`): tools, resources and updates, as models.

`[[tooling.NAME.tools]]` answer their calls with `results` in order (`text`, `structured`, `error`
or `content`, after `delay` seconds with `progress` steps); `[[tooling.NAME.resources]]` hold
`text` or `blob`; `[[tooling.NAME.updates]]` change them `after` seconds from the first
subscription. docs/embedding/testing.md ("A mock tooling") shows a whole script. Schemas,
annotations, structured results and content blocks are free JSON, kept as written.
"""

from __future__ import annotations

from typing import Any, Final, Self

from pydantic import Field, field_validator, model_validator

from agent_host.config.base import At, Need, Table, fail
from agent_host.config.types import Capability, Delay, Json, Steps

_RESULT_KINDS: Final = ("text", "structured", "error", "content")
_UPDATE_ACTIONS: Final = ("resource", "add_resource", "remove_resource", "add_tool")


def _given(table: Table, keys: tuple[str, ...]) -> list[str]:
    return [key for key in keys if getattr(table, key) is not None]


class MockResult(Table):
    """One scripted answer: exactly one of `text`, `structured`, `error`, `content`."""

    text: str | None = None
    """Answer with this text."""
    structured: Json | None = None
    """Answer with this structuredContent (and its JSON as text)."""
    error: str | None = None
    """Fail the call (isError) with this text: the guest gets tool-failed."""
    content: tuple[Json, ...] | None = None
    """Answer with these MCP content blocks."""
    delay: Delay = 0.0
    """Seconds before answering."""
    progress: Steps = 0
    """Progress notifications sent, evenly, during the delay."""

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        kinds = _given(self, _RESULT_KINDS)
        if len(kinds) != 1:
            fail(
                "MockResult",
                [At((), f"a result needs exactly one of {', '.join(_RESULT_KINDS)} (got {kinds or 'none'})")],
            )
        return self


class MockTool(Table):
    """One scripted tool."""

    needs = {"name": Need("a mock tool needs `name`")}

    name: str = Field(min_length=1)
    """The tool's name."""
    description: str | None = None
    """What the tool does."""
    input_schema: Json = {"type": "object"}
    """JSON Schema of the arguments (an empty table: any object)."""
    output_schema: Json | None = None
    """JSON Schema of the structured results."""
    annotations: Json | None = None
    """MCP tool annotations, such as readOnlyHint."""
    capabilities: tuple[Capability, ...] | None = None
    """The capabilities its calls need (otherwise derived from the annotations)."""
    results: tuple[MockResult, ...] = ()
    """The answers, one per call, in order."""
    repeat_last: bool = Field(default=False, strict=True)
    """Keep answering with the last result when the script ends."""

    @field_validator("input_schema")
    @classmethod
    def _any_object(cls, schema: Json) -> Json:
        return schema or {"type": "object"}


class MockResource(Table):
    """One scripted resource: exactly one of `text` and `blob`."""

    needs = {"uri": Need("a mock resource needs `uri`")}

    uri: str = Field(min_length=1)
    """The resource's URI."""
    name: str = ""
    """Its name (default: the URI)."""
    description: str | None = None
    mime_type: str | None = None
    text: str | None = None
    """Its content as text."""
    blob: str | None = None
    """Its content as base64."""

    @model_validator(mode="before")
    @classmethod
    def _name_defaults_to_uri(cls, data: Any) -> Any:
        if isinstance(data, dict) and "name" not in data and isinstance(data.get("uri"), str):
            return {**data, "name": data["uri"]}
        return data

    @model_validator(mode="after")
    def _one_content(self) -> Self:
        if (self.text is None) == (self.blob is None):
            fail("MockResource", [At((), "a mock resource needs exactly one of `text` and `blob` (base64)")])
        return self


class MockUpdate(Table):
    """A scripted change, `after` seconds from the tooling's first subscription: exactly one of
    `resource` (with `text` or `blob`), `add_resource`, `remove_resource`, `add_tool`."""

    after: Delay = 0.0
    """Seconds from the first subscription."""
    resource: str | None = None
    """The URI of a resource whose content changes to `text` or `blob`."""
    text: str | None = None
    blob: str | None = None
    add_resource: MockResource | None = None
    remove_resource: str | None = None
    """The URI of a resource that goes away."""
    add_tool: MockTool | None = None

    @model_validator(mode="after")
    def _one_action(self) -> Self:
        actions = _given(self, _UPDATE_ACTIONS)
        if len(actions) != 1:
            message = f"an update needs exactly one of {', '.join(_UPDATE_ACTIONS)} (got {actions or 'none'})"
            fail("MockUpdate", [At((), message)])
        if self.resource is not None and (self.text is None) == (self.blob is None):
            fail("MockUpdate", [At((), "a resource update needs exactly one of `text` and `blob`")])
        return self


class MockSpec(Table):
    """The script of a mock tooling: its tools, resources and updates."""

    tools: tuple[MockTool, ...] = ()
    """The scripted tools ([[tooling.NAME.tools]])."""
    resources: tuple[MockResource, ...] = ()
    """The scripted resources ([[tooling.NAME.resources]])."""
    updates: tuple[MockUpdate, ...] = ()
    """The scripted changes ([[tooling.NAME.updates]])."""

    @model_validator(mode="after")
    def _unique_tool_names(self) -> Self:
        names = [tool.name for tool in self.tools]
        duplicate = next((name for name in names if names.count(name) > 1), None)
        if duplicate is not None:
            fail("MockSpec", [At(("tools",), f"two tools are named {duplicate!r}")])
        return self
