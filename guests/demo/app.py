"""The demo agent: looks around tooling "demo" and reports what it found.

It lists the tools, calls three of them (`call-tool-blocking`), reads a text resource and a binary
one, and returns a readable summary. Input (optional): text to analyse.
"""

import logging

from agentlib import Err, ToolingError, agent, tooling

SAMPLE = "WebAssembly components keep agents in a sandbox.\nTools arrive only through the host."

demo = tooling("demo")


@agent
def run(input: str) -> str:
    text = input.strip() or SAMPLE
    try:
        tools = demo.tools()
        logging.info(f"tooling demo ({demo.kind}) offers {len(tools)} tools")
        counts = demo.word_count(text=text)
        total = demo.add(a=counts["words"], b=counts["lines"])["sum"]
        echoed = demo.call("echo", text="hello from inside the sandbox").text
        readme = demo.read("demo://readme")
        logo = demo.read("demo://logo.png")
    except ToolingError as error:
        raise Err(f"the demo tooling failed: {error}") from None

    signature = "ok" if logo.data.startswith(b"\x89PNG") else "missing"
    lines = [
        f"Tools of 'demo': {', '.join(tool.name for tool in tools)}",
        f"word_count: {counts['words']} words, {counts['lines']} lines, {counts['characters']} characters",
        f"add(words, lines) = {total:g}",
        f"echo: {echoed}",
        f"Resource {readme.uri} ({readme.mime_type}): {readme.text.splitlines()[0]}",
        f"Resource {logo.uri} ({logo.mime_type}): {len(logo.data)} bytes, PNG signature {signature}",
    ]
    return "\n".join(lines)
