"""The one place where a provider's failures become `ToolingError`s: tables, never message text.

Each backend maps its SDK's exception classes to a `Failure` (`ErrorMap`, first match along the
class's MRO, in the manner of httpx's `HTTPCORE_EXC_MAP`); `COMMON` adds the transport's and the
timeout's, and the bounds of the host's own HTTP client (`capped_http`), which an SDK may have
wrapped: the first exception along the `__cause__` chain whose class `CAUSES` names decides. A
status error no class names is judged by its status (`STATUS_CLASSES`), an error the
server reported inside a stream by its `type` (`ERROR_TYPES`). `RULES` gives each failure its code
and message: it names the provider, what to change in which table, and quotes the server's own
words (cut, made printable) only where they help. No message, `data` or log line holds a secret of
the provider (`api_key`, header values): `ErrorMap` replaces each with `[hidden]`.
"""

from __future__ import annotations

import email.utils
import enum
import json
import logging
import math
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

import httpx2

from agent_host._support.printable import printable
from agent_host.config.providers import ProviderConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.providers.capped_http import AnswerTooLarge, UnwantedEncoding, UnwantedRedirect
from agent_host.providers.secrets import redacted, secrets_of

logger = logging.getLogger(__name__)

MESSAGE_LIMIT: Final = 1000
"""Characters of a server's own error message quoted in an error (the rest is cut, with a marker)."""


class Failure(enum.Enum):
    """What went wrong, as the tables name it."""

    REFUSED = "refused"
    """The server refused the request as it was (400, 422, a context too long)."""
    UNAUTHORIZED = "unauthorized"
    NOT_FOUND = "not-found"
    RATE_LIMITED = "rate-limited"
    SERVER = "server"
    """The server failed (5xx, overloaded)."""
    UNREACHABLE = "unreachable"
    """Connection refused, reset or lost."""
    TIMEOUT = "timeout"
    PROTOCOL = "protocol"
    """An answer the wire protocol does not allow."""
    TOO_LARGE = "too-large"
    """An answer past the bounds the host reads (`capped_http`)."""
    STATUS = "status"
    """Another status: judged by `STATUS_CLASSES`."""
    REPORTED = "reported"
    """An error the server reported inside an answer: judged by `ERROR_TYPES`, else a server failure."""


@dataclass(frozen=True)
class Rule:
    """How one failure reaches the guest: its code and a `str.format` template."""

    code: ErrorCode
    message: str


RULES: Final[Mapping[Failure, Rule]] = {
    Failure.REFUSED: Rule(ErrorCode.INVALID_ARGUMENTS, "{where} refused the request for {subject} ({status}): {text}"),
    Failure.UNAUTHORIZED: Rule(
        ErrorCode.UNAUTHORIZED, "{where} refused its key ({status}): set a valid `api_key` in {origin}"
    ),
    Failure.NOT_FOUND: Rule(
        ErrorCode.NOT_FOUND,
        "{where} has no {subject} ({status}): {text} (list its models, or check `base_url` in {origin})",
    ),
    Failure.RATE_LIMITED: Rule(ErrorCode.UNAVAILABLE, "{where} is limiting requests ({status}){retry}: {text}"),
    Failure.SERVER: Rule(ErrorCode.UNAVAILABLE, "{where} failed ({status}), try again later: {text}"),
    Failure.UNREACHABLE: Rule(
        ErrorCode.UNAVAILABLE,
        "{where} could not be reached, or the connection was lost ({kind}): check `base_url` in {origin}",
    ),
    Failure.TIMEOUT: Rule(
        ErrorCode.TIMEOUT, "{where} did not answer within {timeout:g} s (raise `timeout` in {origin})"
    ),
    Failure.PROTOCOL: Rule(ErrorCode.PROTOCOL, "{where} answered what the {wire} protocol does not allow ({kind})"),
    Failure.TOO_LARGE: Rule(
        ErrorCode.LIMIT_EXCEEDED, "{where} sent more than the host reads of an answer: {detail} (a bound of the host)"
    ),
}
"""The code and message of each failure (`STATUS` and `REPORTED` are resolved to one of these first)."""

CAUSES: Final[Mapping[type[BaseException], Failure]] = {
    AnswerTooLarge: Failure.TOO_LARGE,
    UnwantedEncoding: Failure.PROTOCOL,
    UnwantedRedirect: Failure.PROTOCOL,
}
"""The host's own failures, decided wherever they are along the `__cause__` chain (an SDK wraps what
its HTTP client raises in a connection error of its own)."""

MAX_CAUSES: Final = 8
"""Links of a `__cause__` chain looked along."""

COMMON: Final[Mapping[type[BaseException], Failure]] = {
    **CAUSES,
    TimeoutError: Failure.TIMEOUT,
    httpx2.TimeoutException: Failure.TIMEOUT,
    httpx2.TransportError: Failure.UNREACHABLE,
    httpx2.DecodingError: Failure.PROTOCOL,
    ValueError: Failure.PROTOCOL,
    LookupError: Failure.PROTOCOL,
    AttributeError: Failure.PROTOCOL,
    TypeError: Failure.PROTOCOL,
    RecursionError: Failure.PROTOCOL,
}
"""Failures of every backend: the whole chat's `timeout` (`anyio.fail_after`), the transport's own
exceptions where an SDK lets one through, and what an SDK raises reading an answer it cannot
read (JSON that does not parse, or nests past Python's recursion limit, text that is not UTF-8, a
value of another shape than it expects): `mapped` wraps only the SDK's calls, so these are the
server's answer, never the host's own code."""

