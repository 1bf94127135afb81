"""What a code agent's runner is told: its mode, and the envelope its snippet comes in.

A code agent (`[agents.NAME] code = "python" | "javascript"`) runs a prebuilt runner component. The
host sets `CODE_VARIABLE` (the language) in its WASI environment, after the agent's own `env` (a
table cannot change it; the Python runner reads it to know the input is a snippet), and gives its
`run` the envelope `runner_input` makes: the snippet, the names of the granted toolings (sorted: the
snippet's `toolings` offers exactly those) and the bytes of print output it keeps. The envelope
tells the snippet nothing it could not learn by calling `tooling.get`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Final, Literal

from agent_host._support.signatures import attributes

CodeLanguage = Literal["python", "javascript"]
"""The languages of code agents."""

CODE_VARIABLE: Final = "AGENT_HOST_CODE"
"""The language of the snippet the run's input holds."""


def code_environment(language: CodeLanguage) -> Mapping[str, str]:
    """The variable a code agent's runner gets (see the module docstring)."""
    return {CODE_VARIABLE: language}


ANSWER_MAX: Final = 1024 * 1024
"""Characters of a code agent's answer at most (its JSON, stdout cut first): what `serve` parses into
structured content (`serve.answers.MAX_STRUCTURED`), and more than a model's context holds."""


def runner_input(code: str, granted: Iterable[str], stdout_bytes: int, answer_chars: int) -> str:
    """The runner's input for snippet `code`: JSON `{"code", "toolings", "stdout", "answer"}`, where
    "toolings" maps each granted name to its attribute of the snippet's `toolings` (None: reached by
    `toolings.get(NAME)`; `_support.signatures.attributes`: the host decides it, both runners obey)."""
    envelope = {"code": code, "toolings": attributes(sorted(granted)), "stdout": stdout_bytes, "answer": answer_chars}
    return json.dumps(envelope, ensure_ascii=False)
