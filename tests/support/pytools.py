"""Python tools used by the component tests of `kind = "python"` toolings (imported by the host).

They run in the test process, so tests can look at what they observed (`EVENTS`).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Annotated, Any

import anyio
from pydantic import Field

from agent_host import ToolContext, ToolError, tool

EVENTS: list[str] = []
"""What the tools observed, in order (for assertions)."""


@tool(capabilities={"read_only"})
def word_count(text: Annotated[str, Field(description="The text to count")], minimum: int = 0) -> dict[str, int]:
    """Count the words of a text.

    Longer explanations after the first paragraph are not part of the description.
    """
    words = len(text.split())
    if words < minimum:
        raise ToolError(f"only {words} words, fewer than {minimum}")
    return {"words": words}


@tool
async def slow(seconds: float, ctx: ToolContext) -> str:
    """Sleep, reporting progress every 0.1 s; records whether it was cancelled."""
    EVENTS.append(f"slow started by {ctx.agent} on {ctx.tooling}")
    try:
        steps = max(1, int(seconds * 10))
        for step in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            ctx.report_progress(step, steps, f"step {step}")
    except anyio.get_cancelled_exc_class():
        EVENTS.append("slow cancelled")
        raise
    EVENTS.append("slow finished")
    return f"slept {seconds} s"


@tool
def threaded(steps: int, ctx: ToolContext) -> dict[str, Any]:
    """A sync tool (run in a worker thread) that reports progress."""
    for step in range(1, steps + 1):
        time.sleep(0.02)
        ctx.report_progress(step, steps)
    return {"steps": steps, "agent": ctx.agent}


@tool(capabilities={"workspace_write"}, approval_arguments=lambda params: {"path": params["path"]})
def write_note(path: str, text: str) -> str:
    """Write a note (pretend): needs workspace_write; approvers see only the path."""
    EVENTS.append(f"wrote {path}")
    return f"wrote {len(text)} characters to {path}"


def plain(a: int, b: int = 2) -> int:
    """A plain typed function, turned into a tool by the host."""
    return a * b


@tool
def explode() -> str:
    """Raises an unexpected exception."""
    raise RuntimeError("kaboom")


class Deploy:
    """A tool written as a class (the protocol, not the decorator)."""

    is_builtin = True
    name = "deploy"
    description = "Deploy a service."
    parameters_schema = {
        "type": "object",
        "properties": {"service": {"type": "string"}, "env": {"type": "string"}},
        "required": ["service", "env"],
    }

    def validate_arguments(self, params: dict[str, Any]) -> None:
        if params["env"] not in ("staging", "production"):
            raise ValueError(f"env must be staging or production, not {params['env']!r}")

    def capabilities(self) -> set[str]:
        return {"network", "external_side_effect"}

    def execute(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {"deployed": params["service"], "to": params["env"]}


class Broken:
    """Its preparation fails, so it is not offered."""

    name = "broken"
    description = "Never offered."
    parameters_schema: dict[str, Any] = {"type": "object"}

    def prepare(self, ctx: ToolContext) -> None:
        raise OSError("the database is not there")

    def execute(self, params: dict[str, Any], ctx: ToolContext) -> str:
        return "unreachable"


registry = [word_count, slow, threaded, write_note, explode]


class Shaped:
    """Declares an output schema ({"n": integer}) and returns what `mode` says: good or wrong."""

    name = "shaped"
    description = "Returns a structured result that matches its output schema, or not."
    parameters_schema: dict[str, Any] = {"type": "object", "properties": {"mode": {"type": "string"}}}
    output_schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    def execute(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {"n": 1} if params.get("mode") == "good" else {"n": "one"}


def sample(request: dict[str, Any]) -> dict[str, Any]:
    """A sampling hook (`sampling = "tests.support.pytools:sample"`): answers with the prompt, upper-cased."""
    prompt = request["messages"][0]["content"]["text"]
    return {"role": "assistant", "content": {"type": "text", "text": prompt.upper()}, "model": "upper-1"}


@tool
def die(marker: str = "") -> str:
    """End this process at once, as a crashed worker would (SIGKILL). With `marker` (a file path):
    only when the file does not exist yet, creating it, so that a second run goes through."""
    if marker:
        if Path(marker).exists():
            return "survived"
        Path(marker).touch()
    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


@tool
def not_a_number() -> float:
    """Returns NaN, which no JSON text can hold: the host must refuse it as such."""
    return float("nan")


@tool
def half_a_pair() -> str:
    """Returns a lone UTF-16 surrogate, which no UTF-8 text can hold: the host must refuse it as such."""
    return "broken \ud800"
