"""A server speaking the Chat Completions wire protocol as OpenAI does, scripted by the model's name.

`POST /v1/chat/completions` answers a `ChatCompletion`, or with `stream: true` SSE chunks as the API
sends them: a role chunk, one chunk per word of the text, each tool call's id and name then its
arguments in fragments of `FRAGMENT` characters, the finish chunk, the usage chunk (when
`stream_options.include_usage`), `[DONE]`. Errors have the API's body (`{"error": {...}}`); a 429
says `retry-after: 7`. `GET /v1/models` lists `MODELS`. The scripts and the record are
`tests.servers.model_wire`'s, plus one model of this wire alone: "clock" streams its role chunk,
waits `CLOCK_PAUSE` seconds, then sends one piece whose text is the wall clock (`time.time_ns()`)
at the moment it is sent, then the end (`make bench` times the first piece's way to a client with
it). `python -m tests.servers.openai_wire` serves on a free port.
"""

from __future__ import annotations

import json
import sys
import time
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

FINISH: Final = {"stop": "stop", "length": "length", "tool": "tool_calls", "filter": "content_filter"}

ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "insufficient_permissions",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}


def error_body(status: int, request: Request, model: str) -> dict[str, Any]:
    words = {
        400: f"This model's maximum context length is 8 tokens (request by {credential(request)})",
        401: f"Incorrect API key provided: {credential(request)}",
        403: "You are not allowed to sample from this model",
        404: f"The model `{model}` does not exist or you do not have access to it.",
        429: "Rate limit reached for requests",
    }.get(status, "The server had an error while processing your request.")
    code = {404: "model_not_found", 401: "invalid_api_key"}.get(status)
    return {"error": {"message": words, "type": ERROR_TYPES.get(status, "server_error"), "param": None, "code": code}}


def usage() -> dict[str, int]:
    return {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS, "total_tokens": 18}


def completion(model: str, script: Script) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": script.text, "refusal": None}
    if script.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.text}} for c in script.calls
        ]
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": FINISH[script.finish]}
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [choice],
        "usage": usage() if script.usage else None,
    }


def chunk(model: str, delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": None,
        "choices": choices,
        **extra,
    }
    return f"data: {json.dumps(body)}\n\n".encode()


async def frames(model: str, script: Script, include_usage: bool, *, hang: bool, broken: bool) -> AsyncIterator[bytes]:
    yield chunk(model, {"role": "assistant", "content": "", "refusal": None})
    if model == "drip":  # keep-alive comments only, every DRIP seconds, until the client goes
        while True:
            yield b": ping\n\n"
            await anyio.sleep(DRIP)
    words = (script.text or "").split(" ") if script.text else []
    if model == "clock":  # one piece stamped with the wall clock as it is sent, instead of the words
        await anyio.sleep(CLOCK_PAUSE)
        yield chunk(model, {"content": str(time.time_ns())})
        words = []
    for index, word in enumerate(words):
        yield chunk(model, {"content": word if index == 0 else f" {word}"})
        if hang:
            await anyio.sleep_forever()  # until the client goes (the stream's watcher cancels this)
        if broken:
            error = {"message": "The server had an error while streaming", "type": "server_error", "code": None}
            yield f"data: {json.dumps({'error': error})}\n\n".encode()
            return
    for index, call in enumerate(script.calls):
        head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        yield chunk(model, {"tool_calls": [head]})
        size = FRAGMENT if len(call.text) < 1000 else BIG_FRAGMENT
        for start in range(0, len(call.text), size):
            piece = {"index": index, "function": {"arguments": call.text[start : start + size]}}
            yield chunk(model, {"tool_calls": [piece]})
    if script.then_hang:
        await anyio.sleep_forever()  # until the client goes (the stream's watcher cancels this)
    yield chunk(model, {}, FINISH[script.finish])
    if include_usage and script.usage:
        yield chunk(model, None, usage=usage())
    yield b"data: [DONE]\n\n"


DRIP = 0.2
"""Seconds between the keep-alive comments of the "drip" model (a stream that says nothing else)."""

CLOCK_PAUSE = 0.02
"""Seconds the "clock" model waits between its role chunk and its stamped piece (a model's first
token comes after a while: the client is waiting for it, not still reading the answer's start)."""


def build() -> Starlette:
    record = Record()

    async def chat(request: Request) -> Response:
        body = await remember(request, record)
        model = str(body.get("model"))
        status = error_status(model)
        if status is not None:
            headers = {"retry-after": "7"} if status == 429 else {}
            return JSONResponse(error_body(status, request, model), status_code=status, headers=headers)
        flooded = hostile(model, record)
        if flooded is not None:
            return flooded
        if model == "slow":
            await until_gone(request.receive, record)
            return Response(status_code=499)
        script = leaked(request) if model == "leak" else script_for(model, body.get("messages"))
        if not body.get("stream"):  # "leak" names the key as the model that answered, too
            return JSONResponse(completion(credential(request) if model == "leak" else model, script))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = frames(model, script, include_usage, hang=model == "hang", broken=model == "broken")
        return EventStream(events, record)

    async def models(request: Request) -> Response:
        data = [{"id": name, "object": "model", "created": 0, "owned_by": "test"} for name in MODELS]
        return JSONResponse({"object": "list", "data": data})

    routes = [Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/models", models)]
    return app_with(routes, record)


if __name__ == "__main__":
    serve(build, sys.argv[1:])
