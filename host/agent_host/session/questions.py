"""Questions a server puts to the guest (`elicitation = "guest"`): at most one open per call.

`GuestQuestions.asker(call_id)` is set (`toolings.server_requests.ASKER`) in the task of each of the
guest's asynchronous calls. Its `ask` runs on the loop: it queues an `elicitation` envelope under the
call's id and waits for the guest's answer, at most `QUESTION_TIMEOUT` seconds (then it is
declined); a question of a call that ended is withdrawn. `reply` (on the guest's thread) checks an
answer first: `accept` needs a JSON object matching the requested schema (`invalid-arguments`
naming the path and rule, the question staying open); `answer` (on the loop) hands it over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import anyio

from agent_host._support import strict_json
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Asked, JsonObject
from agent_host.policy.validation import ArgumentValidator
from agent_host.session.inbox import Inbox
from agent_host.toolings.server_requests import ElicitAction, Question, Reply

QUESTION_TIMEOUT: Final = 120.0
"""Seconds a question waits for the guest's answer before it is declined."""

ACTIONS: Final[Mapping[str, ElicitAction]] = {"accept": "accept", "decline": "decline", "cancel": "cancel"}
"""The WIT `elicit-action` names, as the reply's action."""


@dataclass
class _Open:
    tooling: str
    schema: JsonObject
    answered: anyio.Event
    reply: Reply | None = None


class _CallAsker:
    def __init__(self, questions: GuestQuestions, call_id: str) -> None:
        self._questions = questions
        self._call_id = call_id

    async def ask(self, question: Question) -> Reply:
        return await self._questions.ask(self._call_id, question)


class GuestQuestions:
    """One guest's open questions (see the module docstring)."""

    def __init__(self, inbox: Inbox, validator: ArgumentValidator) -> None:
        self._inbox = inbox
        self._validator = validator
        self._open: dict[str, _Open] = {}

    def asker(self, call_id: str) -> _CallAsker:
        """What puts questions of call `call_id` to the guest."""
        return _CallAsker(self, call_id)

    async def ask(self, call_id: str, question: Question) -> Reply:
        """On the loop: the guest's answer to `question` of call `call_id` (decline when it does not
        answer in time, the call ended, or a question of the call is already open)."""
        if call_id in self._open:
            return Reply("decline")
        opened = _Open(question.tooling, dict(question.schema), anyio.Event())
        self._open[call_id] = opened
        try:
            if not self._inbox.push_question(call_id, Asked(question.message, dict(question.schema))):
                return Reply("decline")
            with anyio.move_on_after(QUESTION_TIMEOUT):
                await opened.answered.wait()
            return opened.reply if opened.reply is not None else Reply("decline")
        finally:
            self._open.pop(call_id, None)

    def reply(self, call_id: str, action: str, content: str | None) -> Reply:
        """On the guest's thread: the answer `action` with `content` (JSON text) to the open question
        of call `call_id`, checked. Raises `ToolingError`: `not-found` (no open question),
        `invalid-arguments` (content missing, not a JSON object, or not matching the schema)."""
        opened = self._open.get(call_id)
        if opened is None:
            raise ToolingError(
                ErrorCode.NOT_FOUND,
                f"call {call_id} has no open question (never asked, already answered, timed out, or the call ended)",
            )
        elicit = ACTIONS.get(action)
        if elicit is None:
            raise ToolingError(ErrorCode.INVALID_ARGUMENTS, f"unknown action {action!r}: use accept, decline or cancel")
        if elicit != "accept":
            return Reply(elicit)
        try:
            value = strict_json.parse(content) if content is not None else None
        except strict_json.JsonTextError as exc:
            raise ToolingError(ErrorCode.INVALID_ARGUMENTS, f"the answer's content is not valid JSON ({exc})") from None
        if not isinstance(value, dict):
            raise ToolingError(
                ErrorCode.INVALID_ARGUMENTS, "`accept` needs content: a JSON object matching the requested schema"
            )
        self._validator.check_answer(opened.tooling, opened.schema, value)
        return Reply("accept", value)

    async def answer(self, call_id: str, reply: Reply) -> None:
        """On the loop: give `reply` to the open question of call `call_id`; `not-found` when it has
        none any more (it timed out or the call ended meanwhile)."""
        opened = self._open.get(call_id)
        if opened is None or opened.reply is not None:
            raise ToolingError(ErrorCode.NOT_FOUND, f"call {call_id} has no open question any more")
        opened.reply = reply
        opened.answered.set()
