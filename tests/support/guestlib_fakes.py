"""Fakes of the generated bindings for testing agentlib in plain CPython: `World` (the stubbed
`tooling` and `inbox` imports, the real generated `types`), `FakeTooling` (a handle that answers
as scripted and records what it was asked), and `stub_bindings`, which puts them on `sys.modules`."""

from __future__ import annotations

import importlib
import json
import sys
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import pytest

from agent_host._support.paths import guest_lib_dir

MODULES: Final = ("agentlib", "wit_world", "componentize_py_types")
"""Top-level names the fixture imports afresh and removes again (with their submodules)."""


class FakeTooling:
    """A `tooling` handle: answers from `answers` (method name -> value, or a callable of the
    arguments), raises `Err(error)` for the methods in `fail`, records every call in `asked`."""

    def __init__(self, world: World, name: str) -> None:
        self.world = world
        self.tooling_name = name
        self.handle: int | None = 1
        self.fail: dict[str, Any] = {}
        self.answers: dict[str, Any] = {}
        self.asked: list[tuple[str, tuple[Any, ...]]] = []
        self.open_ids: set[str] = set()
        self.active: set[str] = set()

    def _answer(self, method: str, *args: Any) -> Any:
        self.asked.append((method, args))
        if method in self.fail:
            raise self.world.err(self.fail[method])
        answer = self.answers.get(method)
        return answer(*args) if callable(answer) else answer

    def kind(self) -> str:
        return "mock"

    def name(self) -> str:
        return self.tooling_name

    def list_tools(self) -> Any:
        return self._answer("list_tools")

    def list_resources(self) -> Any:
        return self._answer("list_resources")

    def read_resource(self, uri: str) -> Any:
        return self._answer("read_resource", uri)

    def call_tool_blocking(self, name: str, arguments: str) -> Any:
        return self._answer("call_tool_blocking", name, arguments)

    def call_tool(self, name: str, arguments: str) -> str:
        self._answer("call_tool", name, arguments)
        id = f"call-{len(self.asked)}"
        self.open_ids.add(id)
        return id

    def is_open(self, id: str) -> bool:
        self.asked.append(("is_open", (id,)))
        return id in self.open_ids

    def cancel(self, id: str) -> bool:
        self.asked.append(("cancel", (id,)))
        was = id in self.open_ids
        self.open_ids.discard(id)
        return was

    def _subscribe(self, method: str, *args: Any) -> str:
        self._answer(method, *args)
        id = f"sub-{len(self.asked)}"
        self.active.add(id)
        return id

    def _unsubscribe(self, method: str, id: str) -> bool:
        self.asked.append((method, (id,)))
        was = id in self.active
        self.active.discard(id)
        return was

    def subscribe_resource(self, uri: str) -> str:
        return self._subscribe("subscribe_resource", uri)

    def subscribe_resource_list(self) -> str:
        return self._subscribe("subscribe_resource_list")

    def subscribe_tool_list(self) -> str:
        return self._subscribe("subscribe_tool_list")

    def unsubscribe_resource(self, id: str) -> bool:
        return self._unsubscribe("unsubscribe_resource", id)

    def unsubscribe_resource_list(self, id: str) -> bool:
        return self._unsubscribe("unsubscribe_resource_list", id)

    def unsubscribe_tool_list(self, id: str) -> bool:
        return self._unsubscribe("unsubscribe_tool_list", id)

    def respond(self, id: str, action: Any, content: str | None) -> None:
        self._answer("respond", id, action, content)

    def __enter__(self) -> FakeTooling:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle = None  # as componentize-py marks a dropped resource


class World:
    """The stubbed bindings: the generated `types` and `componentize_py_types`, fake `tooling`
    and `inbox` modules (`toolings` by name; `queue` of envelopes; `waits` the timeouts asked)."""

    def __init__(self, types: ModuleType, runtime: ModuleType) -> None:
        self.types = types
        self.Err = runtime.Err
        self.toolings: dict[str, FakeTooling] = {}
        self.refuse_get: dict[str, Any] = {}
        self.queue: deque[Any] = deque()
        self.waits: list[int | None | str] = []

    def err(self, error: Any) -> BaseException:
        exc: BaseException = self.Err(error)
        return exc

    def error(self, code: str, message: str = "it failed", data: str | None = None) -> Any:
        return self.types.Error(getattr(self.types.ErrorCode, code), message, data)

    def tooling(self, name: str) -> FakeTooling:
        return self.toolings.setdefault(name, FakeTooling(self, name))

    def get(self, name: str) -> FakeTooling:
        if name in self.refuse_get:
            raise self.err(self.refuse_get[name])
        return self.tooling(name)

    def recv(self, timeout_ms: int | None) -> Any:
        self.waits.append(timeout_ms)
        return self.queue.popleft() if self.queue else None

    def try_recv(self) -> Any:
        self.waits.append("try")
        return self.queue.popleft() if self.queue else None

    def envelope(self, id: str, kind: str, value: Any) -> Any:
        return self.types.Envelope(id, getattr(self.types, f"Event_{kind}")(value))

    def result(self, name: str, arguments: dict[str, Any], value: dict[str, Any]) -> Any:
        return self.types.ToolResult(name, json.dumps(arguments), json.dumps(value))


def forget() -> None:
    """Remove the modules of `MODULES` (and their submodules) from `sys.modules`."""
    for name in [n for n in sys.modules if n.split(".")[0] in MODULES]:
        del sys.modules[name]


@contextmanager
def stub_bindings(generated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """The stubbed bindings on `sys.modules`, and agentlib's source folder on `sys.path`; all of it
    removed after the block."""
    forget()
    monkeypatch.syspath_prepend(str(guest_lib_dir()))
    monkeypatch.syspath_prepend(str(generated))
    imports = importlib.import_module("wit_world.imports")
    world = World(importlib.import_module("wit_world.imports.types"), importlib.import_module("componentize_py_types"))
    tooling = ModuleType("wit_world.imports.tooling")
    tooling.Tooling = FakeTooling  # type: ignore[attr-defined]
    tooling.get = world.get  # type: ignore[attr-defined]
    inbox = ModuleType("wit_world.imports.inbox")
    inbox.recv = world.recv  # type: ignore[attr-defined]
    inbox.try_recv = world.try_recv  # type: ignore[attr-defined]
    for name, module in (("tooling", tooling), ("inbox", inbox)):
        monkeypatch.setitem(sys.modules, f"wit_world.imports.{name}", module)
        monkeypatch.setattr(imports, name, module, raising=False)
    try:
        yield world
    finally:
        forget()
