"""The error table of providers (`providers.errors` with each SDK's rows): every upstream failure of the
`openai` and `anthropic` packages becomes its code by class, status or reported type (never by its text),
with `retry_after` for a 429, and no message, `data` or log line ever holds the provider's key.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.providers.anthropic_messages import ERRORS as ANTHROPIC_ERRORS
from agent_host.providers.errors import ErrorMap, Failure, retry_after
from agent_host.providers.openai_chat import ERRORS as OPENAI_ERRORS
from tests.support.provider_configs import FILE, KEY, network, providers

REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat", headers={"Authorization": f"Bearer {KEY}"})
WHERE = f"{FILE} [provider.llm]"


def response(status: int, body: dict[str, Any], **headers: str) -> httpx2.Response:
    return httpx2.Response(status, request=REQUEST, json=body, headers=headers)


def status_error(sdk: Any, kind: str, status: int, words: str, **headers: str) -> Exception:
    """An SDK's status error as it raises one: the API's body, the response, the message it makes."""
    body = {"error": {"message": words, "type": kind}}
    error_class: type[Exception] = getattr(sdk, CLASSES.get(status, "InternalServerError"))
    answer = response(status, body, **headers)
    if sdk is openai:
        return error_class(f"Error code: {status} - {body}", response=answer, body=body["error"])  # type: ignore[call-arg]
    return error_class(f"{status} {words}", response=answer, body=body)  # type: ignore[call-arg]


CLASSES = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    429: "RateLimitError",
}
"""The class each SDK raises for a status (the rest: `InternalServerError`)."""


SDKS = {
    "openai": (openai, OPENAI_ERRORS, "Chat Completions"),
    "anthropic": (anthropic, ANTHROPIC_ERRORS, "Messages API"),
}


def error_map(wire: str) -> ErrorMap:
    _, table, name = SDKS[wire]
    return ErrorMap(providers(network(wire, "http://127.0.0.1:9", model="m"))["llm"], table, name)


CASES: dict[str, tuple[Callable[[Any], Exception], ErrorCode, str]] = {
    "400": (
        lambda sdk: status_error(sdk, "invalid_request_error", 400, f"context too long (key {KEY})"),
        ErrorCode.INVALID_ARGUMENTS,
        "provider 'llm' refused the request for model 'gpt' (HTTP 400): context too long (key [hidden])",
    ),
    "401": (
        lambda sdk: status_error(sdk, "authentication_error", 401, f"invalid key {KEY}"),
        ErrorCode.UNAUTHORIZED,
        f"provider 'llm' refused its key (HTTP 401): set a valid `api_key` in {WHERE}",
    ),
    "403": (
        lambda sdk: status_error(sdk, "permission_error", 403, "not yours"),
        ErrorCode.UNAUTHORIZED,
        f"provider 'llm' refused its key (HTTP 403): set a valid `api_key` in {WHERE}",
    ),
    "404": (
        lambda sdk: status_error(sdk, "not_found_error", 404, "model: gpt"),
        ErrorCode.NOT_FOUND,
        f"provider 'llm' has no model 'gpt' (HTTP 404): model: gpt (list its models, or check `base_url` in {WHERE})",
    ),
    "429": (
        lambda sdk: status_error(sdk, "rate_limit_error", 429, "slow down", **{"retry-after": "7"}),
        ErrorCode.UNAVAILABLE,
        "provider 'llm' is limiting requests (HTTP 429), retry after 7 s: slow down",
    ),
    "503": (
        lambda sdk: status_error(sdk, "overloaded_error", 503, "Overloaded"),
        ErrorCode.UNAVAILABLE,
        "provider 'llm' failed (HTTP 503), try again later: Overloaded",
    ),
    "refused": (
        lambda sdk: sdk.APIConnectionError(request=REQUEST),
        ErrorCode.UNAVAILABLE,
        "provider 'llm' could not be reached, or the connection was lost (APIConnectionError): "
        f"check `base_url` in {WHERE}",
    ),
    "timeout": (
        lambda sdk: sdk.APITimeoutError(request=REQUEST),
        ErrorCode.TIMEOUT,
        f"provider 'llm' did not answer within 5 s (raise `timeout` in {WHERE})",
    ),
    "transport": (
        lambda sdk: httpx2.ReadError(f"lost {KEY}"),
        ErrorCode.UNAVAILABLE,
        f"provider 'llm' could not be reached, or the connection was lost (ReadError): check `base_url` in {WHERE}",
    ),
    "whole chat past its timeout": (
        lambda sdk: TimeoutError(),
        ErrorCode.TIMEOUT,
        f"provider 'llm' did not answer within 5 s (raise `timeout` in {WHERE})",
    ),
}


@pytest.mark.parametrize("wire", SDKS)
@pytest.mark.parametrize("case", CASES)
def test_every_row_of_the_table_gives_its_code_and_message_without_the_key(
    wire: str, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    make, code, message = CASES[case]
    error = error_map(wire).error(make(SDKS[wire][0]), model="gpt")
    assert (error.code, error.message) == (code, message)
    assert KEY not in error.message and KEY not in (error.data or "") and KEY not in caplog.text
    assert error.data == (json.dumps({"retry_after": 7.0}) if case == "429" else None)


@pytest.mark.parametrize("wire", SDKS)
def test_the_class_decides_never_the_words(wire: str) -> None:
    sdk = SDKS[wire][0]
    errors = error_map(wire)
    assert errors.error(status_error(sdk, "rate_limit_error", 400, "rate limit, 429, overloaded"), model="m").code is (
        ErrorCode.INVALID_ARGUMENTS
    )
    assert errors.error(status_error(sdk, "invalid_request_error", 429, "bad request"), model="m").code is (
        ErrorCode.UNAVAILABLE
    )


@pytest.mark.parametrize("wire", SDKS)
@pytest.mark.parametrize(("status", "failure"), [(418, Failure.REFUSED), (451, Failure.REFUSED), (599, Failure.SERVER)])
def test_a_status_no_class_names_is_judged_by_its_hundreds(wire: str, status: int, failure: Failure) -> None:
    sdk = SDKS[wire][0]
    body = {"error": {"message": "odd", "type": "x"}}
    assert error_map(wire).failure(sdk.APIStatusError("odd", response=response(status, body), body=body)) is failure
    conflict = sdk.ConflictError("busy", response=response(409, body), body=body)
    assert error_map(wire).failure(conflict) is Failure.SERVER


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("overloaded_error", ErrorCode.UNAVAILABLE),
        ("invalid_request_error", ErrorCode.INVALID_ARGUMENTS),
        ("rate_limit_error", ErrorCode.UNAVAILABLE),
        ("something_new", ErrorCode.UNAVAILABLE),
    ],
)
def test_an_error_reported_inside_a_stream_is_judged_by_its_type(kind: str, code: ErrorCode) -> None:
    """Anthropic's `error` event is a status error of status 200; OpenAI's `{"error": ...}` chunk a bare `APIError`."""
    body = {"type": "error", "error": {"type": kind, "message": "mid-stream"}}
    reported = anthropic.APIStatusError("x", response=response(200, body), body=body)
    assert error_map("anthropic").error(reported, model="m").code is code
    openai_reported = openai.APIError("mid-stream", REQUEST, body={"message": "mid-stream", "type": kind})
    error = error_map("openai").error(openai_reported, model="m")
    assert error.code is code and error.message.endswith("mid-stream")


@pytest.mark.parametrize("raised", [ValueError("bad JSON"), RecursionError(), KeyError("choices"), TypeError("x")])
def test_what_an_sdk_raises_reading_an_answer_it_cannot_read_is_protocol(raised: Exception) -> None:
    with pytest.raises(ToolingError) as caught, error_map("openai").mapped("m"):
        raise raised
    assert caught.value.code is ErrorCode.PROTOCOL and f"({type(raised).__name__})" in caught.value.message


def test_an_exception_outside_the_table_is_not_caught() -> None:
    errors = error_map("openai")
    with pytest.raises(RuntimeError), errors.mapped("m"):
        raise RuntimeError("a host bug")
    with pytest.raises(ToolingError) as caught, errors.mapped("m"):
        raise openai.APIConnectionError(request=REQUEST)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_headers_values_are_secrets_too_and_the_servers_words_are_cut_and_printable() -> None:
    config = providers(
        network("openai", "http://h", model="m", extra='headers = { "X-Tenant" = "tenant-secret-42" }\n')
    )
    errors = ErrorMap(config["llm"], OPENAI_ERRORS, "Chat Completions")
    words = "tenant-secret-42 said\x1b[31m no " + "x" * 2000
    error = errors.error(status_error(openai, "invalid_request_error", 400, words), model="m")
    assert "tenant-secret-42" not in error.message and "[hidden] said\\x1b[31m no" in error.message
    assert error.message.endswith("characters cut]")


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, 30.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:27:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "nan"}, None),
        ({}, None),
    ],
)
def test_retry_after_reads_seconds_milliseconds_or_a_date(headers: dict[str, str], expected: float | None) -> None:
    now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert retry_after(httpx2.Headers(headers), now=now) == expected


@pytest.mark.parametrize("wire", SDKS)
def test_a_failure_listing_the_models_names_the_list_not_a_model(wire: str) -> None:
    error = error_map(wire).error(status_error(SDKS[wire][0], "not_found_error", 404, "no such route"), model=None)
    assert error.code is ErrorCode.NOT_FOUND
    assert error.message.startswith("provider 'llm' has no list of models (HTTP 404): no such route")
