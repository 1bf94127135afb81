"""The model servers of `tests/servers/` (`openai_wire`, `anthropic_wire`) run in a thread of the test
process, on a free 127.0.0.1 port, and what a test asks them.

`running(build)` serves the app `build()` makes with uvicorn on its own loop in a daemon thread (the
socket listens before the URL is handed out) and stops it when the block ends (uvicorn's graceful
shutdown, bounded by `STOP_BOUND`). `requests(url)` is what the server was asked, `disconnects(url,
count)` waits until `count` clients went away mid-answer (the server's own bound) and says how many did.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import anyio
import httpx2
import uvicorn
from starlette.applications import Starlette

STOP_BOUND: Final = 10.0
"""Seconds the server's thread may take to end once asked to."""

READ_BOUND: Final = 15.0
"""Seconds a request to the server's test routes may take (it waits up to 10 s itself)."""


@contextmanager
def running(build: Callable[[], Starlette]) -> Iterator[str]:
    """The base URL (`http://127.0.0.1:PORT`) of the app `build()` makes, served for the block."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    config = uvicorn.Config(build(), log_config=None, access_log=False, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=anyio.run, args=(server.serve, [sock]), name="model-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(STOP_BOUND)
        sock.close()
        assert not thread.is_alive(), f"the model server did not stop within {STOP_BOUND} s"


async def requests(url: str) -> list[dict[str, Any]]:
    """Every request the server at `url` was asked: `path`, `headers`, `body`."""
    async with httpx2.AsyncClient(timeout=READ_BOUND) as client:
        answer = await client.get(f"{url}/test/requests")
    found: list[dict[str, Any]] = answer.json()
    return found


async def disconnects(url: str, count: int = 0) -> int:
    """How many clients went away mid-answer from the server at `url`, once at least `count` did (or
    its bound passed)."""
    async with httpx2.AsyncClient(timeout=READ_BOUND) as client:
        answer = await client.get(f"{url}/test/disconnects", params={"count": count})
    seen: int = answer.json()["disconnects"]
    return seen
