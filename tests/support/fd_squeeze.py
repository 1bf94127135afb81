"""Run by tests/component/guests/test_guest_descriptors.py in a process of its own, whose
`RLIMIT_NOFILE` it lowers: a guest holds a few descriptors in its folder and sleeps; then this
process opens descriptors elsewhere (as a busy `serve` accepts connections) until fewer than
`HOST_RESERVE` are left. The guest must be stopped while it sleeps. Prints the outcome as JSON:
{"status", "tripped", "text", "joined"} (`joined`: it ended within `WAIT` seconds).

Usage: python -m tests.support.fd_squeeze WASM DATA_FOLDER NOFILE
"""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path
from typing import Final

from agent_host import Host
from agent_host.config import parse_config
from agent_host.runtime.descriptors import HOST_RESERVE
from tests.support.output_lines import Lines

HELD: Final = 20
"""Descriptors the guest holds in its folder: far below its `max_open_files`."""
WAIT: Final = 30.0
"""Seconds any wait here lasts at the most."""
SLEEP_MS: Final = 40_000
"""How long the guest sleeps holding its descriptors: longer than `WAIT`."""


def main() -> None:
    wasm, data, nofile = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    toml = f"""
[agents.hoard]
dirs = [{{ host = "{data}", guest = "/data" }}]
max_open_files = 1000
"""
    host = Host(parse_config(toml, data.parent / "agent-host.toml"))
    squeeze: list[int] = []
    try:
        lines = Lines()
        request = {"path": "/data", "how": "files", "count": HELD, "sleep_ms": SLEEP_MS}
        policy = host.policy("hoard", host.config.agents["hoard"])
        guest = host.start(wasm, json.dumps(request), agent="hoard", policy=policy, output=lines)
        lines.wait_for(f"holding {HELD}", WAIT)
        while len(os.listdir("/proc/self/fd")) < nofile - HOST_RESERVE + 8:
            squeeze.append(os.open(os.devnull, os.O_RDONLY))
        outcome = guest.join(WAIT)
        joined = outcome is not None
        if outcome is None:
            guest.stop("the test is over")
            outcome = host.wait(guest)
        print(
            json.dumps({"status": outcome.status, "tripped": outcome.tripped, "text": outcome.text, "joined": joined})
        )
    finally:
        for fd in squeeze:
            os.close(fd)
        host.close()


if __name__ == "__main__":
    main()
