"""The TOML of a mock tooling (`kind = "mock"`), read into frozen dataclasses.

```toml
[tooling.fake]
kind = "mock"

[[tooling.fake.tools]]
name = "search"
description = "Search the index"
input_schema = { type = "object", properties = { q = { type = "string" } }, required = ["q"] }
annotations = { readOnlyHint = true }        # optional; or capabilities = ["read_only"]
repeat_last = false                          # keep answering with the last result when the script ends
results = [                                  # answered in order, one per call
  { text = "first" },                        # text content
  { structured = { hits = 3 } },             # structuredContent (and its JSON as text)
  { error = "quota exceeded" },              # isError: the guest gets tool-failed
  { text = "slow", delay = 1.5, progress = 3 },   # answers after 1.5 s, reporting progress 3 times
]

[[tooling.fake.resources]]
uri = "mock://doc"
name = "doc"
mime_type = "text/plain"                     # optional
text = "content"                             # or blob = "<base64>"

[[tooling.fake.updates]]                     # scripted changes, `after` seconds from the first subscription
after = 0.5
resource = "mock://doc"                      # new content of a resource (text or blob)
text = "changed"
# or: add_resource = { uri = "...", name = "...", text = "..." }, remove_resource = "URI",
#     add_tool = { name = "...", results = [...] }
```

Every error names the dotted key path (`tooling.fake.tools[0].results[2].delay`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from host.errors import ConfigError

_TOOL_KEYS: Final = frozenset(
    {"name", "description", "input_schema", "output_schema", "annotations", "capabilities", "results", "repeat_last"}
)
_RESULT_KEYS: Final = frozenset({"text", "structured", "error", "content", "delay", "progress"})
_RESOURCE_KEYS: Final = frozenset({"uri", "name", "description", "mime_type", "text", "blob"})
_UPDATE_KEYS: Final = frozenset({"after", "resource", "text", "blob", "add_resource", "remove_resource", "add_tool"})


@dataclass(frozen=True)
class MockResult:
    """One scripted answer."""

    text: str | None = None
    structured: Mapping[str, Any] | None = None
    error: str | None = None
    content: tuple[Mapping[str, Any], ...] | None = None
    delay: float = 0.0
    progress: int = 0


@dataclass(frozen=True)
class MockTool:
    name: str
    description: str | None
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any] | None
    capabilities: tuple[str, ...] | None
    results: tuple[MockResult, ...]
    repeat_last: bool = False


@dataclass(frozen=True)
class MockResource:
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None


@dataclass(frozen=True)
class MockUpdate:
    """A scripted change, `after` seconds from the tooling's first subscription."""

    after: float
    resource: str | None = None
    text: str | None = None
    blob: str | None = None
    add_resource: MockResource | None = None
    remove_resource: str | None = None
    add_tool: MockTool | None = None


@dataclass(frozen=True)
class MockSpec:
    tools: tuple[MockTool, ...] = ()
    resources: tuple[MockResource, ...] = ()
    updates: tuple[MockUpdate, ...] = ()


class Reader(Protocol):
    """The typed accessors of the config parser."""

    def fail(self, key: str, problem: str, hint: str | None = None) -> ConfigError: ...

    def reject_unknown(self, raw: Mapping[str, Any], key: str, known: frozenset[str]) -> None: ...

    def string(self, raw: Mapping[str, Any], name: str, key: str, *, default: Any) -> Any: ...

    def strings(self, raw: Mapping[str, Any], name: str, key: str) -> tuple[str, ...]: ...

    def boolean(self, raw: Mapping[str, Any], name: str, key: str, default: bool) -> bool: ...


def parse_mock(reader: Reader, raw: Mapping[str, Any], key: str, capabilities: frozenset[str]) -> MockSpec:
    tools = tuple(
        _tool(reader, item, f"{key}.tools[{i}]", capabilities)
        for i, item in enumerate(_tables(reader, raw, "tools", key))
    )
    names = [t.name for t in tools]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise reader.fail(f"{key}.tools", f"two tools are named {duplicate!r}")
    resources = tuple(
        _resource(reader, item, f"{key}.resources[{i}]")
        for i, item in enumerate(_tables(reader, raw, "resources", key))
    )
    updates = tuple(
        _update(reader, item, f"{key}.updates[{i}]", capabilities)
        for i, item in enumerate(_tables(reader, raw, "updates", key))
    )
    return MockSpec(tools=tools, resources=resources, updates=updates)


