"""What `serve` tells a client about a code agent: its tool's arguments, answer and typed API.

A code agent (`[agents.NAME] code = "python" | "javascript"`) is offered as a tool taking `{"code":
string}` and answering `{"result", "stdout"}` (structured). Its description is the API the snippet
sees: each granted tooling with its tools as Python or TypeScript-like signatures
(`_support.signatures`, from the tools' input and output schemas) and the first lines of their
descriptions, listed once, when serving starts, as the agent sees them (its grants and
allow-lists). It is at most `MAX_DESCRIPTION` characters: past that, the rest is named by tooling
and the description says how to discover it inside a snippet. A tooling that cannot be listed then
is named with the reason (its tools are still callable later).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agent_host._support.signatures import identifier, js_signature, signature
from agent_host.app.host import Host
from agent_host.config import AgentConfig
from agent_host.errors import ToolingError
from agent_host.model import ToolSpec
from agent_host.policy.grants import AgentPolicy

MAX_DESCRIPTION: Final = 16 * 1024
"""Characters of a code agent's tool description."""

MAX_TOOL_DESCRIPTION: Final = 300
"""Characters of one tool's description in it (its first paragraph)."""


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

ANSWER_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "result": {"description": "The value of the code's last expression (JSON, else its repr), or null."},
        "stdout": {"type": "string", "description": "What the code printed (bounded)."},
    },
    "required": ["result", "stdout"],
}
"""The structured answer of a code agent's tool."""

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
    """The description of code agent `agent`'s tool (see the module docstring)."""
    head = f"{agent.description.strip()}\n\n" if agent.description else ""
    language = agent.code or "python"
    text = head + (JAVASCRIPT if language == "javascript" else PYTHON)
    left_out: list[str] = []
    for name in sorted(policy.grants.toolings):
        section = _section(host, agent.name, policy, name, language)
        if left_out or len(text) + len(section) + 1 > MAX_DESCRIPTION:
            left_out.append(identifier(name))
            continue
        text += "\n" + section
    if left_out:
        text += (
            f"\nNot listed here (the description's bound): toolings {', '.join(left_out)}. Inside the code, "
            '`toolings.search("text")` finds their tools and `help(toolings.NAME)` lists one.\n'
        )
    return text


def _section(host: Host, agent: str, policy: AgentPolicy, name: str, language: str) -> str:
    attr = identifier(name)
    title = f"toolings.{attr}" + (f" (tooling {name!r})" if attr != name else "") + ":"
    try:
        with host.tooling(name, agent=agent, policy=policy) as client:
            tools = client.list_tools()
    except ToolingError as exc:
        return (
            f"{title}\n    (its tools could not be listed when serving started: {exc.code}: {exc.message}; "
            f"`help(toolings.{attr})` lists them)\n"
        )
    return title + "\n" + "".join(_tool(attr, tool, language) for tool in tools)


def _tool(attr: str, tool: ToolSpec, language: str) -> str:
    render = js_signature if language == "javascript" else signature
    line = f"    {attr}.{render(tool.name, tool.input_schema, tool.output_schema)}\n"
    about = (tool.description or "").strip().split("\n\n", 1)[0].replace("\n", " ")
    if len(about) > MAX_TOOL_DESCRIPTION:
        about = about[: MAX_TOOL_DESCRIPTION - 3] + "..."
    return line + (f"        {about}\n" if about else "")
