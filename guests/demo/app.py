"""The demo agent: looks around tooling "demo" and reports what it found.

It lists the tools, calls three of them with `call-tool-blocking`, reads a text resource and a
binary one, and returns a readable summary. Input (optional): text to analyse.
"""

import wit_world
from agentlib import ToolingError, call, get, list_tools, read_resource
from componentize_py_types import Err
from wit_world.imports import log

SAMPLE = "WebAssembly components keep agents in a sandbox.\nTools arrive only through the host."


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        text = input.strip() or SAMPLE
        try:
            with get("demo") as demo:
                tools = list_tools(demo)
                log.log(log.Level.INFO, f"tooling demo ({demo.kind()}) offers {len(tools)} tools")
                counts = call(demo, "word_count", text=text).structured
                total = call(demo, "add", a=counts["words"], b=counts["lines"]).structured["sum"]
                echoed = call(demo, "echo", text="hello from inside the sandbox").text
                readme = read_resource(demo, "demo://readme")
                logo = read_resource(demo, "demo://logo.png")
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
