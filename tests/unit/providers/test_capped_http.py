"""The bounds of the model SDKs' HTTP client, read as the bytes come: the whole answer, and one SSE
event (bytes since the last blank line, whichever line endings, a boundary split between chunks)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx2
import pytest

from agent_host.providers.capped_http import AnswerTooLarge, CappedStream


class Chunks(httpx2.AsyncByteStream):
    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def read(stream: CappedStream) -> bytes:
    async def go() -> bytes:
        return b"".join([chunk async for chunk in stream])

    return anyio.run(go)


@pytest.mark.parametrize("ending", [b"\n", b"\r", b"\r\n"])
def test_events_under_the_bound_pass_whatever_their_line_endings_and_splits(ending: bytes) -> None:
    event = b"data: " + b"x" * 6 + ending + ending
    chunks = [event[:5], event[5:-1], event[-1:]] * 5  # the boundary split between two chunks
    bound = len(event) - 1  # the bytes before its last one: then the boundary is whole
    assert read(CappedStream(Chunks(*chunks), total=1000, event=bound)) == event * 5
    with pytest.raises(AnswerTooLarge):
        read(CappedStream(Chunks(*chunks), total=1000, event=bound - 1))


def test_an_event_of_many_lines_past_the_bound_fails_naming_it() -> None:
    lines = [b"data: x\n"] * 4  # no blank line: one event of 32 bytes
    with pytest.raises(AnswerTooLarge) as caught:
        read(CappedStream(Chunks(*lines), total=1000, event=20))
    assert str(caught.value) == "one event of the stream passed 20 bytes"


def test_the_whole_answer_is_bounded_too() -> None:
    with pytest.raises(AnswerTooLarge) as caught:
        read(CappedStream(Chunks(b"a" * 6, b"b" * 6), total=10, event=None))
    assert str(caught.value) == "the answer passed 10 bytes"
    with pytest.raises(AnswerTooLarge) as streamed:
        read(CappedStream(Chunks(b"data: 1\n\n" * 2), total=10, event=100))
    assert str(streamed.value) == "the stream passed 10 bytes"
