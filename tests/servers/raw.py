"""A hand-written MCP server over stdio (no SDK): 2025-11-25 handshake, tools `echo` and `garbage`.

`garbage` makes the server write a line that is not JSON-RPC to stdout instead of its answer, the
way servers that print debug output to stdout misbehave. Everything else is answered normally.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [
    {
        "name": "echo",
        "description": "Return the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {"name": "garbage", "description": "Write garbage instead of answering.", "inputSchema": {"type": "object"}},
]


def reply(message_id: Any, result: Any = None, error: Any = None) -> None:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": message_id}
    body["error" if error is not None else "result"] = error if error is not None else result
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue  # notifications
        if method == "initialize":
            reply(message_id, {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            })  # fmt: skip
        elif method == "tools/list":
            reply(message_id, {"tools": TOOLS})
        elif method == "tools/call" and message["params"]["name"] == "garbage":
            sys.stdout.write("this line is not JSON-RPC\n")
            sys.stdout.flush()
        elif method == "tools/call":
            text = message["params"].get("arguments", {}).get("text", "")
            reply(message_id, {"content": [{"type": "text", "text": text}], "isError": False})
        else:
            reply(message_id, error={"code": -32601, "message": f"method not found: {method}"})


if __name__ == "__main__":
    main()
