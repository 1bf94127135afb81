"""What `serve` tells a client about a code agent: its tool's arguments, answer and typed API.

A code agent (`[agents.NAME] code = "python" | "javascript"`) is offered as a tool taking `{"code":
string}` and answering `{"result", "stdout"}` (structured). Its description is the API the snippet
sees: each granted tooling with its tools as Python or TypeScript-like signatures
(`_support.signatures`, from the tools' input and output schemas) and the first lines of their
descriptions, listed once, when serving starts, as the agent sees them (its grants and
allow-lists). It is at most `MAX_DESCRIPTION` characters: each tooling's tools are listed while they
fit (a later, smaller tooling still can), those left out are counted by tooling, and the
description says how to discover them inside a snippet. A tooling that cannot be listed then
is named with the reason (its tools are still callable later).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from agent_host._support.printable import printable
from agent_host._support.signatures import attributes, identifier, js_identifier, js_signature, signature
from agent_host.app.host import Host
from agent_host.config import AgentConfig
from agent_host.errors import ToolingError
from agent_host.model import ToolSpec
from agent_host.policy.grants import AgentPolicy

MAX_DESCRIPTION: Final = 16 * 1024
"""Characters of a code agent's tool description."""

MAX_TOOL_DESCRIPTION: Final = 300
"""Characters of one tool's description in it (its first paragraph)."""

NOTICE_ROOM: Final = 1024
"""Characters kept for the line naming what was left out."""

MAX_LEFT_OUT_NAMED: Final = 8
"""Toolings named in that line; the others are counted."""


def code_schema(language: str) -> Mapping[str, Any]:
    """The arguments of a code agent's tool: `{"code": string}`."""
    about = f"{LANGUAGES[language]} source to run; the value of its last expression is the result."
    return {
        "type": "object",
        "properties": {"code": {"type": "string", "description": about}},
        "required": ["code"],
        "additionalProperties": False,
    }


LANGUAGES: Final = {"python": "Python", "javascript": "JavaScript"}


def answer_schema(language: str) -> Mapping[str, Any]:
    """The structured answer of a code agent's tool: `{"result", "stdout"}`."""
    otherwise = "String" if language == "javascript" else "repr"
    return {
        "type": "object",
        "properties": {
            "result": {
                "description": f"The value of the code's last expression (JSON, else its {otherwise}), or null."
            },
            "stdout": {"type": "string", "description": "What the code printed (bounded)."},
        },
        "required": ["result", "stdout"],
    }


PYTHON: Final = """\
Runs Python code (CPython, its standard library) in a fresh sandbox: no files, network or
environment; nothing is kept between calls. The value of the code's last expression is `result`
(JSON as it is, else its repr); what it prints is `stdout`. An exception fails the call with its
traceback.

The toolings below are importable from the module `toolings` (`from toolings import NAME`, or
`toolings.NAME`). Each tool is a function taking keyword arguments; it returns the tool's structured
content when it gives one, else its text, and raises `toolings.ToolError` (`.code`, `.message`) on
failure. `toolings.gather(NAME.TOOL.start(...), ...)` runs several calls at once and returns their
results in order; `help(NAME.TOOL)` prints a tool's signature and description;
`toolings.search("text")` finds tools by name or description.
"""

JAVASCRIPT: Final = """\
Runs JavaScript code (a script, evaluated as with eval) in a fresh sandbox: no files, network or
environment; nothing is kept between calls. The value of the code's last expression is `result`
(JSON as it is, else its String); what it writes with `console.log` is `stdout`. A thrown error
fails the call with its message and the code's own frames.

The toolings below are properties of the global `toolings` (`toolings.NAME`). Each tool is a
function taking one object of arguments; it returns the tool's structured content when it gives
one, else its text, and throws `toolings.ToolError` (`.code`, `.message`) on failure.
`toolings.gather(toolings.NAME.TOOL.start({...}), ...)` runs several calls at once and returns
their results in order; `help(toolings.NAME.TOOL)` prints a tool's schema and description;
`toolings.search("text")` finds tools by name or description.
"""


