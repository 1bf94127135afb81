"""The guest of the dev-mode tests, as the source of its `app.py`.

`GUEST` answers "VERSION <its input echoed by the demo tooling>" (a test replaces VERSION to tell
one save from the next); input "divide" raises ZeroDivisionError two frames deep (the traceback
tests count on its line numbers), "sandbox" reports what the guest sees of its file system and
environment, and "slow" first makes a 30 s call (saying so on stderr).
"""

from __future__ import annotations

from typing import Final

GUEST: Final = """\
import json
import os
import textwrap

import wit_world
from wit_world.imports import tooling


def helper(x):
    return 1 / x


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        if input == "divide":
            return str(helper(0))
        if input == "sandbox":
            try:
                open("/.agent-host/src/new.txt", "w")
                wrote = True
            except OSError:
                wrote = False
            seen = {"src": sorted(os.listdir("/.agent-host/src")), "passwd": os.path.exists("/etc/passwd")}
            return json.dumps({**seen, "wrote": wrote, "env": sorted(os.environ)})
        if input == "slow":
            with tooling.get("demo") as demo:
                os.write(2, b"slow: calling sleep\\n")
                demo.call_tool_blocking("sleep", json.dumps({"seconds": 30, "steps": 3}))
        with tooling.get("demo") as demo:
            echoed = json.loads(demo.call_tool_blocking("echo", json.dumps({"text": input})).value)
        return textwrap.shorten(f"VERSION {echoed['structuredContent']['result']}", 60)
"""
