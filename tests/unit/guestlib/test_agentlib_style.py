"""agentlib's plain-function style, in plain CPython over the stubbed bindings: `@agent` as the guest's
`run` (text, typed input parsed and checked by path, answers as text or JSON, one per guest),
`tooling()` objects taken at first use whose tools are methods, `listen()`'s typed events for
`match`, `provider()` taken at first use, stdlib `logging` reaching the host's `log` with its level,
and the JSON Schema a typed input has.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import logging
import sys
from types import ModuleType
from typing import Any, Literal, NotRequired, TypedDict

import pytest

from tests.support.guestlib_fakes import World


class Order(TypedDict):
    """An order of some items."""

    item: str
    qty: int
    note: NotRequired[str | None]


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0
    tags: list[str] = dataclasses.field(default_factory=list)


def guest_module(agentlib: ModuleType, fn: Any) -> ModuleType:
    """A guest module holding only `fn`, made an agent (as `app.py` with `@agent` is)."""
    module = ModuleType("app")
    module.run = agentlib.agent(fn)  # type: ignore[attr-defined]
    return module


def run(agentlib: ModuleType, fn: Any, text: str) -> str:
    """`run(text)` of a guest whose `@agent` is `fn`, as the build's entry makes it."""
    entry = importlib.import_module("agentlib.entry")
    world_class = entry.world(guest_module(agentlib, fn))
    answer: str = world_class().run(text)
    return answer


def test_a_plain_function_is_the_guests_run_and_its_answer_is_text_or_json(agentlib: ModuleType) -> None:
    assert run(agentlib, lambda input: input.upper(), "hello") == "HELLO"


class Color(enum.Enum):
    RED = "red"


@pytest.mark.parametrize(
    ("returned", "text"),
    [
        ({"a": [1, 2]}, '{"a": [1, 2]}'),
        ([1, "x"], '[1, "x"]'),
        (None, ""),
        (3, "3"),
        (Point(1, 2), None),
        ({"color": Color.RED}, '{"color": "red"}'),
    ],
)
def test_what_it_returns_is_the_answer(agentlib: ModuleType, returned: Any, text: str | None) -> None:
    expected = text if text is not None else json.dumps(dataclasses.asdict(returned))
    assert run(agentlib, lambda input: returned, "") == expected


def test_a_typed_input_is_parsed_from_json_and_checked_by_path(world: World, agentlib: ModuleType) -> None:
    seen: list[Any] = []

    def take(order: Order) -> str:
        seen.append(order)
        return f"{order['qty']} x {order['item']}"

    assert run(agentlib, take, '{"item": "tea", "qty": 2}') == "2 x tea"
    assert seen == [{"item": "tea", "qty": 2}]
    for text, words in [
        ('{"item": "tea", "qty": "two"}', 'invalid-arguments: $.qty: expected an integer, got "two"'),
        ('{"item": "tea"}', "invalid-arguments: $.qty: is required"),
        ('{"item": "tea", "qty": 1, "size": 3}', "invalid-arguments: $.size: is not a field of Order"),
        ("not json", "invalid-arguments: the input is not JSON"),
    ]:
        with pytest.raises(world.Err) as refused:
            run(agentlib, take, text)
        assert str(refused.value.value).startswith(words), refused.value.value


def test_a_dataclass_input_is_made_with_its_defaults(agentlib: ModuleType) -> None:
    def where(point: Point) -> dict[str, Any]:
        return {"x": point.x, "y": point.y, "tags": point.tags, "type": type(point).__name__}

    assert json.loads(run(agentlib, where, '{"x": 1}')) == {"x": 1.0, "y": 0.0, "tags": [], "type": "Point"}


