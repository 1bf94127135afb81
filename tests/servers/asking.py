"""An MCP server on the SDK's low-level `Server`, for the tests of the complete client: output
schemas, elicitation, sampling, roots, log messages and progress.

Low-level, so it can do what `MCPServer` would refuse to: declare an output schema and break it.
Run over stdio with `python -m tests.servers.asking`, or over streamable HTTP on 127.0.0.1 with
`--http PORT` (0: a free port; the first line on stdout is `listening on URL`). Both protocol eras:
the client chooses (agent-host `protocol = "2025-11-25"` forces the older one).

Tools:
- `shaped(mode)`: declares the output schema `{"n": integer}` (required) and returns structured
  content that is `good` ({"n": 1}), `wrong` ({"n": "one"}) or `none` (absent); `failed` is an
  `isError` result without structured content (allowed).
- `ask(message)`: asks the client (form elicitation, `{"name": string}` required) and answers
  "hello NAME", or fails (`isError`) when the answer is not accepted.
- `sample(prompt, tools=false)`: asks the client for model output and answers its text, or fails;
  with `tools`, offers the tool `lookup(q)` in the request and answers each `tool_use` block the
  model wrote as `tool_use NAME INPUT` (JSON).
- `roots()`: asks the client for its roots and answers their URIs as JSON.
- `open_url(url)`: asks the client to open `url` (URL-mode elicitation); "opened" when accepted.
- `shout(text, related=true)`: sends `text` as a warning log message (logger `asking`; with
  `related = false` not tied to the request: on the connection's own stream, then a ping on that
  stream, so the answer comes once the client has the message) and answers "logged".
  Each asks the 2025-11-25 way (a request to the client) or the 2026-07-28 way (`input_required`).
- `stall(reports, interval, then)`: reports progress `reports` times, `interval` seconds apart, then
  waits `then` seconds more and answers "done" (a call the client's timeout should keep alive, or not).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
import warnings
from typing import Any, Final

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

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
    *(
        types.Tool(name=name, description=f"Asks the client ({name}).", input_schema={"type": "object"})
        for name in ("ask", "sample", "roots", "shout", "open_url")
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


LOOKUP: Final = types.Tool(
    name="lookup",
    description="Looks a word up.",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)


def _text(text: str) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=text)]


NAME_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def _request(
    name: str, arguments: dict[str, Any]
) -> types.ElicitRequest | types.CreateMessageRequest | types.ListRootsRequest:
    """What tool `name` asks the client."""
    if name == "ask":
        form = types.ElicitRequestFormParams(
            message=str(arguments.get("message", "Your name?")), requested_schema=NAME_SCHEMA
        )
        return types.ElicitRequest(params=form)
    if name == "open_url":
        url = str(arguments.get("url", "https://example.test/login"))
        page = types.ElicitRequestURLParams(message="Log in, please", url=url, elicitation_id="login-1")
        return types.ElicitRequest(params=page)
    if name == "sample":
        text = types.TextContent(type="text", text=str(arguments.get("prompt", "")))
        offered = [LOOKUP] if arguments.get("tools") else None
        sampling = types.CreateMessageRequestParams(
            messages=[types.SamplingMessage(role="user", content=text)],
            max_tokens=50,
            system_prompt="Be brief.",
            tools=offered,
        )
        return types.CreateMessageRequest(params=sampling)
    return types.ListRootsRequest()


def _answer(name: str, response: Any) -> types.CallToolResult:
    """Tool `name`'s result from the client's `response` (an ErrorData-like failure: isError)."""
    if name == "open_url":
        accepted = isinstance(response, types.ElicitResult) and response.action == "accept"
        return types.CallToolResult(content=_text("opened" if accepted else "not opened"), is_error=not accepted)
    if name == "ask":
        if isinstance(response, types.ElicitResult) and response.action == "accept" and response.content:
            return types.CallToolResult(content=_text(f"hello {response.content.get('name')}"))
        action = getattr(response, "action", "no answer")
        return types.CallToolResult(content=_text(f"the question was not answered: {action}"), is_error=True)
    if name == "sample":
        blocks = getattr(response, "content", None)
        blocks = blocks if isinstance(blocks, list) else [blocks]
        uses = [block for block in blocks if isinstance(block, types.ToolUseContent)]
        if uses:
            said = [f"tool_use {use.name} {json.dumps(use.input, sort_keys=True)}" for use in uses]
            return types.CallToolResult(content=_text("\n".join(said)))
        if isinstance(blocks[0], types.TextContent):
            return types.CallToolResult(content=_text(blocks[0].text))
        return types.CallToolResult(content=_text("no sample"), is_error=True)
    roots = [str(root.uri) for root in response.roots] if isinstance(response, types.ListRootsResult) else []
    return types.CallToolResult(content=_text(json.dumps(roots)))


ASKS: Final = frozenset({"ask", "sample", "roots", "open_url"})


async def _asking(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
    """A tool that asks the client something: by request (2025-11-25) or `input_required` (2026-07-28)."""
    request = _request(params.name, params.arguments or {})
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if not params.input_responses:
            return types.InputRequiredResult(input_requests={"q": request}, request_state="asked")
        return _answer(params.name, params.input_responses.get("q"))
    try:
        if isinstance(request, types.ElicitRequest) and isinstance(request.params, types.ElicitRequestURLParams):
            page = request.params
            response: Any = await ctx.session.elicit_url(page.message, page.url, page.elicitation_id, ctx.request_id)
        elif isinstance(request, types.ElicitRequest):
            assert isinstance(request.params, types.ElicitRequestFormParams)
            response = await ctx.session.elicit_form(
                request.params.message, request.params.requested_schema, ctx.request_id
            )
        elif isinstance(request, types.CreateMessageRequest):
            shape = types.CreateMessageResultWithTools if request.params.tools else types.CreateMessageResult
            response = await ctx.session.send_request(request, shape)
        else:
            response = await ctx.session.list_roots()
    except MCPError as exc:
        return types.CallToolResult(content=_text(f"the client refused: {exc}"), is_error=True)
    return _answer(params.name, response)


def build() -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments or {}
        if params.name in ASKS:
            return await _asking(ctx, params)
        if params.name == "shout":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                related = ctx.request_id if arguments.get("related", True) else None
                await ctx.session.send_log_message("warning", str(arguments.get("text")), "asking", related)
                if related is None:  # answer once the client has it: a ping goes on the same stream, after it
                    with anyio.move_on_after(10), contextlib.suppress(Exception):
                        await ctx.session.send_ping()
            return types.CallToolResult(content=_text("logged"))
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
    sock.listen(2048)  # before the URL is printed: a client may connect at once
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
