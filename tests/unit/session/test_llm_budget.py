"""A run's model budget: requests counted before sending, `max_tokens` clamped to the output tokens
left and reserved until charged (concurrent streams cannot pass the budget together), the usage
charged after; a spent budget refuses naming its key and where it is set."""

from __future__ import annotations

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Usage
from agent_host.policy.provider_grants import LlmLimits
from agent_host.session.llm_budget import LlmBudget


def test_max_tokens_is_clamped_to_what_the_output_budget_has_left_and_reserved_until_charged() -> None:
    budget = LlmBudget(LlmLimits(output_tokens=100))
    assert budget.admit(None) == 100
    budget.charge(Usage(10, 70), reserved=100)
    assert budget.admit(500) == 30
    with pytest.raises(ToolingError) as caught:  # the 30 left are reserved by the request in flight
        budget.admit(20)
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    budget.charge(Usage(0, 10), reserved=30)
    assert budget.admit(20) == 20
    assert LlmBudget(LlmLimits()).admit(None) is None


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
    budget.admit(None)
    budget.charge(usage)
    with pytest.raises(ToolingError) as caught:
        budget.admit(None)
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    assert key in caught.value.message and "[agents.a]" in caught.value.message
    assert budget.requests == 1  # a refused request is not counted
