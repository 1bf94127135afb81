"""The HTTP tool API of `agent-host serve`, beside `/mcp` on the same server.

`GET /tools/list` → `{"tools": [{"name", "description", "parameters", "builtin"}]}` (`parameters`: the
JSON Schema of the arguments, as used for function calling); `POST /tools/{name}` with a JSON object
body runs the tool: `200 {"result": VALUE}` (`answers.Answer.value`: the structured content, else the
text as its JSON value when it is JSON, else the text) or `{"error": {"code", "message"}}` with the
status of `STATUS` for its WIT error code; `GET /openapi.json` describes both. The same checks as
`/mcp` apply: the token (`http.BearerTokens`), the Host and Origin headers (the SDK's transport
security) and `max_body`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from host import __version__
from host.serve.catalog import Catalog

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

    async def listing() -> list[dict[str, Any]]:
        tools = await catalog.tools()
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
        return _as_error(refused) if refused is not None else JSONResponse({"tools": await listing()})

    async def tools_call(request: Request) -> Response:
        refused = await guard.validate_request(request, is_post=True)
        if refused is not None:
            return _as_error(refused)
        name = request.path_params["name"]
        if not catalog.knows(name):
            return error("not-found", f"no tool {name!r} is offered; offered: {catalog.names()}")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > max_body:
                return error("limit-exceeded", f"the request body is larger than max_body ({max_body} bytes)", 413)
        try:
            arguments = json.loads(body or b"{}")
        except ValueError as exc:
            return error("invalid-arguments", f"the body is not JSON: {exc}")
        if not isinstance(arguments, dict):
            return error("invalid-arguments", "the body must be a JSON object: the tool's arguments")
        answer = await catalog.call(name, arguments)
        if answer.code is not None:
            return error(answer.code, answer.message)
        return JSONResponse({"result": answer.value})

    async def openapi(request: Request) -> Response:
        refused = await guard.validate_request(request)
        return _as_error(refused) if refused is not None else JSONResponse(_openapi(await listing()))

    return [
        Route("/tools/list", tools_list, methods=["GET"]),
        Route("/tools/{name}", tools_call, methods=["POST"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]


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
