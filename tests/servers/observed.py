"""An MCP server (SDK 2.x, so the 2026-07-28 era) that reports what it observed, for pump tests.

Run over stdio with `python -m tests.servers.observed`, or over HTTP on 127.0.0.1 with
`--http PORT` (0: a free port; the first line on stdout is `listening on URL`).

Tools:
- `wait(seconds, steps)`: sleeps, reporting progress `steps` times; counts started, finished and
  cancelled calls (a cancelled call is one whose handler was cancelled by the client).
- `gather(group, count)`: returns once `count` calls of the same `group` are in flight at once (a
  barrier: proves calls overlap, and that each held its own HTTP connection).
- `echo(text)`, `set(name, text)`: set changes resource `obs://NAME` and notifies its subscribers.
- `churn(name, times)`: writes `obs://NAME` `times` times ("v1" ... "vN"), notifying after each.
- `add_resource(name)`, `add_tool(name)`: change the lists and notify list subscribers.
- `redescribe(name, description)`: changes the description of tool NAME and notifies list subscribers.
- `exit_now()`: the process exits at once (a crash).
- `big(size)`: returns a text of `size` characters.
- `spawn()`: starts a child process that sleeps (in the server's process group) and returns its pid:
  a process the server started, which must not outlive it.
- `shout(size)`: writes `size` bytes to stderr (a server that floods its log).
- `activity()`: {"started", "finished", "cancelled", "listens": [[URIs of each open listen stream]],
  "subscribed": [URIs subscribed with 2025-era resources/subscribe]}.
Resources: `obs://a`, `obs://b` (text/plain), plus those added. `echo`'s description is
$OBSERVED_ECHO_DESCRIPTION when set (a server whose tool changed between runs).

Both eras: a 2026-07-28 client is notified on its `subscriptions/listen` stream; a client that
connected with the 2025-11-25 handshake (agent-host `protocol = "2025-11-25"`) subscribes with
`resources/subscribe` and gets `notifications/resources/updated`; tool list changes reach it as
`notifications/tools/list_changed`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import anyio
from mcp.server.lowlevel.server import HandlerEntry
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_host.demo_server import serve


def build() -> MCPServer:
    server = MCPServer("observed", log_level="WARNING")
    counts = {"started": 0, "finished": 0, "cancelled": 0}
    contents = {"a": "initial a", "b": "initial b"}
    listens: list[list[str]] = []
    subscribed: dict[str, Any] = {}
    """2025 era: URI -> the session that subscribed to it."""

    async def notify(ctx: Context, uri: str) -> None:
        await ctx.notify_resource_updated(uri)
        session = subscribed.get(uri)
        if session is not None:
            await session.send_resource_updated(uri)

    async def tools_changed(ctx: Context) -> None:
        await ctx.notify_tools_changed()
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:  # 2025 era: a plain notification
            await ctx.session.send_tool_list_changed()

    def publish(name: str) -> None:
        @server.resource(f"obs://{name}", name=name, mime_type="text/plain")
        def content() -> str:
            return contents[name]

    for name in list(contents):
        publish(name)

    @server.tool()
    async def wait(ctx: Context, seconds: float = 30.0, steps: int = 1) -> str:
        """Sleep `seconds`, reporting progress `steps` times."""
        counts["started"] += 1
        try:
            for step in range(1, steps + 1):
                await anyio.sleep(seconds / steps)
                await ctx.report_progress(step, steps, f"step {step}")
        except anyio.get_cancelled_exc_class():
            counts["cancelled"] += 1
            raise
        counts["finished"] += 1
        return f"waited {seconds:g} s"

    groups: dict[str, tuple[list[int], anyio.Event]] = {}

    @server.tool()
    async def gather(group: str, count: int) -> int:
        """Return once `count` calls of `group` are in flight at once; returns how many arrived."""
        arrived, everyone = groups.setdefault(group, ([0], anyio.Event()))
        arrived[0] += 1
        if arrived[0] >= count:
            everyone.set()
        await everyone.wait()
        return arrived[0]

    @server.tool(description=os.environ.get("OBSERVED_ECHO_DESCRIPTION", "Return the text."))
    def echo(text: str) -> str:
        return text

    @server.tool()
    async def set(ctx: Context, name: str, text: str) -> str:
        """Set resource obs://NAME to text and notify."""
        contents[name] = text
        await notify(ctx, f"obs://{name}")
        return "ok"

    @server.tool()
    async def churn(ctx: Context, name: str, times: int) -> str:
        """Write obs://NAME `times` times, notifying after each write."""
        for index in range(1, times + 1):
            contents[name] = f"v{index}"
            await notify(ctx, f"obs://{name}")
        return f"wrote {times} times"

    @server.tool()
    async def add_resource(ctx: Context, name: str) -> str:
        """Add resource obs://NAME and notify list subscribers."""
        contents[name] = f"new {name}"
        publish(name)
        await ctx.notify_resources_changed()
        return "ok"

    @server.tool()
    async def add_tool(ctx: Context, name: str) -> str:
        """Add a tool called NAME and notify list subscribers."""

        def added() -> str:
            return name

        server.add_tool(added, name=name, description=f"added at run time: {name}")
        await tools_changed(ctx)
        return "ok"

    @server.tool()
    async def redescribe(ctx: Context, name: str, description: str) -> str:
        """Change the description of tool NAME and notify list subscribers."""
        tool = server._tool_manager.get_tool(name)
        if tool is None:
            raise ValueError(f"no tool {name!r}")
        tool.description = description
        await tools_changed(ctx)
        return "ok"

    @server.tool()
    def big(size: int) -> str:
        """A text of `size` characters."""
        return "y" * size

    @server.tool()
    def exit_now() -> str:
        """Exit the server process at once."""
        os._exit(3)

    @server.tool()
    def activity() -> dict[str, Any]:
        """What this server observed."""
        return {**counts, "listens": [list(uris) for uris in listens], "subscribed": sorted(subscribed)}

    @server.tool()
    def spawn() -> int:
        """Start a child that sleeps for a long time; its pid."""
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return child.pid

    @server.tool()
    def shout(size: int) -> int:
        """Write `size` bytes to stderr, in lines of 1000."""
        line = b"x" * 999 + b"\n"
        for _ in range(size // len(line)):
            os.write(2, line)
        os.write(2, b"y" * (size % len(line)))
        return size

    # Record the resource URIs of every open subscriptions/listen stream.
    handlers = server._lowlevel_server._request_handlers
    original = handlers["subscriptions/listen"]

    async def observed_listen(ctx: Any, params: Any) -> Any:
        uris = sorted(params.notifications.resource_subscriptions or [])
        listens.append(uris)
        try:
            return await original.handler(ctx, params)
        finally:
            listens.remove(uris)

    handlers["subscriptions/listen"] = HandlerEntry(original.params_type, observed_listen)

    async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        subscribed[str(params.uri)] = ctx.session
        return EmptyResult()

    async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        subscribed.pop(str(params.uri), None)
        return EmptyResult()

    handlers["resources/subscribe"] = HandlerEntry(SubscribeRequestParams, subscribe)
    handlers["resources/unsubscribe"] = HandlerEntry(UnsubscribeRequestParams, unsubscribe)
    return server


if __name__ == "__main__":
    serve(build())