STATUS_CLASSES: Final[Mapping[int, Failure]] = {4: Failure.REFUSED, 5: Failure.SERVER}
"""A status no exception class of the table names, by its hundreds."""

ERROR_TYPES: Final[Mapping[str, Failure]] = {
    "invalid_request_error": Failure.REFUSED,
    "request_too_large": Failure.REFUSED,
    "authentication_error": Failure.UNAUTHORIZED,
    "permission_error": Failure.UNAUTHORIZED,
    "not_found_error": Failure.NOT_FOUND,
    "rate_limit_error": Failure.RATE_LIMITED,
    "api_error": Failure.SERVER,
    "overloaded_error": Failure.SERVER,
    "server_error": Failure.SERVER,
}
"""An error a server reported inside a stream, by its `type` (both wires name it in the error's body)."""


def retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait before trying again, from `retry-after-ms` or `retry-after` (seconds or an
    HTTP date); None when neither says (or says something unreadable)."""
    if headers is None:
        return None
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = headers.get("retry-after")
    seconds = _number(value)
    if seconds is not None or value is None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, round(when.timestamp() - (time.time() if now is None else now), 3))


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def _server_words(error: BaseException, secrets: list[str]) -> str:
    """What the server said about the failure: its body's `message` (or `error.message`), or the
    body's text, its secrets hidden before it is cut; "(no message)" when it said nothing."""
    body = getattr(error, "body", None)
    words: object = None
    if isinstance(body, Mapping):
        words = body.get("message")
        inner = body.get("error")
        if words is None and isinstance(inner, Mapping):
            words = inner.get("message")
    elif isinstance(body, str):
        words = body
    if not isinstance(words, str) or not words.strip():
        return "(no message)"
    return printable(redacted(words, secrets), MESSAGE_LIMIT)


def _cause(error: BaseException) -> BaseException:
    """The first exception along `error`'s `__cause__` chain whose class `CAUSES` names; else `error`."""
    link: BaseException | None = error
    for _ in range(MAX_CAUSES):
        if link is None:
            break
        if isinstance(link, tuple(CAUSES)):
            return link
        link = link.__cause__
    return error


class ErrorMap:
    """How one provider's failures reach guests: its backend's `table` (exception class -> `Failure`,
    `COMMON` added) and the provider's config (its name, table, timeout and secrets)."""

    def __init__(self, config: ProviderConfig, table: Mapping[type[BaseException], Failure], wire: str) -> None:
        self._config = config
        self._table = {**table, **COMMON}
        self._wire = wire
        self._secrets = secrets_of(config)
        self.catches: tuple[type[BaseException], ...] = tuple(self._table)
        """The exception classes `mapped` turns into `ToolingError`s (any other is a bug and passes)."""

    def failure(self, error: BaseException) -> Failure:
        """The failure `error` is: its class's row (along its MRO), then its status or its type."""
        error = _cause(error)
        found = next((self._table[kind] for kind in type(error).__mro__ if kind in self._table), Failure.PROTOCOL)
        if found not in (Failure.STATUS, Failure.REPORTED):
            return found
        status = getattr(error, "status_code", None)
        if isinstance(status, int) and status >= 400:
            return STATUS_CLASSES.get(status // 100, Failure.SERVER)
        kind = getattr(error, "type", None)
        return ERROR_TYPES.get(kind, Failure.SERVER) if isinstance(kind, str) else Failure.SERVER

    def error(self, error: BaseException, *, model: str | None) -> ToolingError:
        """The `ToolingError` a guest gets for `error`, raised asking for `model` (None: listing the
        models), its secrets hidden."""
        error = _cause(error)
        failure = self.failure(error)
        status = getattr(error, "status_code", None)
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None)
        wait = retry_after(headers) if failure is Failure.RATE_LIMITED else None
        fields = {
            "where": f"provider {self._config.name!r}",
            "origin": self._config.origin,
            "subject": f"model {model!r}" if model is not None else "list of models",
            "status": f"HTTP {status}" if isinstance(status, int) and status >= 400 else "an error in its answer",
            "text": _server_words(error, self._secrets),
            "kind": type(error).__name__,
            "timeout": self._config.timeout,
            "wire": self._wire,
            "retry": f", retry after {wait:g} s" if wait is not None else "",
            "detail": str(error) if failure is Failure.TOO_LARGE else "",
        }
        rule = RULES[failure]
        message = redacted(rule.message.format_map(fields), self._secrets)
        data = json.dumps({"retry_after": wait}) if failure is Failure.RATE_LIMITED else None
        logger.debug("%s", message)
        return ToolingError(rule.code, message, data)

    def hide(self, text: str) -> str:
        """`text` with this provider's secrets hidden (for a message built elsewhere)."""
        return redacted(text, self._secrets)

    @contextmanager
    def mapped(self, model: str | None) -> Iterator[None]:
        """Turn an exception of `catches` raised in the block, asking for `model` (None: listing the
        models), into its `ToolingError` (chained to nothing: the SDK's exception holds the request,
        headers and all)."""
        try:
            yield
        except self.catches as exc:
            raise self.error(exc, model=model) from None
