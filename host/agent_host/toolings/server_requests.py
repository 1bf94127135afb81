"""What a tooling's server asks of the host (MCP server requests), as plain data and one protocol.

A server may ask a question (form elicitation), ask for model output (sampling), list the roots it
may work in, and send log messages. A tooling hands each to its `ServerRequests`, which answers by
policy (the host's is `app.server_answers.PolicyAnswers`); `DeclineAll` answers when none is
given. `caller` is the agent whose call the request came during, when the host can tell (None:
another request of the connection); `ASKER` and `SPENDER`, set in the task of a guest's call, let a
question reach that guest and charge a sampling request to its run's model budget. Answers never
block the loop for long; a refusal is a `ToolingError`, which the tooling passes on to the server.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatRequest, ChatResult, JsonObject, Usage

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


class Spender(Protocol):
    """The model budget of the run a request came during (`session.llm_budget.LlmBudget`)."""

    def admit(self, request: ChatRequest) -> Admitted:
        """Count `request` and hold its share; raises `limit-exceeded` (or `invalid-arguments`)."""
        ...

    def charge(self, usage: Usage, ticket: Any = None) -> None:
        """Add what a request used and release what its `admit` held (`ticket`)."""
        ...


class Admitted(Protocol):
    """What `Spender.admit` answers: the `max_tokens` to send."""

    @property
    def max_tokens(self) -> int | None: ...


SPENDER: ContextVar[Spender | None] = ContextVar("agent_host_spender", default=None)
"""The model budget of the call the current task runs (set around every tool call of a session)."""


@dataclass(frozen=True)
class Sampling:
    """A server's request for model output: as it was sent (`request`, MCP's `CreateMessageRequest`
    params as JSON, for a hook), as a chat a provider can answer (`chat`; None when it cannot be
    one, `unfit` saying why), and the budget of the call it came during (`spender`; None: unknown)."""

    tooling: str
    caller: str | None
    request: JsonObject
    chat: ChatRequest | None
    unfit: str | None = None
    spender: Spender | None = None


class ServerRequests(Protocol):
    """Answers a tooling's server requests (see the module docstring); coroutines run on the loop."""

    async def elicit(self, question: Question) -> Reply: ...

    async def sample(self, sampling: Sampling) -> JsonObject | ChatResult:
        """The answer to `sampling`: a `CreateMessageResult` as JSON (a hook's), or a provider's
        `ChatResult`; raises `ToolingError`."""
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

    async def sample(self, sampling: Sampling) -> JsonObject | ChatResult:
        raise ToolingError(ErrorCode.DENIED, f"tooling {sampling.tooling!r}: this host answers no sampling requests")

    def roots(self, tooling: str) -> list[str]:
        return []

    def log(self, tooling: str, level: str, logger: str | None, data: object, caller: str | None = None) -> None:
        return None
