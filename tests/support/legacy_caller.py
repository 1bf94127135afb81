"""A 2025-11-25 MCP client over streamable HTTP (the SDK's), as a process of its own: it calls one
tool and waits for the answer. `python -m tests.support.legacy_caller URL TOOL ARGUMENTS_JSON`.

Used by tests that need a client to vanish mid-call (SIGKILL: its connection is closed by the
system, nothing more is sent).
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import Client


async def main(url: str, tool: str, arguments: str) -> None:
    async with Client(url, mode="legacy") as client:
        result = await client.call_tool(tool, json.loads(arguments))
        print(result.model_dump_json(), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3])
