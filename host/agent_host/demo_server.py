"""The MCP server bundled with agent-host: tooling `demo` of the embedded default configuration.

Run over stdio (the default; what the host does) with `python -m agent_host.demo_server`, or over
streamable HTTP on 127.0.0.1 with `python -m agent_host.demo_server --http PORT` (0 picks a free port; the
first line on stdout is then `listening on http://127.0.0.1:PORT/mcp`). It is built on the MCP
Python SDK 2.x, so it speaks the 2026-07-28 protocol era (and 2025-11-25 to older clients).

Tools: `echo`, `add` (structured output), `word_count` (structured output), `fail` (always reports
an error), `sleep` (reports progress; cancellable), `set_note` (changes resource `demo://note`).
Resources: `demo://readme` (Markdown), `demo://note` (text, changeable), `demo://logo.png`
(a PNG image: binary, so guests receive it base64-encoded).
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys
import zlib
from typing import Annotated, TypedDict

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

README = """# agent-host demo server

This server is bundled with agent-host so that a first run needs nothing else installed.
Try `agent-host tools demo`, or `agent-host call demo add '{"a": 2, "b": 3}'`.
"""


def _png(width: int = 16, height: int = 16) -> bytes:
    """A small valid PNG: a diagonal blue-to-green gradient."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(
        b"\x00" + b"".join(bytes((0, (x + y) * 8 % 256, 255 - (x + y) * 8 % 256)) for x in range(width))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


LOGO = _png()

HTTP_SHUTDOWN_GRACE = 1
"""Seconds the HTTP server waits for open streams when asked to stop."""


class Sum(TypedDict):
    sum: float


class Counts(TypedDict):
    words: int
    lines: int
    characters: int


def build_server() -> MCPServer:
    server = MCPServer("agent-host-demo", version="0.1.0", log_level="WARNING")
    state = {"note": "This note is empty. Change it with the set_note tool."}

    @server.tool()
    def echo(text: Annotated[str, Field(description="Text to send back")]) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(
        a: Annotated[float, Field(description="First number")], b: Annotated[float, Field(description="Second number")]
    ) -> Sum:
        """Add two numbers; the result is structured as {"sum": a + b}."""
        return {"sum": a + b}

    @server.tool()
    def word_count(text: Annotated[str, Field(description="Text to count")]) -> Counts:
        """Count the words, lines and characters of a text."""
        return {"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}

    @server.tool()
    def fail(message: Annotated[str, Field(description="The error to report")] = "this tool always fails") -> str:
        """Report an error (MCP isError) with the given message."""
        raise ToolError(message)

    @server.tool()
    async def sleep(
        ctx: Context,
        seconds: Annotated[float, Field(description="How long to sleep", ge=0, le=600)] = 1.0,
        steps: Annotated[int, Field(description="Progress reports to send", ge=1, le=1000)] = 4,
    ) -> str:
        """Sleep, reporting progress `steps` times; cancelling the call stops it."""
        for step in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        return f"slept {seconds:g} s"

    @server.tool()
    async def set_note(ctx: Context, text: Annotated[str, Field(description="New content of demo://note")]) -> str:
        """Replace the content of resource demo://note (subscribers are notified)."""
        state["note"] = text
        await ctx.notify_resource_updated("demo://note")
        return "note updated"

    @server.resource("demo://readme", name="readme", description="What this server is", mime_type="text/markdown")
    def readme() -> str:
        return README

    @server.resource("demo://note", name="note", description="A note that set_note changes", mime_type="text/plain")
    def note() -> str:
        return state["note"]

    @server.resource("demo://logo.png", name="logo", description="A 16x16 PNG image", mime_type="image/png")
    def logo() -> bytes:
        return LOGO

    return server


async def serve_http(server: MCPServer, port: int) -> None:
    """Serve streamable HTTP on 127.0.0.1:`port` (0: a free port) and print the URL first."""
    import uvicorn

    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose protocol says TCP;
    # with proto 0 every answer waited out a delayed ACK (~45 ms per call instead of ~2 ms).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)  # before the URL is printed: a client may connect at once
    app = server.streamable_http_app(host="127.0.0.1")
    # Open streams (a client's listen stream never ends by itself) must not hold up a shutdown.
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=HTTP_SHUTDOWN_GRACE)
    uv = uvicorn.Server(config)
    sys.stdout.write(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp\n")
    sys.stdout.flush()
    await uv.serve(sockets=[sock])


def serve(server: MCPServer, argv: list[str] | None = None, description: str | None = None) -> None:
    """Run `server` over stdio, or over streamable HTTP on 127.0.0.1 with `--http PORT`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT (0: free)")
    args = parser.parse_args(argv)
    if args.http is None:
        server.run("stdio")
    else:
        anyio.run(serve_http, server, args.http)


def main(argv: list[str] | None = None) -> None:
    serve(build_server(), argv, description=__doc__.split("\n\n")[0])


if __name__ == "__main__":
    main()
