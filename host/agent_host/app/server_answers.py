"""`PolicyAnswers`: how this host answers its toolings' server requests (`toolings.server_requests`).

A question (form elicitation) is declined unless the policy (the tooling's `elicitation`, overridden
by `[agents.NAME] elicitation` during that agent's calls) says `ask`: to the host's approver when it
is an `Answerer` (an answer not matching the requested schema is declined; for a URL-mode question,
whether to open the URL), or `guest`: to the guest whose asynchronous call it came during (none, or
URL mode: declined). Sampling is refused unless the tooling names a provider (`sampling = { provider
= "NAME" }`: a chat charged to the budget of the run whose call it came during; none known: refused)
or a hook (`sampling = "module:function"`, imported once, sync or async). The roots offered are
the host folders of the `dirs` of every agent granted the tooling, as `file://` URIs (never the
working directory). Server log messages go to the host's log (logger `agent-host.server.TOOLING`).
Every request is audited under the agent it came for (`-` when unknown) with operation `server-*`.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import time
from collections.abc import Callable
from typing import Any, Final

from agent_host._support.printable import printable
from agent_host.config import Config, SamplingProvider
from agent_host.config.models import SERVE_CLIENT
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatResult, JsonObject
from agent_host.policy.approval import Answerer, Approver, ElicitationRequest
from agent_host.policy.validation import ArgumentValidator
from agent_host.providers import ProviderSet, resolve_model
from agent_host.providers.base import request_size
from agent_host.providers.estimates import estimated
from agent_host.session.audit_log import AuditLog
from agent_host.toolings.server_requests import Question, Reply, Sampling

logger = logging.getLogger(__name__)

LOG_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
"""The Python logging level of each MCP log level."""

UNKNOWN_AGENT: Final = "-"
"""The audit log's agent for a request that came outside any known call."""


