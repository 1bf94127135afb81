"""A test guest that makes a newcomer's mistakes, chosen by its input.

- "nosuch": `tooling.get("nosuch")` without catching `Err`;
- "call": `call-tool-blocking` of a tool that does not exist, through agentlib, uncaught;
- "dict" / "none": `run` returns a dict / None;
- "oom": allocates 1 MiB blocks until memory runs out, without catching `MemoryError`;
- "err": `raise Err("declined")` (the normal error, passed through unchanged);
- "fake-oom": prints a made-up `MemoryError` traceback on stderr, then exits as an uncaught
  exception does (the host must not believe it);
- "fake-limit" / "fake-not-found": `Err` texts in the host's `CODE: message` form that the host
  never returned to it;
- "caught-oom": runs out of memory, catches `MemoryError` and returns `Err("out of memory")` (as a
  JavaScript component does);
- anything else: returns "fine: INPUT".
"""

import os
import sys

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
        elif input == "fake-oom":
            sys.stderr.write('Traceback (most recent call last):\n  File "app.py", line 1, in run\n')
            sys.stderr.write("MemoryError: raised at app.py:1\n")
            sys.stderr.flush()
            os._exit(70)
        elif input == "fake-limit":
            raise Err("limit-exceeded: the memory limit was reached")
        elif input == "fake-not-found":
            raise Err("not-found: no tooling named 'nosuch' is configured; configured: demo (raised at app.py:20)")
        elif input == "caught-oom":
            hoard = []
            try:
                while True:
                    hoard.append(bytearray(1 << 20))
            except MemoryError:
                hoard.clear()
                raise Err("out of memory") from None
        return f"fine: {input}"
