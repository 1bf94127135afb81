"""A hostile model server cannot make the host read without bound: the real `openai` and `anthropic`
clients behind our providers, against local servers of each wire (`tests/servers/*_wire.py`) that
send a body past the host's bound, an SSE event of many lines or one line past the event bound; each
ends `limit-exceeded` naming the bound, and the server sees the client go. A compressed body, a
redirect, a body that does not parse or nests too deep are `protocol`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatMessage, ChatRequest
from agent_host.providers import ProviderSet
from agent_host.providers.capped_http import MAX_BODY_BYTES, MAX_EVENT_BYTES
from tests.servers import anthropic_wire, openai_wire
from tests.support.model_servers import disconnects, running
from tests.support.provider_configs import network, providers

pytestmark = [pytest.mark.component, pytest.mark.anyio]

ASK = ChatRequest(messages=(ChatMessage("user", "hello"),))


@pytest.fixture(scope="module", params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, str]]:
    """(kind, server root, base_url) of a wire server for the module."""
    kind = request.param
    build = openai_wire.build if kind == "openai" else anthropic_wire.build
    with running(build) as url:
        yield kind, url, f"{url}/v1" if kind == "openai" else url


async def failure(wire: tuple[str, str, str], model: str, *, stream: bool) -> ToolingError:
    kind, _, base_url = wire
    made = ProviderSet(providers(network(kind, base_url, model="gpt-4.1")))
    try:
        with pytest.raises(ToolingError) as caught:
            if stream:
                async for _ in made.get("llm").stream(ASK, model=model, max_tokens=100):
                    pass
            else:
                await made.get("llm").chat(ASK, model=model, max_tokens=100)
    finally:
        await made.aclose()
    return caught.value


async def test_a_body_past_the_bound_is_cut_there(wire: tuple[str, str, str]) -> None:
    error = await failure(wire, "flood-body", stream=False)
    assert error.code is ErrorCode.LIMIT_EXCEEDED
    assert error.message == (
        f"provider 'llm' sent more than the host reads of an answer: the answer passed {MAX_BODY_BYTES} bytes "
        "(a bound of the host)"
    )


@pytest.mark.parametrize("model", ["flood-event", "flood-line"])
async def test_an_sse_event_past_the_bound_ends_the_stream_and_closes_it(
    wire: tuple[str, str, str], model: str
) -> None:
    before = await disconnects(wire[1])
    error = await failure(wire, model, stream=True)
    assert error.code is ErrorCode.LIMIT_EXCEEDED
    assert f"one event of the stream passed {MAX_EVENT_BYTES} bytes" in error.message
    assert await disconnects(wire[1], before + 1) == before + 1  # the server saw its client go


@pytest.mark.parametrize(
    ("model", "kind"),
    [
        ("gzip", "UnwantedEncoding"),
        ("redirect", "UnwantedRedirect"),  # never followed: it would carry the headers and the prompt
        ("not-json", "JSONDecodeError"),
        ("deep", "RecursionError"),
    ],
)
async def test_an_answer_the_host_will_not_read_is_protocol(wire: tuple[str, str, str], model: str, kind: str) -> None:
    """Refused unread (compressed, a redirect), or unreadable: the server's fault, never `internal`."""
    error = await failure(wire, model, stream=False)
    assert error.code is ErrorCode.PROTOCOL, error
    assert f"({kind})" in error.message
