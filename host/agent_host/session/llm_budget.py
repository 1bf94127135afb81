"""An agent's model budget for one run: requests, input tokens and output tokens (`LlmBudget`).

`admit` counts a request before anything is sent and answers the `max_tokens` to send: the
request's own, clamped to what the output budget has left and reserved until `charge` settles it,
so concurrent streams cannot pass the output budget together; a request made once any budget is
spent (or reserved) is `limit-exceeded`, naming the budget, what was used and the key that raises
it. `charge` adds the usage reported, or estimated for a request that ended without one. Thread-safe: chats are
charged on the guest's thread, streams on the host's loop. A served agent has one per call.
"""

from __future__ import annotations

import threading

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Usage
from agent_host.policy.provider_grants import LlmLimits


class LlmBudget:
    """What one run may still ask of models (see the module docstring)."""

    def __init__(self, limits: LlmLimits) -> None:
        self.limits = limits
        self.requests = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.reserved = 0
        """Output tokens admitted requests may still use (their clamped `max_tokens`)."""
        self._lock = threading.Lock()

    def admit(self, max_tokens: int | None) -> int | None:
        """Count one request; the `max_tokens` to send upstream (`max_tokens` clamped to the output
        budget left; None when neither bounds it). Raises `limit-exceeded` when a budget is spent."""
        limits = self.limits
        with self._lock:
            self._check("llm_requests", "requests", self.requests, limits.requests)
            self._check("llm_input_tokens", "input tokens", self.input_tokens, limits.input_tokens)
            spoken = self.output_tokens + self.reserved
            self._check("llm_output_tokens", "output tokens", spoken, limits.output_tokens)
            self.requests += 1
            if limits.output_tokens is None:
                return max_tokens
            left = limits.output_tokens - spoken
            clamped = left if max_tokens is None else min(max_tokens, left)
            self.reserved += clamped
            return clamped

    def charge(self, usage: Usage, reserved: int | None = None) -> None:
        """Add the tokens a request used and release what `admit` reserved for it (`reserved`, the
        `max_tokens` it answered; nothing is reserved without an output budget)."""
        with self._lock:
            output = max(usage.output_tokens, 0)
            if reserved is not None and self.limits.output_tokens is not None:
                self.reserved -= reserved
            self.input_tokens += max(usage.input_tokens, 0)
            self.output_tokens += output

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
