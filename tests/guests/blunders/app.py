"""A test guest that makes a newcomer's mistakes, chosen by its input (issue 8, points 1 and 2).

- "nosuch": `tooling.get("nosuch")` without catching `Err`;
- "call": `call-tool-blocking` of a tool that does not exist, through agentlib, uncaught;
- "dict" / "none": `run` returns a dict / None;
- "oom": allocates 1 MiB blocks until memory runs out, without catching `MemoryError`;
- "err": `raise Err("declined")` (the normal error, passed through unchanged);
- anything else: returns "fine: INPUT".
"""

import wit_world
from agentlib import call
from componentize_py_types import Err
from wit_world.imports import tooling


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        if input == "nosuch":
            tooling.get("nosuch")
        elif input == "call":
            with tooling.get("demo") as demo:
                call(demo, "no_such_tool")
        elif input == "dict":
            return {"a": 1}
        elif input == "none":
            return None
        elif input == "oom":
            hoard = []
            while True:
                hoard.append(bytearray(1 << 20))
        elif input == "err":
            raise Err("declined")
        return f"fine: {input}"