def test_the_schema_of_a_typed_input_is_what_the_parser_accepts(agentlib: ModuleType) -> None:
    agentlib.agent(lambda order: None)  # the first @agent of the module wins; schemas are its input's
    typed = importlib.import_module("agentlib.typed")
    assert typed.schema_of(Order) == {
        "type": "object",
        "properties": {
            "item": {"type": "string"},
            "qty": {"type": "integer"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["item", "qty"],
        "additionalProperties": False,
        "description": "An order of some items.",
    }
    assert typed.schema_of(list[Literal["a", "b"]]) == {"type": "array", "items": {"enum": ["a", "b"]}}
    assert typed.schema_of(Point)["required"] == ["x"]
    with pytest.raises(TypeError):
        typed.schema_of(set[int])


def test_a_guest_has_one_agent_and_a_module_without_one_says_how(world: World, agentlib: ModuleType) -> None:
    def first(input: str) -> str:
        return "1"

    def second(input: str) -> str:
        return "2"

    agentlib.agent(first)
    with pytest.raises(TypeError, match=r"@agent second: this guest's agent is already first\(\)"):
        agentlib.agent(second)
    sys.modules["agentlib.agent"]._AGENTS.clear()
    entry = importlib.import_module("agentlib.entry")
    with pytest.raises(ImportError, match="has no @agent function"):
        entry.world(ModuleType("app"))


def test_a_tooling_is_taken_at_first_use_and_its_tools_are_methods(world: World, agentlib: ModuleType) -> None:
    demo = agentlib.tooling("demo")
    assert world.toolings == {}  # nothing asked of the host yet (a module's top level runs at build time)
    structured = {"content": [{"type": "text", "text": "5"}], "structuredContent": {"sum": 5}}
    texts = {"content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]}
    fake = world.tooling("demo")
    fake.answers["call_tool_blocking"] = lambda name, arguments: world.result(
        name, json.loads(arguments), structured if name == "add" else texts
    )
    assert demo.add(a=2, b=3) == {"sum": 5}
    assert demo.echo(text="hi") == "hi\nthere"
    assert demo.tool("call")() == "hi\nthere"  # a tool named like a method
    whole = demo.call("add", {"a": 1}, b=2)
    assert isinstance(whole, agentlib.ToolResult) and whole.arguments == {"a": 1, "b": 2}
    fake.fail["call_tool_blocking"] = world.error("TOOL_FAILED", "no such number")
    with pytest.raises(agentlib.ToolingError) as failed:
        demo.add(a="x")
    assert (failed.value.code, failed.value.message) == ("tool-failed", "no such number")
    demo.close()
    assert fake.handle is None


def test_listen_yields_typed_events_for_match_until_the_call_ends(world: World, agentlib: ModuleType) -> None:
    demo = agentlib.tooling("demo")
    slow = demo.start("sleep", seconds=1)
    progress = world.types.Progress(1.0, 2.0, "half")
    done = world.result("sleep", {"seconds": 1}, {"content": [{"type": "text", "text": "slept"}]})
    world.queue.extend([world.envelope(slow.id, "Progress", progress), world.envelope(slow.id, "ToolResult", done)])
    seen: list[tuple[Any, ...]] = []
    for event in agentlib.listen(5, until=slow):
        match event:
            case agentlib.Progress(progress=step, total=total):
                seen.append(("progress", step, total))
            case agentlib.Result(value=value):
                seen.append(("result", value))
    assert seen == [("progress", 1.0, 2.0), ("result", "slept")]
    world.queue.append(world.envelope("other", "Error", world.error("TIMEOUT", "too slow")))
    (failed,) = list(agentlib.listen(0))
    assert isinstance(failed, agentlib.Failed) and failed.error.code == "timeout"


def test_a_provider_is_taken_at_first_use(world: World, agentlib: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    models = sys.modules["agentlib.models"]

    def get(name: str) -> Any:
        asked.append(name)
        return world.tooling(name)

    monkeypatch.setattr(models._provider, "get", get)
    llm = agentlib.provider("llm")
    assert asked == [] and repr(llm) == "provider('llm')"
    assert llm.handle is world.tooling("llm") and asked == ["llm"]


def test_stdlib_logging_reaches_the_hosts_log_with_its_level(
    agentlib: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = sys.modules["agentlib.logs"]
    sent: list[tuple[Any, str]] = []
    monkeypatch.setattr(logs._log, "log", lambda level, message: sent.append((level, message)))
    logging.getLogger("shop").info("an order of %d", 3)
    logging.getLogger("shop").warning("low stock")
    logging.getLogger().error("broken")
    logging.getLogger("shop").debug("not shown: the root level is INFO")
    level = logs._log.Level
    assert sent == [
        (level.INFO, "shop: an order of 3"),
        (level.WARN, "shop: low stock"),
        (level.ERROR, "broken"),
    ]
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, logs.HostHandler)]:
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)


def test_a_class_guest_keeps_working_and_says_no_schema(world: World, agentlib: ModuleType) -> None:
    """The style before `@agent`: a module's `WitWorld` class is its guest, wrapped as before."""
    wit_world = importlib.import_module("wit_world")

    class WitWorld(wit_world.WitWorld):  # type: ignore[misc, name-defined]
        def run(self, input: str) -> str:
            return f"class: {input}"

    module = ModuleType("app")
    module.WitWorld = WitWorld  # type: ignore[attr-defined]
    guest = importlib.import_module("agentlib.entry").world(module)()
    assert guest.run("hi") == "class: hi" and guest.describe() is None


class Tree(TypedDict):
    name: str
    children: NotRequired[list[Tree]]


class Inner(TypedDict):
    a: int


def test_unusable_types_and_shapes_say_what_to_do(world: World, agentlib: ModuleType) -> None:
    typed = importlib.import_module("agentlib.typed")
    with pytest.raises(TypeError, match="recursive type Tree"):
        typed.schema_of(Tree)
    with pytest.raises(TypeError, match=r"put a, b in a TypedDict or a dataclass"):
        agentlib.agent(lambda a, b: None)
    with pytest.raises(typed.InputError, match=r"^\$\.a: is required$"):  # the member of the value's kind
        typed.parse(Inner | None, {})
    with pytest.raises(typed.InputError, match=r"expected an object, got an array"):
        typed.parse(Inner, [])
    demo = agentlib.tooling("demo")
    with pytest.raises(TypeError, match=r"tool arguments are keywords: demo.add\(name=value"):
        demo.add(2, 3)


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt()])
def test_sys_exit_and_keyboard_interrupt_in_run_are_its_failure(
    world: World, agentlib: ModuleType, raised: BaseException
) -> None:
    """Not a trap with wasmtime's own text: the failure's type and the guest's line, as any exception."""

    def run_it(input: str) -> str:
        raise raised

    with pytest.raises(world.Err) as failed:
        run(agentlib, run_it, "")
    assert str(failed.value.value).startswith(type(raised).__name__)
