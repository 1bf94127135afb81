"""A server speaking the Anthropic Messages API as Anthropic does, scripted by the model's name.

`POST /v1/messages` answers a `Message`, or with `stream: true` SSE events as the API sends them
(`event:` and `data:` lines): `message_start`, a `ping`, a text block (one delta per word), each
`tool_use` block with its input in `input_json_delta` fragments of `FRAGMENT` characters,
`message_delta` (stop reason, output usage), `message_stop`. Errors have the API's body
(`{"type": "error", "error": {...}}`); a 429 says `retry-after: 7`; a request without `max_tokens`
is a 400, as the API's. `GET /v1/models` lists `MODELS` as one page. The scripts and the record are
`tests.servers.model_wire`'s. `python -m tests.servers.anthropic_wire` serves on a free port.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any, Final

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.servers.model_wire import (
    BIG_FRAGMENT,
    COMPLETION_TOKENS,
    FRAGMENT,
    MODELS,
    PROMPT_TOKENS,
    EventStream,
    Record,
    Script,
    app_with,
    credential,
    error_status,
    hostile,
    leaked,
    remember,
    script_for,
    serve,
    until_gone,
)

STOP: Final = {"stop": "end_turn", "length": "max_tokens", "tool": "tool_use", "filter": "refusal"}

ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_body(status: int, words: str) -> dict[str, Any]:
    error = {"type": ERROR_TYPES.get(status, "api_error"), "message": words}
    return {"type": "error", "error": error, "request_id": "req_test"}


def error_words(status: int, request: Request, model: str) -> str:
    return {
        400: f"prompt is too long: 9 tokens > 8 maximum (request by {credential(request)})",
        401: f"invalid x-api-key: {credential(request)}",
        403: "Your API key does not have permission to use the specified resource.",
        404: f"model: {model}",
        429: "Number of requests has exceeded your rate limit",
    }.get(status, "Internal server error")


def content(script: Script) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": script.text}] if script.text else []
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in script.calls]
    return blocks


def message(model: str, script: Script, blocks: list[dict[str, Any]], output_tokens: int) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": STOP[script.finish] if blocks or script.finish != "stop" else None,
        "stop_sequence": None,
        "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": output_tokens},
    }


def event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


async def frames(model: str, script: Script, *, hang: bool, broken: bool) -> AsyncIterator[bytes]:
    start = message(model, script, [], 1)
    start["stop_reason"] = None
    yield event("message_start", {"type": "message_start", "message": start})
    yield event("ping", {"type": "ping"})
    index = 0
    if script.text:
        text_block = {"type": "text", "text": ""}
        yield event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": text_block})
        for number, word in enumerate(script.text.split(" ")):
            delta = {"type": "text_delta", "text": word if number == 0 else f" {word}"}
            yield event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            if hang:
                await anyio.sleep_forever()  # until the client goes (the stream's watcher cancels this)
            if broken:
                yield event("error", error_body(529, "Overloaded"))
                return
        yield event("content_block_stop", {"type": "content_block_stop", "index": 0})
        index = 1
    for offset, call in enumerate(script.calls):
        at = index + offset
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        yield event("content_block_start", {"type": "content_block_start", "index": at, "content_block": block})
        size = FRAGMENT if len(call.text) < 1000 else BIG_FRAGMENT
        for begin in range(0, len(call.text), size):
            delta = {"type": "input_json_delta", "partial_json": call.text[begin : begin + size]}
            yield event("content_block_delta", {"type": "content_block_delta", "index": at, "delta": delta})
        yield event("content_block_stop", {"type": "content_block_stop", "index": at})
    if script.then_hang:
        await anyio.sleep_forever()  # until the client goes (the stream's watcher cancels this)
    stop = {"stop_reason": STOP[script.finish], "stop_sequence": None}
    yield event(
        "message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": COMPLETION_TOKENS}}
    )
    yield event("message_stop", {"type": "message_stop"})


def build() -> Starlette:
    record = Record()

    async def messages(request: Request) -> Response:
        body = await remember(request, record)
        model = str(body.get("model"))
        status = error_status(model)
        if status is not None:
            headers = {"retry-after": "7"} if status == 429 else {}
            return JSONResponse(error_body(status, error_words(status, request, model)), status, headers=headers)
        if not isinstance(body.get("max_tokens"), int):
            return JSONResponse(error_body(400, "max_tokens: Field required"), 400)
        flooded = hostile(model, record)
        if flooded is not None:
            return flooded
        if model == "slow":
            await until_gone(request.receive, record)
            return Response(status_code=499)
        script = leaked(request) if model == "leak" else script_for(model, body.get("messages"))
        if not body.get("stream"):
            return JSONResponse(message(model, script, content(script), COMPLETION_TOKENS))
        return EventStream(frames(model, script, hang=model == "hang", broken=model == "broken"), record)

    async def models(request: Request) -> Response:
        data = [
            {
                "type": "model",
                "id": name,
                "display_name": name,
                "created_at": "2025-01-01T00:00:00Z",
                "lifecycle": "active",
            }
            for name in MODELS
        ]
        return JSONResponse({"data": data, "has_more": False, "first_id": MODELS[0], "last_id": MODELS[-1]})

    routes = [Route("/v1/messages", messages, methods=["POST"]), Route("/v1/models", models)]
    return app_with(routes, record)


if __name__ == "__main__":
    serve(build, sys.argv[1:])
