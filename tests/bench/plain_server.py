"""`make bench`'s reference HTTP server: a plain MCP SDK server with one `echo` tool, run by `uvicorn.run`.

The way the SDK's own examples serve streamable HTTP, so the bundled demo server's HTTP path is
measured against it. Prints `listening on URL` first. Usage: `python -m tests.bench.plain_server`.
"""

from __future__ import annotations

import socket
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer


def main() -> None:
    server = MCPServer("plain")

    @server.tool()
    def echo(text: str) -> str:
        """Return `text`."""
        return text

    with socket.socket() as probe:  # a free port (uvicorn binds it itself, as in the SDK's examples)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sys.stdout.write(f"listening on http://127.0.0.1:{port}/mcp\n")
    sys.stdout.flush()
    uvicorn.run(server.streamable_http_app(host="127.0.0.1"), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
