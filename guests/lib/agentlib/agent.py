"""`@agent`: a plain function is the guest's `run`.

    from agentlib import agent, tooling

    demo = tooling("demo")

    @agent
    def run(input: str) -> str:
        return demo.echo(text=input)

The function takes the input (`str`, or no parameter), or a type `agentlib.typed` reads: the input
is then parsed as JSON and checked (a mismatch is the err `invalid-arguments: PATH: problem`).
What it returns is the answer: a `str` as it is, `None` as "", anything else as JSON (a dataclass
as its fields). What it raises is the err, as for a `WitWorld` guest (`agentlib.entry`): a host
error with its code, any other exception as `TYPE: message (at FILE:LINE)`. A guest has one.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import typing
from collections.abc import Callable
from typing import Any, TypeVar

from componentize_py_types import Err

from agentlib.typed import InputError, parse, schema_of

__all__ = ("Agent", "agent", "registered")

_F = TypeVar("_F", bound=Callable[..., Any])

_AGENTS: list[Agent] = []


class Agent:
    """A function registered with `@agent`, and how its input and answer are read and written."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        parameters = list(inspect.signature(fn).parameters.values())
        if len(parameters) > 1:
            names = ", ".join(parameter.name for parameter in parameters)
            raise TypeError(
                f"@agent {fn.__name__}({names}): an agent takes one parameter, its input, or none; put "
                f"{names} in a TypedDict or a dataclass and take that"
            )
        self.takes_input = bool(parameters)
        hints = typing.get_type_hints(fn) if parameters else {}
        self.input_type: Any = hints.get(parameters[0].name, str) if parameters else str
        self.typed = self.input_type is not str
        if self.typed:
            schema_of(self.input_type)  # a type agentlib cannot read fails here, at import

    def input_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the input, when the function takes a typed one; None for text."""
        return schema_of(self.input_type) if self.typed else None

    def __call__(self, text: str) -> str:
        """Run the function on the input `text`; its answer as text."""
        if not self.takes_input:
            return answer_text(self.fn())
        if not self.typed:
            return answer_text(self.fn(text))
        try:
            value = json.loads(text) if text.strip() else ({} if self._wants_object() else None)
        except ValueError as exc:
            raise Err(f"invalid-arguments: the input is not JSON ({exc})") from None
        try:
            parsed = parse(self.input_type, value)
        except InputError as exc:
            raise Err(f"invalid-arguments: {exc}") from None
        return answer_text(self.fn(parsed))

    def _wants_object(self) -> bool:
        return schema_of(self.input_type).get("type") == "object"


def answer_text(value: object) -> str:
    """What `run` answers for the function's return `value` (see the module docstring; an `Enum` is
    its value, a dataclass its fields, at any depth)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, default=_encoded)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"run() returned {type(value).__name__}, which is not text nor JSON: {exc}") from None


def _encoded(value: object) -> object:
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    raise TypeError(f"{type(value).__name__} is not JSON (return str, dict, list, numbers, a dataclass or an Enum)")


def agent(fn: _F) -> _F:
    """Make `fn` the guest's `run` (see the module docstring); `fn` is returned unchanged."""
    if _AGENTS and _AGENTS[0].fn is not fn:
        first = _AGENTS[0].fn.__name__
        raise TypeError(
            f"@agent {fn.__name__}: this guest's agent is already {first}(); a guest has one @agent function"
        )
    if not _AGENTS:
        _AGENTS.append(Agent(fn))
    return fn


def registered() -> Agent | None:
    """The guest's `@agent` function, once its module was imported; None without one."""
    return _AGENTS[0] if _AGENTS else None
