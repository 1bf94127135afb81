"""What every tooling kind shares (`ConfiguredTooling`), the Python tool base class, and lazy kinds.

One base gives every kind one not-found message, listener handling and defaults; Python tools get a base
class instead of attribute probes; kinds are registered lazily, so importing the runtime or the session
does not import the MCP SDK.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.toolings import KINDS
from agent_host.toolings.base import Change, WatchSet
from agent_host.tools import BaseTool, ToolContext, as_tool
from tests.support.sessionkit import World, on_loop

ROOT = Path(__file__).resolve().parents[3]


def unknown(world: World, name: str, tool: str) -> ToolingError:
    tooling = world.tooling(name)
    with pytest.raises(ToolingError) as caught:
        on_loop(world.bridge, tooling.tool_spec, tool)
    return caught.value


def test_every_kind_says_the_same_when_it_has_no_such_tool(world: World) -> None:
    assert unknown(world, "m", "nope") == ToolingError(
        ErrorCode.NOT_FOUND, "mock tooling 'm' has no tool 'nope'; its tools are: echo, write, slow, hidden"
    )
    assert unknown(world, "other", "nope") == ToolingError(
        ErrorCode.NOT_FOUND, "mock tooling 'other' has no tool 'nope'; its tools are: (none)"
    )
    assert unknown(world, "py", "nope").message.startswith(
        "tooling 'py' has no tool 'nope'; its tools are: word_count,"
    )


def test_a_kind_without_resources_gets_the_defaults(world: World) -> None:
    python = world.tooling("py")
    assert on_loop(world.bridge, python.list_resources) == []
    with pytest.raises(ToolingError) as caught:
        on_loop(world.bridge, python.read_resource, "file:///x")
    assert caught.value == ToolingError(
        ErrorCode.NOT_FOUND, "tooling 'py' has no resources (it is a python tooling): 'file:///x'"
    )
    assert python.approval_view("plain", {"a": 1}) == {"a": 1}


def test_changes_reach_the_one_registered_listener(world: World) -> None:
    mock = world.tooling("m")
    seen: list[Change] = []

    async def subscribe_and_wait() -> None:
        tools_changed = anyio.Event()

        def listener(change: Change) -> None:
            seen.append(change)
            if change.kind == "tools":
                tools_changed.set()

        mock.set_listener(listener)  # replaces the shared Watchers' listener for this test
        await mock.set_watch(WatchSet(tool_list=True))
        with anyio.fail_after(5):
            await tools_changed.wait()

    on_loop(world.bridge, subscribe_and_wait)
    assert Change("resource", "mock://a") in seen


def test_kinds_are_a_table_of_factories() -> None:
    assert sorted(KINDS) == ["mcp", "mock", "python"]


@pytest.mark.parametrize(
    "imports",
    [
        "agent_host.runtime.engine, agent_host.runtime.guest, agent_host.session",
        "agent_host.toolings, agent_host.app.host",
    ],
)
@pytest.mark.real_processes  # its subject: a process of its own
def test_importing_the_runtime_or_the_session_does_not_import_the_mcp_sdk(imports: str) -> None:
    code = f"import {imports}, sys; assert 'mcp' not in sys.modules, sorted(m for m in sys.modules if 'mcp' in m)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr


@pytest.mark.real_processes  # its subject: a process of its own
def test_a_process_with_only_mock_and_python_toolings_never_imports_mcp(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tests.support.sessionkit import World\n"
        f"world = World(Path({str(tmp_path)!r}))\n"
        "try:\n"
        "    session = world.session()\n"
        "    session.list_tools(session.get('m'))\n"
        "    session.list_tools(session.get('py'))\n"
        "    session.close()\n"
        "finally:\n"
        "    world.close()\n"
        "assert 'mcp' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr


class Minimal(BaseTool):
    name = "minimal"
    description = "Only what is required."
    parameters_schema: dict[str, Any] = {"type": "object"}

    def execute(self, params: dict[str, Any], ctx: ToolContext) -> Any:
        return "done"


def test_the_base_class_gives_every_optional_part_its_default() -> None:
    tool = Minimal()
    tool.validate_arguments({"x": 1})  # accepts anything
    assert tool.capabilities() is None
    assert tool.approval_arguments({"x": 1}) == {"x": 1}
    assert tool.prepare(None) is None  # type: ignore[arg-type]
    assert (tool.is_builtin, tool.is_async) == (False, False)
    assert as_tool(tool) is tool


class Plain:
    """The protocol only, with some optional parts written the other accepted ways."""

    name = "plain"
    description = "A plain object."
    parameters_schema: dict[str, Any] = {"type": "object"}
    capabilities = frozenset({"network"})  # a collection, not a method
    is_builtin = True

    def __init__(self) -> None:
        self.prepared = False

    async def prepare(self, ctx: ToolContext) -> None:
        self.prepared = True

    async def execute(self, params: dict[str, Any], ctx: ToolContext) -> Any:
        return params


def test_a_plain_object_keeps_its_own_optional_parts_and_gets_defaults_for_the_rest() -> None:
    plain = Plain()
    tool = as_tool(plain)
    assert (tool.name, tool.description, tool.parameters_schema) == ("plain", "A plain object.", {"type": "object"})
    assert set(tool.capabilities() or ()) == {"network"}
    assert (tool.is_builtin, tool.is_async) == (True, True)
    assert tool.approval_arguments({"a": 1}) == {"a": 1}
    pending = tool.prepare(None)  # type: ignore[arg-type]
    assert pending is not None
    anyio.run(_await, pending)
    assert plain.prepared


async def _await(pending: Any) -> None:
    await pending