def _tables(reader: Reader, raw: Mapping[str, Any], name: str, key: str) -> list[Mapping[str, Any]]:
    value = raw.get(name, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise reader.fail(f"{key}.{name}", f"expected an array of tables ([[{key}.{name}]]), got {value!r}")
    return value


def _mapping(reader: Reader, raw: Mapping[str, Any], name: str, key: str) -> Mapping[str, Any] | None:
    value = raw.get(name)
    if value is not None and not isinstance(value, dict):
        raise reader.fail(f"{key}.{name}", f"expected a table, got {value!r}")
    return value


def _number(reader: Reader, raw: Mapping[str, Any], name: str, key: str, default: float) -> float:
    value = raw.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise reader.fail(f"{key}.{name}", f"expected a number >= 0, got {value!r}")
    return float(value)


def _tool(reader: Reader, raw: Mapping[str, Any], key: str, capabilities: frozenset[str]) -> MockTool:
    reader.reject_unknown(raw, key, _TOOL_KEYS)
    name = reader.string(raw, "name", key, default=None)
    if not name:
        raise reader.fail(key, "a mock tool needs `name`")
    schema = _mapping(reader, raw, "input_schema", key) or {"type": "object"}
    declared = reader.strings(raw, "capabilities", key) if "capabilities" in raw else None
    for capability in declared or ():
        if capability not in capabilities:
            raise reader.fail(
                f"{key}.capabilities", f"unknown capability {capability!r}; known: {', '.join(sorted(capabilities))}"
            )
    results = tuple(
        _result(reader, item, f"{key}.results[{i}]") for i, item in enumerate(_tables(reader, raw, "results", key))
    )
    return MockTool(
        name=name,
        description=reader.string(raw, "description", key, default=None),
        input_schema=schema,
        output_schema=_mapping(reader, raw, "output_schema", key),
        annotations=_mapping(reader, raw, "annotations", key),
        capabilities=declared,
        results=results,
        repeat_last=reader.boolean(raw, "repeat_last", key, False),
    )


def _result(reader: Reader, raw: Mapping[str, Any], key: str) -> MockResult:
    reader.reject_unknown(raw, key, _RESULT_KEYS)
    kinds = [k for k in ("text", "structured", "error", "content") if k in raw]
    if len(kinds) != 1:
        raise reader.fail(
            key, f"a result needs exactly one of text, structured, error, content (got {kinds or 'none'})"
        )
    content = raw.get("content")
    if content is not None and (not isinstance(content, list) or not all(isinstance(c, dict) for c in content)):
        raise reader.fail(f"{key}.content", "expected an array of MCP content blocks (tables)")
    progress = raw.get("progress", 0)
    if isinstance(progress, bool) or not isinstance(progress, int) or progress < 0:
        raise reader.fail(f"{key}.progress", f"expected a whole number >= 0, got {progress!r}")
    return MockResult(
        text=reader.string(raw, "text", key, default=None),
        structured=_mapping(reader, raw, "structured", key),
        error=reader.string(raw, "error", key, default=None),
        content=tuple(content) if content is not None else None,
        delay=_number(reader, raw, "delay", key, 0.0),
        progress=progress,
    )


def _resource(reader: Reader, raw: Mapping[str, Any], key: str) -> MockResource:
    reader.reject_unknown(raw, key, _RESOURCE_KEYS)
    uri = reader.string(raw, "uri", key, default=None)
    if not uri:
        raise reader.fail(key, "a mock resource needs `uri`")
    if ("text" in raw) == ("blob" in raw):
        raise reader.fail(key, "a mock resource needs exactly one of `text` and `blob` (base64)")
    return MockResource(
        uri=uri,
        name=reader.string(raw, "name", key, default=uri),
        description=reader.string(raw, "description", key, default=None),
        mime_type=reader.string(raw, "mime_type", key, default=None),
        text=reader.string(raw, "text", key, default=None),
        blob=reader.string(raw, "blob", key, default=None),
    )


def _update(reader: Reader, raw: Mapping[str, Any], key: str, capabilities: frozenset[str]) -> MockUpdate:
    reader.reject_unknown(raw, key, _UPDATE_KEYS)
    actions = [k for k in ("resource", "add_resource", "remove_resource", "add_tool") if k in raw]
    if len(actions) != 1:
        raise reader.fail(
            key,
            "an update needs exactly one of resource, add_resource, remove_resource, add_tool "
            f"(got {actions or 'none'})",
        )
    if "resource" in raw and ("text" in raw) == ("blob" in raw):
        raise reader.fail(key, "a resource update needs exactly one of `text` and `blob`")
    added = _mapping(reader, raw, "add_resource", key)
    tool = _mapping(reader, raw, "add_tool", key)
    return MockUpdate(
        after=_number(reader, raw, "after", key, 0.0),
        resource=reader.string(raw, "resource", key, default=None),
        text=reader.string(raw, "text", key, default=None),
        blob=reader.string(raw, "blob", key, default=None),
        add_resource=_resource(reader, added, f"{key}.add_resource") if added is not None else None,
        remove_resource=reader.string(raw, "remove_resource", key, default=None),
        add_tool=_tool(reader, tool, f"{key}.add_tool", capabilities) if tool is not None else None,
    )
