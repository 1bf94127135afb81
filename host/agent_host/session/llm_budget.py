"""An agent's model budget for one run: requests, input tokens and output tokens (`LlmBudget`).

`admit` counts a request before anything is sent and answers a `Ticket`: the `max_tokens` to send
(the request's own, clamped to what the output budget has left), and what it holds of each token
budget until `charge` settles it: the clamped `max_tokens`, and the request's input tokens as
estimated (`providers.estimates`, 4 characters a token), so that concurrent requests cannot pass
a budget together. A request is `limit-exceeded` once a budget is spent (or held), or when its own
estimate would pass the input budget, naming the budget, what was used and the key that raises
it; a `max_tokens` below 1 is `invalid-arguments`. `charge` adds the usage reported, or estimated
for a request that ended without one. Thread-safe: chats are charged on the guest's thread,
streams and sampling on the host's loop. A served agent has one per call.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatRequest, Usage
from agent_host.policy.provider_grants import LlmLimits
from agent_host.providers.estimates import estimated


@dataclass(frozen=True)
class Ticket:
    """An admitted request: the `max_tokens` to send (None: unbounded) and what it holds of the
    output and input budgets until it is charged."""

    max_tokens: int | None
    output_held: int = 0
    input_held: int = 0


class LlmBudget:
    """What one run may still ask of models (see the module docstring)."""

    def __init__(self, limits: LlmLimits) -> None:
        self.limits = limits
        self.requests = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.reserved = 0
        """Output tokens admitted requests may still use (their clamped `max_tokens`)."""
        self.input_reserved = 0
        """Input tokens admitted requests are estimated to use, until they are charged."""
        self._lock = threading.Lock()

    def admit(self, request: ChatRequest) -> Ticket:
        """Count `request` and hold its share of the budgets (see the module docstring). Raises
        `limit-exceeded` or `invalid-arguments` before anything is counted."""
        limits = self.limits
        if request.max_tokens is not None and request.max_tokens < 1:
            raise ToolingError(ErrorCode.INVALID_ARGUMENTS, f"max_tokens {request.max_tokens} is not 1 or more")
        estimate = estimated(request, 0).input_tokens if limits.input_tokens is not None else 0
        with self._lock:
            self._check("llm_requests", "requests", self.requests, limits.requests)
            held_input = self.input_tokens + self.input_reserved
            self._check("llm_input_tokens", "input tokens", held_input, limits.input_tokens)
            if limits.input_tokens is not None and held_input + estimate > limits.input_tokens:
                raise ToolingError(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"this request is estimated at {estimate} input tokens (4 characters a token), more than the "
                    f"{limits.input_tokens - held_input} left of this run's budget of {limits.input_tokens}; raise "
                    f"llm_input_tokens in {limits.where}, or send less",
                )
            spoken = self.output_tokens + self.reserved
            self._check("llm_output_tokens", "output tokens", spoken, limits.output_tokens)
            self.requests += 1
            self.input_reserved += estimate
            if limits.output_tokens is None:
                return Ticket(request.max_tokens, 0, estimate)
            left = limits.output_tokens - spoken
            clamped = left if request.max_tokens is None else min(request.max_tokens, left)
            self.reserved += clamped
            return Ticket(clamped, clamped, estimate)

    def charge(self, usage: Usage, ticket: Ticket | None = None) -> None:
        """Add the tokens a request used and release what `ticket` (its `admit`) held."""
        with self._lock:
            if ticket is not None:
                self.reserved -= ticket.output_held
                self.input_reserved -= ticket.input_held
            self.input_tokens += max(usage.input_tokens, 0)
            self.output_tokens += max(usage.output_tokens, 0)

    @property
    def used(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens)

    def _check(self, key: str, what: str, used: int, limit: int | None) -> None:
        if limit is not None and used >= limit:
            raise ToolingError(
                ErrorCode.LIMIT_EXCEEDED,
                f"this run's budget of {limit} {what} is spent ({used} used); raise {key} in "
                f"{self.limits.where} to allow more",
            )
