"""Mock toolings (`kind = "mock"`): tools, resources and changes scripted in TOML, for tests without a server.

See `agent_host.config.mock` for the TOML. A script is played once per tooling and host, shared by every
guest: each tool's results in call order, and the `updates` from the first subscription on. A
script too short for its calls fails them, saying so.
"""

from __future__ import annotations

import logging
import threading
from typing import ClassVar

import anyio
from anyio.abc import TaskGroup

from agent_host.config import MockResource, MockResult, MockTool, MockToolingConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallResult, JsonObject, ResourceData, ResourceSpec, ToolSpec
from agent_host.toolings.base import Change, ConfiguredTooling, ProgressFn, WatchSet

logger = logging.getLogger(__name__)


class MockTooling(ConfiguredTooling):
    """A scripted tooling."""

    kind: ClassVar[str] = "mock"
    _config: MockToolingConfig

    def __init__(self, config: MockToolingConfig, *, nursery: TaskGroup) -> None:
        super().__init__(config)
        self._nursery = nursery
        self._tools: dict[str, MockTool] = {tool.name: tool for tool in config.mock.tools}
        self._specs: dict[str, ToolSpec] = {tool.name: _spec(tool) for tool in config.mock.tools}
        self._calls: dict[str, int] = {}
        self._calls_lock = threading.Lock()
        """Guards `_calls`: calls are counted on the loop and, by `call_tool_now`, on guest threads."""
        self._resources: dict[str, MockResource] = {r.uri: r for r in config.mock.resources}
        self._script_started = False

    def _where(self) -> str:
        return f"mock tooling {self.name!r}"

    async def list_tools(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def cached_tool_spec(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    async def call_tool(
        self, name: str, arguments: JsonObject, progress: ProgressFn | None = None, *, agent: str = ""
    ) -> CallResult:
        """Answer with the tool's next result, one per call (counted per tool, across every guest of the host).

        A result may take `delay` seconds (cancellable; reporting `progress` that many times,
        evenly, meanwhile). After the last result, `repeat_last = true` repeats it; otherwise the
        call fails with `tool-failed` naming the tool, the call's number and the length of the
        script, so a test author sees at once that the script is too short.
        """
        await self.tool_spec(name)
        result = self._next(name, at_once=False)
        assert result is not None
        await _wait(result, progress)
        return _answer(result)

    def call_tool_now(self, name: str, arguments: JsonObject, *, agent: str = "") -> CallResult | None:
        """The next result of tool `name` when it has no `delay` and no `progress` (see `call_tool`)."""
        if self.cached_tool_spec(name) is None:
            return None  # `call_tool` on the loop re-lists and says which tools exist
        result = self._next(name, at_once=True)
        return None if result is None else _answer(result)

    def _next(self, name: str, *, at_once: bool) -> MockResult | None:
        """Take the next scripted result of tool `name` (counting the call); with `at_once`, only a
        result that needs no waiting (else None, and the call is not counted)."""
        tool = self._tools[name]
        with self._calls_lock:
            number = self._calls.get(name, 0) + 1
            if number <= len(tool.results):
                result = tool.results[number - 1]
            elif tool.repeat_last and tool.results:
                result = tool.results[-1]
            else:
                self._calls[name] = number
                raise ToolingError(
                    ErrorCode.TOOL_FAILED,
                    f"{self._where()}: tool {name!r} has no scripted result for call #{number} (its script has "
                    f"{len(tool.results)}); add results to it in {self._config.origin}, or set repeat_last = true",
                )
            if at_once and (result.delay or result.progress):
                return None
            self._calls[name] = number
            return result

    async def list_resources(self) -> list[ResourceSpec]:
        return [
            ResourceSpec(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
            for r in self._resources.values()
        ]

    async def read_resource(self, uri: str) -> ResourceData:
        """The resource as written (or as an update left it); an unknown URI is `not-found`."""
        resource = self._resources.get(uri)
        if resource is None:
            raise ToolingError(
                ErrorCode.NOT_FOUND, f"{self._where()} has no resource {uri!r} (list the resources to see valid URIs)"
            )
        return ResourceData(uri=uri, mime_type=resource.mime_type, text=resource.text, blob=resource.blob)

    async def set_watch(self, watch: WatchSet) -> None:
        """Start the scripted `updates` at the first subscription to anything of the tooling (once)."""
        if watch and not self._script_started and self._config.mock.updates:
            self._script_started = True
            self._nursery.start_soon(self._play, name=f"mock-updates-{self.name}")

    async def _play(self) -> None:
        """Run the `updates`, each at `after` seconds from the first subscription.

        An update changes a resource's content (subscribers of that URI are notified), adds or
        removes a resource (list subscribers are notified) or adds a tool (tool-list subscribers are
        notified).
        """
        started = anyio.current_time()
        for update in sorted(self._config.mock.updates, key=lambda u: u.after):
            await anyio.sleep_until(started + update.after)
            if update.resource is not None:
                old = self._resources.get(update.resource)
                self._resources[update.resource] = MockResource(
                    uri=update.resource,
                    name=old.name if old else update.resource,
                    description=old.description if old else None,
                    mime_type=old.mime_type if old else None,
                    text=update.text,
                    blob=update.blob,
                )
                self._changed(Change("resource", update.resource))
                if old is None:
                    self._changed(Change("resources"))
            elif update.add_resource is not None:
                self._resources[update.add_resource.uri] = update.add_resource
                self._changed(Change("resources"))
            elif update.remove_resource is not None:
                self._resources.pop(update.remove_resource, None)
                self._changed(Change("resources"))
            elif update.add_tool is not None:
                self._tools[update.add_tool.name] = update.add_tool
                self._specs[update.add_tool.name] = _spec(update.add_tool)
                self._changed(Change("tools"))


def _spec(tool: MockTool) -> ToolSpec:
    return ToolSpec(
        name=tool.name,
        description=tool.description,
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=dict(tool.annotations) if tool.annotations is not None else None,
        capabilities=frozenset(tool.capabilities) if tool.capabilities is not None else None,
    )


async def _wait(result: MockResult, progress: ProgressFn | None) -> None:
    if result.progress and progress is not None:
        for step in range(1, result.progress + 1):
            await anyio.sleep(result.delay / result.progress)
            progress(step, result.progress, f"step {step} of {result.progress}")
    elif result.delay:
        await anyio.sleep(result.delay)


def _answer(result: MockResult) -> CallResult:
    """`result` in MCP's wire form: `text` → a text block; `structured` → `structuredContent` plus its
    JSON as text; `error` → `isError` with that text (`tool-failed` for the guest); `content` → the
    given content blocks."""
    if result.error is not None:
        return CallResult.from_error(result.error)
    if result.structured is not None:
        return CallResult.from_structured(dict(result.structured))
    if result.content is not None:
        return CallResult.from_content([dict(block) for block in result.content])
    return CallResult.from_text(result.text or "")
