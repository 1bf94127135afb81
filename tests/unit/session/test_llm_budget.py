"""A run's model budget: requests counted before sending, `max_tokens` clamped to the output tokens
left and held until charged, the request's estimated input tokens held too (concurrent requests
cannot pass a budget together), the usage charged after; a spent budget, or a request whose own
estimate would pass the input budget, refuses naming its key and where it is set; a `max_tokens`
below 1 is refused before anything is counted."""

from __future__ import annotations

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatMessage, ChatRequest, Usage
from agent_host.policy.provider_grants import LlmLimits
from agent_host.session.llm_budget import LlmBudget


def ask(max_tokens: int | None = None, text: str = "hi") -> ChatRequest:
    return ChatRequest(messages=(ChatMessage("user", text),), max_tokens=max_tokens)


def test_max_tokens_is_clamped_to_what_the_output_budget_has_left_and_held_until_charged() -> None:
    budget = LlmBudget(LlmLimits(output_tokens=100))
    first = budget.admit(ask())
    assert first.max_tokens == 100
    budget.charge(Usage(10, 70), first)
    second = budget.admit(ask(500))
    assert second.max_tokens == 30
    with pytest.raises(ToolingError) as caught:  # the 30 left are held by the request in flight
        budget.admit(ask(20))
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    budget.charge(Usage(0, 10), second)
    assert budget.admit(ask(20)).max_tokens == 20
    assert LlmBudget(LlmLimits()).admit(ask()).max_tokens is None


def test_the_input_budget_holds_each_requests_estimate_until_it_is_charged() -> None:
    budget = LlmBudget(LlmLimits(input_tokens=100, where="[agents.a]"))
    held = budget.admit(ask(text="x" * 240))  # ~60 tokens at 4 characters a token
    with pytest.raises(ToolingError) as caught:  # 60 more would pass the 40 left while the first is held
        budget.admit(ask(text="y" * 240))
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    assert "estimated at 60 input tokens" in caught.value.message and "llm_input_tokens in [agents.a]" in (
        caught.value.message
    )
    budget.charge(Usage(20, 0), held)  # the server reported fewer: the rest is free again
    budget.admit(ask(text="y" * 240))
    assert budget.requests == 2


@pytest.mark.parametrize("max_tokens", [0, -(10**12)])
def test_a_max_tokens_below_one_is_refused_before_anything_is_held(max_tokens: int) -> None:
    budget = LlmBudget(LlmLimits(output_tokens=100))
    with pytest.raises(ToolingError) as caught:
        budget.admit(ask(max_tokens))
    assert caught.value.code is ErrorCode.INVALID_ARGUMENTS
    assert (budget.requests, budget.reserved) == (0, 0)


@pytest.mark.parametrize(
    ("limits", "usage", "key"),
    [
        (LlmLimits(requests=1, where="[agents.a]"), Usage(), "llm_requests"),
        (LlmLimits(input_tokens=10, where="[agents.a]"), Usage(10, 0), "llm_input_tokens"),
        (LlmLimits(output_tokens=5, where="[agents.a]"), Usage(0, 5), "llm_output_tokens"),
    ],
)
def test_a_spent_budget_refuses_naming_its_key(limits: LlmLimits, usage: Usage, key: str) -> None:
    budget = LlmBudget(limits)
    budget.charge(usage, budget.admit(ask()))
    with pytest.raises(ToolingError) as caught:
        budget.admit(ask())
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    assert key in caught.value.message and "[agents.a]" in caught.value.message
    assert budget.requests == 1  # a refused request is not counted
