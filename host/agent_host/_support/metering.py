"""Metrics counted anywhere in the process, for `serve`'s `GET /metrics` (`serve.metrics` renders them).

Plain counters under a lock, no dependency (prometheus-client is loaded by `serve` alone: ~0.1 s to
import, which a `run` would pay for nothing): model tokens by agent, provider and kind, from each
chat's reported usage. Labels come from the configuration (agent and provider names), never from what
a client or guest wrote, so their number is bounded by the config.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_tokens: dict[tuple[str, str, str], int] = {}


def tokens(agent: str, provider: str, input_tokens: int, output_tokens: int) -> None:
    """Count one chat's usage."""
    with _lock:
        for kind, count in (("input", input_tokens), ("output", output_tokens)):
            if count:
                key = (agent, provider, kind)
                _tokens[key] = _tokens.get(key, 0) + count


def token_counts() -> dict[tuple[str, str, str], int]:
    """The tokens counted so far, by (agent, provider, kind)."""
    with _lock:
        return dict(_tokens)
