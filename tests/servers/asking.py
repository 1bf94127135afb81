"""An MCP server on the SDK's low-level `Server`, for the tests of the complete client (issue 13).

Low-level, so it can do what `MCPServer` would refuse to: declare an output schema and break it.
Run over stdio with `python -m tests.servers.asking`, or over streamable HTTP on 127.0.0.1 with
`--http PORT` (0: a free port; the first line on stdout is `listening on URL`). Both protocol eras:
the client chooses (agent-host `protocol = "2025-11-25"` forces the older one).

Tools:
- `shaped(mode)`: declares the output schema `{"n": integer}` (required) and returns structured
  content that is `good` ({"n": 1}), `wrong` ({"n": "one"}) or `none` (absent); `failed` is an
  `isError` result without structured content (allowed).
- `stall(reports, interval, then)`: reports progress `reports` times, `interval` seconds apart, then
  waits `then` seconds more and answers "done" (a call the client's timeout should keep alive, or not).
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any, Final

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SHAPE: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}

TOOLS: Final = [
    types.Tool(
        name="shaped",
        description="Returns structured content that matches its output schema, or not.",
        input_schema={"type": "object", "properties": {"mode": {"type": "string"}}, "required": ["mode"]},
        output_schema=SHAPE,
    ),
    types.Tool(
        name="stall",
        description="Reports progress `reports` times, `interval` s apart, then waits `then` s and answers.",
        input_schema={
            "type": "object",
            "properties": {"reports": {"type": "integer"}, "interval": {"type": "number"}, "then": {"type": "number"}},
        },
    ),
]


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=text)]


def build() -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "shaped":
            mode = arguments.get("mode")
            if mode == "good":
                return types.CallToolResult(content=_text("1"), structured_content={"n": 1})
            if mode == "wrong":
                return types.CallToolResult(content=_text("one"), structured_content={"n": "one"})
            if mode == "failed":
                return types.CallToolResult(content=_text("it failed"), is_error=True)
            return types.CallToolResult(content=_text("no structure"))
        if params.name == "stall":
            for step in range(1, int(arguments.get("reports", 1)) + 1):
                await anyio.sleep(float(arguments.get("interval", 0.1)))
                await ctx.session.report_progress(step, None, f"step {step}")
            await anyio.sleep(float(arguments.get("then", 0)))
            return types.CallToolResult(content=_text("done"))
        return types.CallToolResult(content=_text(f"unknown tool {params.name}"), is_error=True)

    return Server("asking", on_list_tools=list_tools, on_call_tool=call_tool)


async def _stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def _http(server: Server[Any], port: int) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    config = uvicorn.Config(server.streamable_http_app(host="127.0.0.1"), log_level="warning", lifespan="on")
    sys.stdout.write(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp\n")
    sys.stdout.flush()
    await uvicorn.Server(config).serve(sockets=[sock])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT (0: free)")
    args = parser.parse_args(argv)
    server = build()
    if args.http is None:
        anyio.run(_stdio, server)
    else:
        anyio.run(_http, server, args.http)


if __name__ == "__main__":
    main()
