"""The HTTP client the model SDKs are given: every answer read within bounds (`CappedClient`).

A model server is untrusted: the SDKs read a whole body, or a whole SSE event, into memory before
looking at it. So the host reads at most `MAX_BODY_BYTES` of a plain answer, `MAX_STREAM_BYTES` of
a stream and `MAX_EVENT_BYTES` of one SSE event (bytes since the last blank line), counted as they
arrive; past a bound the read fails with `AnswerTooLarge` (the error table's `limit-exceeded`). It
asks for `identity` encoding and refuses a compressed answer (`UnwantedEncoding`): a decompressed
body is not bounded by the bytes that came. Both are raised inside the SDK, which may wrap them:
the error table looks along the `__cause__` chain (`providers.errors`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Final

import httpx2

MAX_BODY_BYTES: Final = 32 * 1024 * 1024
"""Bytes of a plain (not streamed) answer the host reads."""

MAX_STREAM_BYTES: Final = 256 * 1024 * 1024
"""Bytes of one streamed answer the host reads, all events together."""

MAX_EVENT_BYTES: Final = 8 * 1024 * 1024
"""Bytes of one SSE event (its lines up to the blank line ending it) the host reads."""

_BOUNDARIES: Final = (b"\n\n", b"\r\r", b"\r\n\r\n")
"""What ends an SSE event: a blank line, after any of the line endings the format allows."""


class AnswerTooLarge(Exception):
    """A model server's answer passed one of the bounds of this module."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(f"{what} passed {limit} bytes")
        self.what = what
        self.limit = limit


class UnwantedEncoding(Exception):
    """A model server sent a compressed answer though `identity` was asked for."""


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
        response = await super().send(request, stream=True, **kwargs)
        try:
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                raise UnwantedEncoding(f"the answer is encoded {encoding[:40]!r}; identity was asked for")
            streamed = response.headers.get("content-type", "").lower().startswith("text/event-stream")
            assert isinstance(response.stream, httpx2.AsyncByteStream)
            if streamed:
                response.stream = CappedStream(response.stream, total=MAX_STREAM_BYTES, event=MAX_EVENT_BYTES)
            else:
                response.stream = CappedStream(response.stream, total=MAX_BODY_BYTES, event=None)
            if not stream:
                await response.aread()
        except BaseException:
            await response.aclose()
            raise
        return response
