"""A guest's providers: its handles, chats and streams, under its grants and its model budget.

`get` checks the grant, then looks the provider up; `chat` and `chat_stream` check the model against
the grants and the provider's globs, count the request against the budget (which clamps
`max_tokens`) and charge the usage the provider reports. A chat is bounded by the provider's
`timeout` and the run's deadline, a stream by the provider (to its first piece, then between two).
A stream is an open call of the inbox: its pieces are joined while the guest has not taken them;
when they cannot join the stream waits for the guest (nothing dropped); exactly one `chat-end` or
`error` ends it. Cancelling, dropping the handle or the run's end closes the upstream stream. One
audit line per operation, a chat's with provider, model and tokens. Keys never reach this layer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import logging
import math
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Final

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatDelta, ChatRequest, ChatResult, Envelope, Operation, Usage
from agent_host.policy.grants import Limits
from agent_host.policy.provider_grants import ProviderGrants
from agent_host.providers import Provider, ProviderSet, resolve_model
from agent_host.providers.estimates import estimated
from agent_host.session.audit import AuditTrail, Span
from agent_host.session.bridge import Bridge, shutting_down
from agent_host.session.deadline import LoopCalls, internal_error
from agent_host.session.inbox import Inbox
from agent_host.session.llm_budget import LlmBudget, Ticket

logger = logging.getLogger(__name__)

REQUEST_GRACE: Final = 2.0
"""Seconds past a provider's `timeout` the host waits for its own answer (the SDK's timeout wins)."""

MAX_STREAMS: Final = 16
"""Streams one guest may have open at once (each keeps the host's loop reading a server's chunks)."""


def not_open(rep: int) -> ToolingError:
    return ToolingError(ErrorCode.NOT_FOUND, f"provider handle {rep} is not open (it was dropped)")


def request_text(request: ChatRequest) -> str:
    """The request as JSON text: what the audit log keeps with `audit_arguments` and what the
    argument size limit measures."""
    return json.dumps(asdict(request), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class _Stream:
    rep: int
    future: concurrent.futures.Future[None]


class GuestProviders:
    """One guest's provider handles and streams (see the module docstring). Used from the guest's
    thread, but `close` from any."""

    def __init__(
        self,
        agent: str,
        providers: ProviderSet,
        grants: ProviderGrants,
        budget: LlmBudget,
        limits: Limits,
        inbox: Inbox,
        bridge: Bridge,
        loop: LoopCalls,
        audit: AuditTrail,
    ) -> None:
        self.agent = agent
        self.grants = grants
        self.budget = budget
        self._providers = providers
        self._limits = limits
        self._inbox = inbox
        self._bridge = bridge
        self._loop = loop
        self._audit = audit
        self._handles: dict[int, Provider] = {}
        self._next_rep = 1
        self._streams: dict[str, _Stream] = {}

    # -- handles ---------------------------------------------------------------------------------

    def get(self, name: str) -> int:
        """A new handle on provider `name`: `denied` unless granted, `not-found` unless configured."""
        with self._audit.span(Operation.GET_PROVIDER, name[:200]):
            self._loop.check_open()
            self.grants.check_provider(name)
            provider = self._providers.get(name)
        rep = self._next_rep
        self._next_rep += 1
        self._handles[rep] = provider
        return rep

    def handle(self, rep: int) -> Provider:
        try:
            return self._handles[rep]
        except KeyError:
            raise not_open(rep) from None

    def kind(self, rep: int) -> str:
        return self.handle(rep).kind

    def name(self, rep: int) -> str:
        return self.handle(rep).name

    def drop(self, rep: int) -> None:
        """Forget a handle and cancel the streams opened through it."""
        if self._handles.pop(rep, None) is not None:
            self._cancel_where(lambda owner: owner != rep)

    def close(self) -> None:
        """The run ended: cancel every stream, upstream too."""
        self._cancel_where(lambda owner: False)
        self._handles.clear()

    # -- requests --------------------------------------------------------------------------------

    def models(self, rep: int) -> list[str]:
        """The provider's models that its globs and the agent's grants allow, in its order."""
        provider = self.handle(rep)
        with self._audit.span(Operation.MODELS, provider.name):
            listed = self._loop.run(
                f"provider {provider.name!r}: listing models",
                provider.models,
                timeout=provider.config.timeout + REQUEST_GRACE,
                hint=f"raise timeout in [provider.{provider.name}]",
            )
            return [model for model in listed if self.grants.model_allowed(provider.name, model)]

    def chat(self, rep: int, request: ChatRequest) -> ChatResult:
        """The model's whole answer (see the module docstring)."""
        provider = self.handle(rep)
        text = request_text(request)
        with self._audit.span(Operation.CHAT, provider.name, request.model, text) as span:
            model, ticket = self._admit(provider, request, text, span)
            usage = estimated(request, 0)  # charged whatever ends the chat, unless reported
            try:
                result = self._loop.run(
                    f"provider {provider.name!r}: the chat with model {model!r}",
                    _chat,
                    provider,
                    request,
                    model,
                    ticket.max_tokens,
                    timeout=provider.config.timeout + REQUEST_GRACE,
                    hint=f"raise timeout in [provider.{provider.name}]",
                )
                usage = result.usage
            finally:
                self._charged(span, usage, ticket)
            result = provider.hidden(result)  # before the audit line too: a server may answer its key as the model
            span.details["model"] = result.model
            return result

    def chat_stream(self, rep: int, request: ChatRequest) -> str:
        """Start a stream and return its id; its pieces and its end arrive in the inbox."""
        provider = self.handle(rep)
        text = request_text(request)
        with self._audit.span(Operation.CHAT_STREAM, provider.name, request.model, text) as span:
            model, ticket = self._admit(provider, request, text, span)
            if self._bridge.closed:
                raise shutting_down()
            if len(self._streams) >= MAX_STREAMS:
                self.budget.charge(Usage(), ticket)  # nothing was sent
                raise ToolingError(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"{len(self._streams)} streams are open (the most a guest may have at once is {MAX_STREAMS}); "
                    "receive their ends or cancel some first",
                )
            stream_id = str(uuid.uuid4())
            try:
                self._inbox.open_call(stream_id, len(text))
            except ToolingError:
                self.budget.charge(Usage(), ticket)
                raise
            try:
                future = self._bridge.start(self._stream, provider, request, model, ticket, stream_id)
            except ToolingError:
                self._inbox.cancel(stream_id)
                self.budget.charge(Usage(), ticket)
                raise
            self._streams[stream_id] = _Stream(rep, future)
            span.defer()  # the stream writes its line when it ends
        return stream_id

    def is_open(self, rep: int, stream_id: str) -> bool:
        self.handle(rep)
        return stream_id in self._streams and self._inbox.is_open(stream_id)

    def cancel(self, rep: int, stream_id: str) -> bool:
        """Cancel stream `stream_id`: the upstream stream is closed; nothing for it arrives after."""
        self.handle(rep)
        stream = self._streams.pop(stream_id, None)
        if stream is None:
            return False
        was_open = self._inbox.cancel(stream_id)
        stream.future.cancel()
        return was_open

    def received(self, envelope: Envelope | None) -> None:
        """The guest received `envelope`: forget the stream it ended, if it ended one."""
        if envelope is not None and envelope.kind in ("chat-end", "error"):
            self._streams.pop(envelope.id, None)

    # -- internals -------------------------------------------------------------------------------

    def check_model(self, name: str, request: ChatRequest) -> None:
        """Raise as a chat of `request` with provider `name` would for the model it asks (a replay's
        grant check: the provider is configured, never reached)."""
        self.grants.check_model(name, resolve_model(self._providers.config(name), request.model))

    def _admit(self, provider: Provider, request: ChatRequest, text: str, span: Span) -> tuple[str, Ticket]:
        """The model to ask and the budget's ticket (the `max_tokens` to send); raises before anything is sent."""
        self._loop.check_open()
        self._limits.check_argument_size(len(text.encode("utf-8", "surrogatepass")), "the chat request")
        if not request.messages:
            raise ToolingError(ErrorCode.INVALID_ARGUMENTS, "a chat request needs at least one message")
        if request.temperature is not None and not (math.isfinite(request.temperature) and request.temperature >= 0):
            raise ToolingError(
                ErrorCode.INVALID_ARGUMENTS, f"temperature {request.temperature!r} is not a finite number of 0 or more"
            )
        model = resolve_model(provider.config, request.model)
        span.target = model
        span.details.update(provider=provider.name, model=model)
        self.grants.check_model(provider.name, model)
        return model, self.budget.admit(request)

    def _charged(self, span: Span, usage: Usage, ticket: Ticket) -> None:
        """Charge `usage` (reported, or estimated for a request that ended without it) and release
        the output tokens `admit` reserved for it."""
        self.budget.charge(usage, ticket)
        span.details.update(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)

    async def _stream(
        self,
        provider: Provider,
        request: ChatRequest,
        model: str,
        ticket: Ticket,
        stream_id: str,
    ) -> None:
        """On the loop: the stream's pieces into the inbox, then exactly one final envelope. Its usage
        is charged however it ends (cancelled, failed: estimated from the request and what came)."""
        inbox = self._inbox
        sent = [0]
        final: ChatResult | ToolingError | None = None
        with self._audit.span(Operation.CHAT_STREAM, provider.name, model) as span:
            span.details.update(provider=provider.name, model=model)
            try:
                final = await self._pieces(provider, request, model, ticket.max_tokens, stream_id, sent)
            except ToolingError as exc:
                final = exc
            except Exception as exc:  # boundary: a host bug reaches the guest as an `internal` envelope
                logger.exception("internal error in a stream of provider %s (agent %s)", provider.name, self.agent)
                final = internal_error(f"the stream of provider {provider.name!r}", exc)
            finally:  # cancelled too: what was asked and what came is charged
                if isinstance(final, ChatResult):
                    span.details["model"] = final.model
                    self._charged(span, final.usage, ticket)
                else:
                    self._charged(span, estimated(request, sent[0]), ticket)
            if isinstance(final, ToolingError):
                span.fail(final)
        if isinstance(final, ChatResult):
            inbox.push_final(stream_id, "chat-end", final)
        elif final is not None:
            inbox.push_final(stream_id, "error", final)

    async def _pieces(
        self,
        provider: Provider,
        request: ChatRequest,
        model: str,
        max_tokens: int | None,
        stream_id: str,
        sent: list[int],
    ) -> ChatResult:
        """The stream's result, its pieces pushed meanwhile (`sent[0]`: the characters they held)."""
        pieces = provider.stream(request, model=model, max_tokens=max_tokens)
        try:
            async for item in pieces:
                if isinstance(item, ChatResult):
                    return provider.hidden(item)
                sent[0] += len(item.content or "") + (len(item.tool_call.arguments) if item.tool_call else 0)
                await self._push(stream_id, provider.hidden(item))
        finally:
            await pieces.aclose()  # closes the upstream stream at once, ended or cancelled
        raise ToolingError(
            ErrorCode.PROTOCOL, f"provider {provider.name!r}: the stream of model {model!r} ended without its result"
        )

    async def _push(self, stream_id: str, delta: ChatDelta) -> None:
        """Queue `delta`, waiting for the guest to take the piece before it when they cannot join."""
        loop = asyncio.get_running_loop()
        while True:
            taken = asyncio.Event()
            if self._inbox.push_delta(stream_id, delta, functools.partial(loop.call_soon_threadsafe, taken.set)):
                return
            await taken.wait()

    def _cancel_where(self, keep: Callable[[int], bool]) -> None:
        for stream_id, stream in list(self._streams.items()):
            if not keep(stream.rep):
                del self._streams[stream_id]
                self._inbox.cancel(stream_id)
                stream.future.cancel()


async def _chat(provider: Provider, request: ChatRequest, model: str, max_tokens: int | None) -> ChatResult:
    return await provider.chat(request, model=model, max_tokens=max_tokens)
