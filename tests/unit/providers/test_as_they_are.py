"""The parts of a request sent as they are (`extra_body`), past the SDK's per-item walk: the
conversation, the tools and the system prompt move; the rest stays; `messages` stays, empty."""

from __future__ import annotations

from agent_host.providers.base import as_they_are


def test_the_conversation_tools_and_system_prompt_move_to_the_body_as_they_are() -> None:
    params = {"model": "m", "messages": [{"role": "user"}], "tools": [{"name": "t"}], "system": "s", "max_tokens": 3}
    assert as_they_are(params) == {
        "model": "m",
        "max_tokens": 3,
        "messages": [],
        "extra_body": {"messages": [{"role": "user"}], "tools": [{"name": "t"}], "system": "s"},
    }
    assert as_they_are({"model": "m", "messages": []}) == {"model": "m", "messages": [], "extra_body": {"messages": []}}
