"""What a tooling's server asks of the host (MCP server requests), as plain data and one protocol.

A server may ask a question (form elicitation), ask for model output (sampling), list the roots it
may work in, and send log messages. A tooling hands each to its `ServerRequests`, which answers by
policy (the host's is `session.server_requests.PolicyAnswers`); `DeclineAll` answers when none is
given. `caller` is the agent whose call the request came during, when the host can tell (None:
another request of the connection); `ASKER`, set in the task of a guest's call, lets a question
reach that guest. Answers never block the loop for long; a refusal is a
`ToolingError`, which the tooling passes on to the server as an error.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, Protocol

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import JsonObject

ElicitAction = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Question:
    """A server's form elicitation: its message and the JSON Schema of the answer's content; `asker`
    puts it to the guest whose call it came during (None: no guest can be asked)."""

    tooling: str
    caller: str | None
    message: str
    schema: JsonObject
    asker: Asker | None = None
    url: str | None = None
    """URL mode: the page the server asks a person to open (then `schema` is empty, and an
    accepting `Reply` carries no content); never put to a guest."""


@dataclass(frozen=True)
class Reply:
    """The answer to a `Question`: `content` (matching its schema) only with `accept`."""

    action: ElicitAction
    content: JsonObject | None = None


class Asker(Protocol):
    """Puts a question to the guest of a call (`elicitation = "guest"`) and waits for its answer."""

    async def ask(self, question: Question) -> Reply: ...


ASKER: ContextVar[Asker | None] = ContextVar("agent_host_asker", default=None)
"""The guest call the current task runs, as an `Asker` (set around an asynchronous call)."""


class ServerRequests(Protocol):
    """Answers a tooling's server requests (see the module docstring); coroutines run on the loop."""

    async def elicit(self, question: Question) -> Reply: ...

    async def sample(self, tooling: str, caller: str | None, request: JsonObject) -> JsonObject:
        """The `CreateMessageResult` (as JSON) for a sampling `request` (as JSON); raises `ToolingError`."""
        ...

    def roots(self, tooling: str) -> list[str]:
        """The `file://` URIs of the folders the server may work in."""
        ...

    def log(self, tooling: str, level: str, logger: str | None, data: object, caller: str | None = None) -> None:
        """A log message of the server (`notifications/message`), that came during a call of agent
        `caller` (None: outside any call, or while several were in flight)."""
        ...


class DeclineAll:
    """Declines every question and sampling request, offers no roots, ignores log messages."""

    async def elicit(self, question: Question) -> Reply:
        return Reply("decline")

    async def sample(self, tooling: str, caller: str | None, request: JsonObject) -> JsonObject:
        raise ToolingError(ErrorCode.DENIED, f"tooling {tooling!r}: this host answers no sampling requests")

    def roots(self, tooling: str) -> list[str]:
        return []

    def log(self, tooling: str, level: str, logger: str | None, data: object, caller: str | None = None) -> None:
        return None
