"""The demo agent: looks around tooling "demo" and reports what it found.

It lists the tools, calls two of them with `call-tool-blocking`, reads a text resource and a
binary one, and returns a readable summary. Input (optional): text to analyse.
"""

import wit_world
from agentlib import call, content_bytes, failure, text_of
from componentize_py_types import Err
from wit_world.imports import log, tooling

SAMPLE = "WebAssembly components keep agents in a sandbox.\nTools arrive only through the host."


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        text = input.strip() or SAMPLE
        try:
            with tooling.get("demo") as demo:
                tools = demo.list_tools()
                log.log(log.Level.INFO, f"tooling demo ({demo.kind()}) offers {len(tools)} tools")
                counts = call(demo, "word_count", text=text)["structuredContent"]
                total = call(demo, "add", a=counts["words"], b=counts["lines"])["structuredContent"]["sum"]
                echoed = text_of(call(demo, "echo", text="hello from inside the sandbox"))
                readme = demo.read_resource("demo://readme")
                logo = demo.read_resource("demo://logo.png")
        except Err as err:
            raise Err(f"the demo tooling failed: {failure(err)}") from None

        png = content_bytes(logo)
        signature = "ok" if png.startswith(b"\x89PNG") else "missing"
        lines = [
            f"Tools of 'demo': {', '.join(tool.name for tool in tools)}",
            f"word_count: {counts['words']} words, {counts['lines']} lines, {counts['characters']} characters",
            f"add(words, lines) = {total:g}",
            f"echo: {echoed}",
            f"Resource {readme.uri} ({readme.mime_type}): {readme.content.splitlines()[0]}",
            f"Resource {logo.uri} ({logo.mime_type}): {len(png)} bytes, PNG signature {signature}",
        ]
        return "\n".join(lines)
