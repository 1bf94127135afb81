"""An MCP tooling's answers to its server's requests, as the SDK client's callbacks.

`ServerCallbacks` gives the `Client` its elicitation, sampling, roots and logging callbacks, and
translates between the SDK's types and `server_requests` (plain data, answered by policy). The
agent a request came for is the one whose call runs in the current task (`calling` sets it around
each call): always so for 2026-07-28 `input_required` rounds, which run in the call's own task; a
2025-11-25 request arrives on the connection's task and is the one call in flight's, if exactly
one is. A call records the requests refused during it, so that a call the server then fails is
told as `denied` naming the request kind (`refused`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final

import mcp_types as types
from mcp.client.session import ClientRequestContext
from pydantic import ValidationError

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatResult
from agent_host.toolings.mcp.sampling import as_chat, as_result
from agent_host.toolings.server_requests import ASKER, SPENDER, Asker, Question, Sampling, ServerRequests, Spender

logger = logging.getLogger(__name__)

SERVER_LOG_LEVEL: Final = "info"
"""The level from which a 2026-07-28 server is asked to send its log messages (an opt-in per request)."""


@dataclass(eq=False)
class Call:
    """A tool call in flight, the guest call it serves (`asker`, when there is one), the model budget
    its sampling requests are charged to (`spender`), and the server requests refused during it (by kind)."""

    agent: str
    asker: Asker | None = None
    spender: Spender | None = None
    refused: list[str] = field(default_factory=list)


_CALL: ContextVar[Call | None] = ContextVar("agent_host_mcp_call", default=None)


class ServerCallbacks:
    """The callbacks of one tooling's `Client` (see the module docstring)."""

    def __init__(self, tooling: str, requests: ServerRequests, *, sampling_tools: bool = False) -> None:
        """`sampling_tools`: declare that sampling requests may offer tools (a provider answers them)."""
        self._tooling = tooling
        self._sampling_tools = sampling_tools
        self._requests = requests
        self._in_flight: set[Call] = set()

    @contextmanager
    def calling(self, agent: str) -> Iterator[Call]:
        """Mark the current task as running a call for `agent`, for the requests that come during it."""
        call = Call(agent, ASKER.get(), SPENDER.get())
        token = _CALL.set(call)
        self._in_flight.add(call)
        try:
            yield call
        finally:
            self._in_flight.discard(call)
            _CALL.reset(token)

    def _current(self) -> Call | None:
        call = _CALL.get()
        if call is None and len(self._in_flight) == 1:
            (call,) = self._in_flight
        return call

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        call = self._current()
        agent = call.agent if call else None
        if isinstance(params, types.ElicitRequestFormParams):
            kind = "elicitation"
            asker = call.asker if call else None
            question = Question(self._tooling, agent, params.message, dict(params.requested_schema), asker)
        else:
            kind = "URL elicitation"
            question = Question(self._tooling, agent, params.message, {}, url=params.url)
        reply = await self._requests.elicit(question)
        if reply.action != "accept" and call is not None:
            call.refused.append(kind)
        content = reply.content if question.url is None else None
        return types.ElicitResult(action=reply.action, content=content)

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        call = self._current()
        request = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            chat, unfit = as_chat(params), None
        except ToolingError as exc:
            chat, unfit = None, exc.message
        sampling = Sampling(
            self._tooling, call.agent if call else None, request, chat, unfit, call.spender if call else None
        )
        try:
            answer = await self._requests.sample(sampling)
            if isinstance(answer, ChatResult):
                return as_result(answer)
        except ToolingError as exc:
            if call is not None:
                call.refused.append("sampling")
            return types.ErrorData(code=types.INVALID_REQUEST, message=str(exc))
        shape = types.CreateMessageResultWithTools if params.tools else types.CreateMessageResult
        try:
            return shape.model_validate(answer)
        except ValidationError as exc:
            message = f"tooling {self._tooling!r}: the sampling hook's answer is not a {shape.__name__}: {exc}"
            logger.warning("%s", message)
            return types.ErrorData(code=types.INTERNAL_ERROR, message=message)

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        uris = self._requests.roots(self._tooling)
        roots = [types.Root.model_validate({"uri": uri, "name": uri.rstrip("/").rsplit("/", 1)[-1]}) for uri in uris]
        return types.ListRootsResult(roots=roots)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        call = self._current()
        self._requests.log(self._tooling, params.level, params.logger, params.data, call.agent if call else None)

    def client_options(self) -> dict[str, Any]:
        """The `Client` keyword arguments that install these callbacks."""
        return {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "list_roots_callback": self.list_roots,
            "logging_callback": self.log,
            "log_level": SERVER_LOG_LEVEL,
            "sampling_capabilities": types.SamplingCapability(
                tools=types.SamplingToolsCapability() if self._sampling_tools else None
            ),
        }


REFUSAL_HINTS: Final = {
    "elicitation": 'its `elicitation` (or the agent\'s) decides: "ask" asks the approver (`--approve ask`), '
    '"guest" the guest',
    "URL elicitation": 'with "ask" the approver is asked to open the URL; otherwise it is declined',
    "sampling": 'set `sampling = { provider = "NAME" }` (or a hook, "module:function") on the tooling to answer it',
}
"""What to change for each kind of server request the host refused, for the `denied` message."""

PASSED_ON: Final = frozenset({ErrorCode.TIMEOUT, ErrorCode.CANCELLED, ErrorCode.UNAVAILABLE, ErrorCode.LIMIT_EXCEEDED})
"""Failures of a call told as they are even after a refused request (they are not the server's answer to it)."""


def refused(tooling: str, tool: str, call: Call, failure: ToolingError) -> ToolingError:
    """`failure` of a call during which requests were refused: `denied`, naming the request kind."""
    if not call.refused or failure.code in PASSED_ON:
        return failure
    kind = call.refused[-1]
    return ToolingError(
        ErrorCode.DENIED,
        f"tooling {tooling!r}: tool {tool!r} failed after the server's {kind} request was refused "
        f"({REFUSAL_HINTS.get(kind, 'by policy')}): {failure.message}",
        failure.data,
    )
