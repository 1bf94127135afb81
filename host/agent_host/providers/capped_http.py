"""The HTTP client the model SDKs are given: every answer read within bounds (`CappedClient`).

A model server is untrusted: the SDKs read a whole body, or a whole SSE event, into memory before
looking at it. So the host reads at most `MAX_BODY_BYTES` of a plain answer, `MAX_STREAM_BYTES` of
a stream and `MAX_EVENT_BYTES` of one SSE event (bytes since the last blank line), counted as they
arrive (the stream bounds for a request made within `streaming()`, whatever the answer's type says);
past a bound the read fails with `AnswerTooLarge` (the error table's `limit-exceeded`). It asks
for `identity` encoding and refuses a compressed answer (`UnwantedEncoding`): a decompressed body
is not bounded by the bytes that came. It follows no redirect (`UnwantedRedirect`): a redirect
would carry the table's headers and the prompt to another host. Each is raised inside the SDK,
which may wrap it: the error table looks along the `__cause__` chain (`providers.errors`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

import httpx2

MAX_BODY_BYTES: Final = 16 * 1024 * 1024
"""Bytes of a plain (not streamed) answer the host reads."""

MAX_STREAM_BYTES: Final = 256 * 1024 * 1024
"""Bytes of one streamed answer the host reads, all events together."""

MAX_EVENT_BYTES: Final = 1024 * 1024
"""Bytes of one SSE event (its lines up to the blank line ending it) the host reads."""

_BOUNDARIES: Final = (b"\n\n", b"\r\r", b"\r\n\r\n")
"""What ends an SSE event: a blank line, after any of the line endings the format allows."""


_STREAMING: ContextVar[bool] = ContextVar("agent_host_streaming", default=False)


@contextmanager
def streaming() -> Iterator[None]:
    """Requests sent in the block (in this task) ask for a stream: their answers get the stream's bounds."""
    token = _STREAMING.set(True)
    try:
        yield
    finally:
        _STREAMING.reset(token)


class AnswerTooLarge(Exception):
    """A model server's answer passed one of the bounds of this module."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what} passed {limit} bytes")
        self.what = what
        self.limit = limit


class UnwantedEncoding(Exception):
    """A model server sent a compressed answer though `identity` was asked for."""


class UnwantedRedirect(Exception):
    """A model server answered with a redirect (a model API answers where it is asked)."""


def _after_last_boundary(data: bytes) -> int:
    """The index just after the last SSE event boundary in `data`; -1 when it holds none."""
    return max((found + len(mark) for mark in _BOUNDARIES if (found := data.rfind(mark)) >= 0), default=-1)


class CappedStream(httpx2.AsyncByteStream):
    """A response body read within `total` bytes and, for SSE (`event` not None), `event` bytes
    between two event boundaries. Linear in the bytes read."""

    def __init__(self, inner: httpx2.AsyncByteStream, *, total: int, event: int | None) -> None:
        self._inner = inner
        self._total = total
        self._event = event

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = pending = 0
        tail = b""
        async for chunk in self._inner:
            read += len(chunk)
            if read > self._total:
                raise AnswerTooLarge("the answer" if self._event is None else "the stream", self._total)
            if self._event is not None:
                data = tail + chunk
                end = _after_last_boundary(data)
                pending = len(data) - end if end >= 0 else pending + len(chunk)
                if pending > self._event:
                    raise AnswerTooLarge("one event of the stream", self._event)
                tail = data[-3:]
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedClient(httpx2.AsyncClient):
    """An `httpx2.AsyncClient` whose answers are read within bounds (see the module docstring). Put
    it first in the bases of an SDK's own client class, to keep that SDK's defaults."""

    async def send(self, request: httpx2.Request, *, stream: bool = False, **kwargs: Any) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        kwargs["follow_redirects"] = False
        response = await super().send(request, stream=True, **kwargs)
        try:
            if response.is_redirect:
                raise UnwantedRedirect(
                    f"the answer is a redirect (HTTP {response.status_code}); a model API answers at its `base_url`"
                )
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                raise UnwantedEncoding(f"the answer is encoded {encoding[:40]!r}; identity was asked for")
            assert isinstance(response.stream, httpx2.AsyncByteStream)
            if _STREAMING.get():  # the provider asked for a stream: its bounds, whatever the answer says it is
                response.stream = CappedStream(response.stream, total=MAX_STREAM_BYTES, event=MAX_EVENT_BYTES)
            else:
                response.stream = CappedStream(response.stream, total=MAX_BODY_BYTES, event=None)
            if not stream:
                await response.aread()
        except BaseException:
            await response.aclose()
            raise
        return response
