"""Token counts where a provider reports none: one token per `CHARS_PER_TOKEN` characters, rounded up.

Budgets count the usage a provider reports; a mock turn without `usage`, and a server that sends no
usage (some ignore `stream_options`), are counted by this estimate instead of as nothing.
"""

from __future__ import annotations

import json
from typing import Final

from agent_host.model import ChatRequest, Usage

CHARS_PER_TOKEN: Final = 4
"""Characters per token of the estimate (about right for English text and JSON)."""


def tokens(chars: int) -> int:
    """The tokens `chars` characters are estimated to be."""
    return -(-chars // CHARS_PER_TOKEN)


def request_chars(request: ChatRequest) -> int:
    """Characters of what `request` sends: its messages' text and tool calls, its tools' names,
    descriptions and schemas, its response schema."""
    chars = sum(
        len(m.content or "") + sum(len(c.name) + len(c.arguments) for c in m.tool_calls) for m in request.messages
    )
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description or "") + len(json.dumps(tool.input_schema))
    return chars + len(request.response_schema or "")


def estimated(request: ChatRequest, answer_chars: int) -> Usage:
    """The estimated usage of `request` answered with `answer_chars` characters."""
    return Usage(input_tokens=tokens(request_chars(request)), output_tokens=tokens(answer_chars))
