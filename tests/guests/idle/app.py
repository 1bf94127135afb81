"""Test guest `idle`: the smallest agent that stays running: waits in its inbox, then answers.

Used by `make bench` to measure what one more running guest costs (memory per guest) and how long a
whole `agent-host run` takes when no MCP tooling is touched. Input: milliseconds to wait (default 0).
"""

import wit_world
from wit_world.imports import inbox


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        if input.strip():
            inbox.recv(int(input))
        return "idle done"
