"""A client that hangs up mid-call cancels the call: `unless_hung_up`.

An HTTP request whose answer is still to come (a tool API call, a 2025-11-25 MCP request answered on
its POST's SSE stream) is watched for the client's disconnect (`http.disconnect` from the ASGI
`receive`, once the body has been read: nothing else can come on it). When it comes first, the call
is cancelled (its guest stopped, its turn freed, the cancellation audited by the catalog) and None is
returned: nobody is left to answer. The server keeps no event store, so a 2025-11-25 client that
drops a POST's stream cannot resume it: the answer would be lost anyway.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import anyio
from starlette.requests import Request

T = TypeVar("T")


async def unless_hung_up(request: Request, call: Awaitable[T]) -> T | None:
    """The result of `call`, or None when the client of `request` hung up first (`call` is then
    cancelled). Only once `request`'s body was read whole."""
    result: list[T] = []

    async def run(scope: anyio.CancelScope) -> None:
        result.append(await call)
        scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, tg.cancel_scope)
        while (await request.receive())["type"] != "http.disconnect":  # the body was read: only the end comes
            pass
        tg.cancel_scope.cancel()
    return result[0] if result else None
