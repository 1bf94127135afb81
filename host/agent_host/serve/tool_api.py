"""The HTTP tool API of `agent-host serve`, beside `/mcp` on the same server.

`GET /tools/list` → `{"tools": [{"name", "description", "parameters", "builtin"}]}`; `POST
/tools/{name}` with a JSON object body runs the tool: `200 {"result": VALUE}` (`answers.Answer.value`)
or `{"error": {"code", "message"}}` with the status of `STATUS` for its WIT error code; `GET
/openapi.json` describes both; another method on these paths is a 405 in the same format, with
an `Allow` header, naming the method to use. The checks of `/mcp` apply (token, Host/Origin, `max_body`). A body
must be strict JSON (`strict_json`), else 400 `invalid-arguments` naming what is wrong; parsing a
body and rendering an answer run off the loop when large (`off_loop`). Every call is
audited (`Catalog.record`), refused ones too. A client that hangs up mid-call cancels it (its guest
stopped, its turn freed); one that hangs up mid-body is recorded as `cancelled`, nothing else.
"""

from __future__ import annotations

import http
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_host._support import off_loop, strict_json, tracing
from agent_host._version import __version__
from agent_host.serve.catalog import Catalog
from agent_host.serve.clients import client_of_scope
from agent_host.serve.hangups import unless_hung_up

STATUS: Final[Mapping[str, int]] = {
    "invalid-arguments": 400,
    "denied": 403,
    "not-found": 404,
    "limit-exceeded": 429,
    "tool-failed": 500,
    "cancelled": 503,
    "protocol": 502,
    "internal": 500,
    "unavailable": 503,
    "timeout": 504,
    "unauthorized": 503,
}
"""HTTP status of each WIT error code an answer can carry (`limit-exceeded`: the server is busy; a body
over `max_body` is `limit-exceeded` with 413; `unauthorized`: a tooling needs its operator to log in,
not the caller)."""


REFUSAL_CODES: Final[Mapping[int, str]] = {400: "invalid-arguments", 403: "denied", 421: "denied"}
"""The error code of each status the transport security answers with (bad Content-Type, Origin, Host)."""


EVERY_METHOD: Final = tuple(method.value for method in http.HTTPMethod)
"""The HTTP methods (RFC 9110, 5789): those of a request that takes the wrong one get the API's 405."""


def error(code: str, message: str, status: int | None = None) -> JSONResponse:
    body = {"error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status if status is not None else STATUS[code])


def _as_error(refused: Response) -> JSONResponse:
    """The transport security's plain-text refusal, in the API's error format (same status)."""
    message = bytes(refused.body).decode("utf-8", "replace")
    return error(REFUSAL_CODES.get(refused.status_code, "denied"), message, refused.status_code)


def routes(catalog: Catalog, security: TransportSecuritySettings, max_body: int) -> list[Route]:
    """The API's routes, for the server's Starlette application."""
    guard = TransportSecurityMiddleware(security)

    async def listing(request: Request) -> list[dict[str, Any]]:
        tools = await catalog.tools(client_of_scope(request.scope))
        return [
            {
                "name": t.name,
                "description": t.description or "",
                "parameters": dict(t.input_schema),
                "builtin": t.builtin,
            }
            for t in tools
        ]

    async def tools_list(request: Request) -> Response:
        refused = await guard.validate_request(request)
        return _as_error(refused) if refused is not None else JSONResponse({"tools": await listing(request)})

    async def tools_call(request: Request) -> Response:
        name = request.path_params["name"]
        started = time.monotonic()
        client = client_of_scope(request.scope)
        refused = await guard.validate_request(request, is_post=True)
        if refused is not None:
            catalog.record(name, 0, REFUSAL_CODES.get(refused.status_code, "denied"), started, client)
            return _as_error(refused)
        if not catalog.knows(name):
            catalog.record(name, 0, "not-found", started, client)
            return error("not-found", f"no tool {name!r} is offered; offered: {catalog.names()}")
        body = bytearray()
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_body:
                    catalog.record(name, len(body), "limit-exceeded", started, client)
                    return error("limit-exceeded", f"the request body is larger than max_body ({max_body} bytes)", 413)
        except ClientDisconnect:  # hung up mid-body: nobody to answer
            catalog.record(name, len(body), "cancelled", started, client)
            return Response(status_code=400)
        try:
            arguments = await off_loop.run(strict_json.loads, bytes(body or b"{}"), size=len(body))
        except strict_json.JsonTextError as exc:
            catalog.record(name, len(body), "invalid-arguments", started, client)
            return error("invalid-arguments", f"the body is not strict JSON (RFC 8259): {exc}")
        if not isinstance(arguments, dict):
            catalog.record(name, len(body), "invalid-arguments", started, client)
            return error("invalid-arguments", "the body must be a JSON object: the tool's arguments")
        with tracing.attached(request.headers):  # a `traceparent` header: the call continues the client's trace
            called = catalog.call(name, arguments, argument_bytes=len(body), client=client)
            answer = await unless_hung_up(request, called)
        if answer is None:
            return Response(status_code=400)  # the client is gone; the call was cancelled (and audited)
        if answer.code is not None:
            return error(answer.code, answer.message)
        return Response(await off_loop.run(answer.rendered, size=answer.size), media_type="application/json")

    async def openapi(request: Request) -> Response:
        refused = await guard.validate_request(request)
        return _as_error(refused) if refused is not None else JSONResponse(_openapi(await listing(request)))

    return [
        Route("/tools/list", tools_list, methods=["GET"]),
        Route("/tools/{name}", tools_call, methods=["POST"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        # Any other method: these match only what the routes above did not (Starlette's own 405 is text).
        Route("/tools/list", wrong_method("GET"), methods=EVERY_METHOD),
        Route("/tools/{name}", wrong_method("POST"), methods=EVERY_METHOD),
        Route("/openapi.json", wrong_method("GET"), methods=EVERY_METHOD),
    ]


def wrong_method(allowed: str) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint answering 405 in the API's error format, naming the method to use once
    (`GET /tools/echo: use POST`; `GET` endpoints take `HEAD` too), every method in `Allow`."""
    methods = f"{allowed}, HEAD" if allowed == "GET" else allowed
    use = f"{allowed} (or HEAD)" if allowed == "GET" else allowed

    async def refuse(request: Request) -> Response:
        message = f"{request.method} {request.url.path}: use {use}"
        answer = error("invalid-arguments", message, 405)
        answer.headers["allow"] = methods
        return answer

    return refuse


def _openapi(tools: list[dict[str, Any]]) -> dict[str, Any]:
    failure = {
        "description": "The tool did not run or failed: {error: {code, message}}",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    paths: dict[str, Any] = {
        "/tools/list": {"get": {"summary": "The tools offered", "responses": {"200": {"description": "The tools"}}}}
    }
    for tool in tools:
        paths[f"/tools/{tool['name']}"] = {
            "post": {
                "summary": tool["description"],
                "operationId": tool["name"],
                "requestBody": {"required": True, "content": {"application/json": {"schema": tool["parameters"]}}},
                "responses": {
                    "200": {"description": "The tool's result: {result: VALUE}"},
                    **{str(status): failure for status in sorted({*STATUS.values(), 401, 413})},
                },
            }
        }
    error_schema = {
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": {"code": {"type": "string", "enum": sorted(STATUS)}, "message": {"type": "string"}},
                "required": ["code", "message"],
            }
        },
        "required": ["error"],
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "agent-host tool API", "version": __version__},
        "paths": paths,
        "components": {
            "schemas": {"Error": error_schema},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