class PolicyAnswers:
    """See the module docstring. Its coroutines run on the bridge loop."""

    def __init__(
        self,
        config: Config,
        approver: Approver,
        validator: ArgumentValidator,
        audit: AuditLog | None = None,
        providers: ProviderSet | None = None,
    ) -> None:
        """`providers` answer the sampling requests of toolings that name one (None: none configured)."""
        self._config = config
        self._providers = providers if providers is not None else ProviderSet({})
        self._approver = approver
        self._validator = validator
        self._audit = audit
        self._hooks: dict[str, Callable[..., Any]] = {}

    def mode(self, tooling: str, agent: str | None) -> str:
        """The elicitation policy for `tooling`'s questions during a call of `agent`: "decline" or "ask"."""
        settings = self._config.agents.get(agent) if agent is not None else None
        if settings is None and agent == SERVE_CLIENT:
            settings = self._config.serve.client_grants()
        if settings is not None and tooling in settings.elicitation:
            return settings.elicitation[tooling]
        return str(getattr(self._config.toolings[tooling], "elicitation", "decline"))

    async def elicit(self, question: Question) -> Reply:
        started = time.monotonic()
        reply = await self._elicit(question)
        self._record(question.caller, question.tooling, "server-elicitation", None, reply.action, started)
        return reply

    async def _elicit(self, question: Question) -> Reply:
        mode = self.mode(question.tooling, question.caller)
        if mode == "guest" and question.asker is not None and question.url is None:
            return await question.asker.ask(question)
        if mode != "ask" or not isinstance(self._approver, Answerer):
            return Reply("decline")
        request = ElicitationRequest(
            question.tooling, question.caller, question.message, dict(question.schema), question.url
        )
        content = await self._approver.answer(request)
        if content is None:
            return Reply("decline")
        if question.url is not None:
            return Reply("accept")
        try:
            self._validator.check_answer(question.tooling, dict(question.schema), content)
        except ToolingError as exc:
            logger.warning("tooling %s: the answer to its question was declined: %s", question.tooling, exc.message)
            return Reply("decline")
        return Reply("accept", content)

    async def sample(self, sampling: Sampling) -> JsonObject | ChatResult:
        started = time.monotonic()
        tooling, caller = sampling.tooling, sampling.caller
        spec = getattr(self._config.toolings[tooling], "sampling", "decline")
        if isinstance(spec, SamplingProvider):
            return await self._chat(spec, sampling, started)
        if spec == "decline":
            self._record(caller, tooling, "server-sampling", None, ErrorCode.DENIED.value, started)
            origin = self._config.toolings[tooling].origin
            raise ToolingError(
                ErrorCode.DENIED,
                f"agent-host declines sampling requests of tooling {tooling!r}: none is configured to answer them "
                f'(sampling = {{ provider = "NAME" }} or "module:function" in {origin})',
            )
        answer = self._hook(spec)(sampling.request)
        if inspect.isawaitable(answer):
            answer = await answer
        self._record(caller, tooling, "server-sampling", None, "ok", started)
        if not isinstance(answer, dict):
            raise ToolingError(
                ErrorCode.INTERNAL, f"the sampling hook {spec} returned {type(answer).__name__}, not a dict"
            )
        return answer

    async def _chat(self, spec: SamplingProvider, sampling: Sampling, started: float) -> ChatResult:
        """`sampling` answered by provider `spec.provider`, charged to the caller's model budget."""
        details: dict[str, str | int | None] = {"provider": spec.provider}
        outcome = "cancelled"
        try:
            if sampling.chat is None:
                raise ToolingError(ErrorCode.INVALID_ARGUMENTS, f"tooling {sampling.tooling!r}: {sampling.unfit}")
            if sampling.spender is None:
                raise ToolingError(
                    ErrorCode.DENIED,
                    f"tooling {sampling.tooling!r}: a sampling request the host cannot tie to one agent's call "
                    "(outside any call, or while several are in flight on a 2025-11-25 connection) is refused: "
                    "there is no run whose model budget it could be charged to",
                )
            size, bound = request_size(sampling.chat), self._config.host.max_argument_bytes
            if size > bound:
                raise ToolingError(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"tooling {sampling.tooling!r}: a sampling request of about {size} characters is more than "
                    f"max_argument_bytes ({bound}) in {self._config.host.origin}",
                )
            provider = self._providers.get(spec.provider)
            model = details["model"] = resolve_model(provider.config, spec.model)
            ticket = sampling.spender.admit(sampling.chat)
            usage = estimated(sampling.chat, 0)  # charged whatever ends the chat, unless reported
            try:
                result = await provider.chat(sampling.chat, model=model, max_tokens=ticket.max_tokens)
                usage = result.usage
            finally:
                sampling.spender.charge(usage, ticket)
                details.update(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
            outcome = "ok"
            return provider.hidden(result)
        except ToolingError as exc:
            outcome = exc.code.value
            raise
        except Exception as exc:  # boundary: a host bug is `internal` for the server, never raised into its SDK
            outcome = ErrorCode.INTERNAL.value
            logger.exception("internal error answering a sampling request of tooling %s", sampling.tooling)
            raise ToolingError(ErrorCode.INTERNAL, f"tooling {sampling.tooling!r}: the host failed: {exc}") from None
        finally:
            self._record(sampling.caller, sampling.tooling, "server-sampling", None, outcome, started, details)

    def _hook(self, spec: str) -> Callable[..., Any]:
        if spec not in self._hooks:
            module, _, name = spec.partition(":")
            self._hooks[spec] = getattr(importlib.import_module(module), name)
        return self._hooks[spec]

    def roots(self, tooling: str) -> list[str]:
        started = time.monotonic()
        folders = {
            grant.host.resolve().as_uri()
            for agent in self._config.agents.values()
            if tooling in agent.toolings
            for grant in agent.dirs
        }
        self._record(None, tooling, "server-roots", None, "ok", started)
        return sorted(folders)

    def log(self, tooling: str, level: str, logger_name: str | None, data: object, caller: str | None = None) -> None:
        logging.getLogger(f"agent-host.server.{tooling}").log(
            LOG_LEVELS.get(level, logging.INFO),
            "%s%s",
            printable(f"{logger_name}: ") if logger_name else "",
            printable(data if isinstance(data, str) else repr(data)),
        )
        self._record(caller, tooling, "server-log", logger_name, level, time.monotonic())

    def _record(
        self,
        agent: str | None,
        tooling: str,
        operation: str,
        target: str | None,
        outcome: str,
        started: float,
        details: dict[str, str | int | None] | None = None,
    ) -> None:
        if self._audit is not None:
            self._audit.record(
                agent=agent or UNKNOWN_AGENT,
                tooling=tooling,
                operation=operation,
                target=target,
                argument_bytes=0,
                outcome=outcome,
                duration=time.monotonic() - started,
                details=details,
            )
