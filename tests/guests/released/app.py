"""A guest as a component built against agent-host:guest@0.2.0 was written: the raw bindings only.

It gets tooling `demo`, calls `echo` with its input, lists its tools, and answers both, so a test can
tell every import of the released contract still links and answers.
"""

import json

import wit_world
from wit_world.imports import tooling


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        demo = tooling.get("demo")
        echoed = demo.call_tool_blocking("echo", json.dumps({"text": input}))
        names = [tool.name for tool in demo.list_tools()]
        return json.dumps({"echo": json.loads(echoed.value), "tools": names})