def describe(host: Host, agent: AgentConfig, policy: AgentPolicy) -> str:
    """The description of code agent `agent`'s tool (see the module docstring). Tools are taken
    round-robin across the toolings (the first of each, then the second, ...) while they fit, so a
    tooling with many tools does not crowd out the others; what is left out is counted by tooling."""
    head = f"{agent.description.strip()}\n\n" if agent.description else ""
    language = agent.code or "python"
    text = head + (JAVASCRIPT if language == "javascript" else PYTHON)
    room = MAX_DESCRIPTION - len(text) - NOTICE_ROOM
    attrs = attributes(policy.grants.toolings)
    sections = [(name, *_section(host, agent.name, policy, name, attrs[name], language)) for name in sorted(attrs)]
    kept = [0] * len(sections)
    shown = [False] * len(sections)
    for index, (_, title, _lines) in enumerate(sections):
        if len(title) + 1 <= room:
            shown[index], room = True, room - len(title) - 1
    depth, open_ = 0, [shown[i] and bool(sections[i][2]) for i in range(len(sections))]
    while any(open_):
        for index, (_, _title, lines) in enumerate(sections):
            if not open_[index]:
                continue
            if depth >= len(lines) or len(lines[depth]) > room:
                open_[index] = False
                continue
            kept[index], room = kept[index] + 1, room - len(lines[depth])
        depth += 1
    left_out: list[str] = []
    for index, (name, title, lines) in enumerate(sections):
        if shown[index]:
            text += "\n" + title + "".join(lines[: kept[index]])
        if kept[index] < len(lines) or not shown[index]:
            left_out.append(f"{_reached(name, attrs[name])} ({len(lines) - kept[index]} of its {len(lines)} tools)")
    if len(left_out) > MAX_LEFT_OUT_NAMED:
        left_out[MAX_LEFT_OUT_NAMED:] = [f"and {len(left_out) - MAX_LEFT_OUT_NAMED} more toolings"]
    if left_out:
        text += (
            f"\nNot listed here (the description's bound): {'; '.join(left_out)}. Inside the code, "
            '`toolings.search("text")` finds tools and `help(toolings.NAME)` lists a tooling\'s.\n'
        )
    return text[:MAX_DESCRIPTION]


def _reached(name: str, attr: str | None) -> str:
    """How a snippet reaches tooling `name`: `toolings.ATTR`, else `toolings.get("NAME")`."""
    return f"toolings.{attr}" if attr is not None else f"toolings.get({json.dumps(name)})"


def _section(
    host: Host, agent: str, policy: AgentPolicy, name: str, attr: str | None, language: str
) -> tuple[str, list[str]]:
    """The title line of tooling `name` and one text per tool (its signature and description)."""
    reached = _reached(name, attr)
    local = attr or identifier(name)
    title = reached + (f" (tooling {json.dumps(name)})" if attr != name else "") + ":\n"
    try:
        with host.tooling(name, agent=agent, policy=policy) as client:
            tools = client.list_tools()
    except ToolingError as exc:
        failed = printable(f"{exc.code}: {exc.message}", MAX_TOOL_DESCRIPTION)
        return title, [
            f"    (its tools could not be listed when serving started: {failed}; help({reached}) lists them)\n"
        ]
    return title, [_tool(local, tool, language) for tool in tools]


def _tool(attr: str, tool: ToolSpec, language: str) -> str:
    if language == "javascript":
        shown = js_signature(tool.name, tool.input_schema, tool.output_schema)
        named = js_identifier(tool.name)
    else:
        shown = signature(tool.name, tool.input_schema, tool.output_schema)
        named = identifier(tool.name)
    if named.startswith("_"):  # not an attribute: by its name
        shown = f"[{json.dumps(tool.name)}]" + shown[shown.index("(") :]
    else:
        shown = "." + shown
    about = " ".join((tool.description or "").strip().split("\n\n", 1)[0].split())  # every line break flattened
    about = printable(about, MAX_TOOL_DESCRIPTION)
    return f"    {attr}{shown}\n" + (f"        {about}\n" if about else "")
