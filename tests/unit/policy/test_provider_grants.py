"""Provider grants: a provider's name grants all its models, `NAME:GLOB` some; deny by default.

Refusals say where the grants come from and how to widen them; a model with a dot segment matches
no glob (as every glob of the policy).
"""

from __future__ import annotations

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.policy.provider_grants import ProviderGrants

GRANTS = ProviderGrants.parse("scout", ["llm", "other:gpt-4.1-*", "other:o3", "llm:ignored-*"], "providers in X")


def test_a_name_grants_every_model_and_a_glob_some() -> None:
    GRANTS.check_model("llm", "anything")
    GRANTS.check_model("other", "gpt-4.1-mini")
    GRANTS.check_model("other", "o3")
    assert not GRANTS.model_allowed("other", "gpt-4o")


@pytest.mark.parametrize(
    ("provider", "model", "words"),
    [("nope", "m", "not granted provider 'nope'"), ("other", "gpt-4o", "other:gpt-4.1-*, other:o3")],
)
def test_what_is_not_granted_is_denied_naming_the_grants(provider: str, model: str, words: str) -> None:
    with pytest.raises(ToolingError) as caught:
        GRANTS.check_model(provider, model)
    assert caught.value.code is ErrorCode.DENIED
    assert words in caught.value.message and "providers in X" in caught.value.message


def test_nothing_is_granted_by_default() -> None:
    with pytest.raises(ToolingError):
        ProviderGrants("scout").check_provider("llm")


def test_a_model_with_a_dot_segment_matches_no_glob() -> None:
    assert not ProviderGrants.parse("a", ["p:*"], "x").model_allowed("p", "../etc")
