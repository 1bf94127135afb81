"""`config check` shows every problem of a file at once, in the project's own words.

A value problem in a table does not hide that table's cross-key problems, no problem speaks pydantic
(`literal['decline']`, `function-before[...]`), and `${VAR:-default}`, nested defaults too, is quoted
as written, not as what it expanded to.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_host.config import parse_config
from agent_host.errors import ConfigError

FILE = Path("/etc/agent/agent-host.toml")
SIZE = 'expected a size such as "256MiB" or a number of bytes'
SAMPLING = 'expected "decline", "module:function" or { provider = "NAME" }'
PROTOCOL = 'expected "auto" or "2025-11-25"'

PYDANTIC_WORDS = re.compile(
    r"literal\[|function-(before|after|wrap|plain)|constrained-|Input should|_error\b|_type\b|"
    r"AgentConfig|HostSettings|ServeSettings|StdioToolingConfig|HttpToolingConfig|Config\b|pydantic|"
    r"\[type=|For further information"
)


def problems(text: str, environ: dict[str, str] | None = None, *, hints: bool = False) -> list[str]:
    """The problems of `text`, without the file's name (and without their hints unless `hints`)."""
    with pytest.raises(ConfigError) as caught:
        parse_config(text, FILE, environ or {})
    return [(line if hints else line.split("\n")[0]).removeprefix(f"{FILE}: ") for line in caught.value.problems]


def test_value_problems_do_not_hide_the_cross_key_problems_of_their_table() -> None:
    found = problems(
        '[tooling.t]\ncommand = "x"\n'
        '[host]\nmemory = "lots"\ninbox_size = 1\nallow = ["zzz"]\n'
        '[agents.x]\nmemory = "big"\ntoolings = ["missing"]\ntools = { t = ["a"] }\n'
        '[serve]\nqueue = "x"\ntoolings = ["nope"]\nagents = ["ghost"]\n'
    )
    assert found == [
        f"host.memory: {SIZE}, got 'lots'",
        f"agents.x.memory: {SIZE}, got 'big'",
        "serve.queue: expected a whole number >= 0, got 'x'",
        "host.inbox_size: 1 is too small: 256 open calls (2 envelopes each) and 256 subscriptions (1 each) need 768",
        "host.allow[0]: 'zzz' matches no tooling",
        "agents.x: names tooling 'missing', which is not defined",
        "agents.x.tools.t: an allow-list for tooling 't', which the agent is not granted",
        "serve.toolings[0]: names tooling 'nope', which is not defined",
        "serve.agents[0]: names agent 'ghost', which is not defined",
    ]


def test_a_rule_is_not_checked_against_a_value_that_was_wrong() -> None:
    """`max_open_calls` is wrong: `inbox_size` is not judged against the default in its place."""
    found = problems('[host]\nmax_open_calls = "x"\ninbox_size = 3\n[agents.a]\ntoolings = 5\ntools = { t = ["a"] }\n')
    assert found == [
        "host.max_open_calls: expected a whole number >= 1, got 'x'",
        "agents.a.toolings: expected a list of strings, got an integer (5)",
    ]


def test_a_wrong_transport_is_not_judged_as_another_kind_of_table() -> None:
    assert problems('[tooling.d]\ntransport = "pigeon"\n[agents.a]\ntoolings = ["d"]\n') == [
        'tooling.d.transport: expected "stdio" or "http", got \'pigeon\''
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[tooling.a]\ncommand = "x"\nsampling = 3\n', f"tooling.a.sampling: {SAMPLING}, got 3"),
        ('[tooling.a]\ncommand = "x"\nsampling = "no such"\n', f"tooling.a.sampling: {SAMPLING}, got 'no such'"),
        ("[serve]\nqueue = -1\n", "serve.queue: expected a whole number >= 0, got -1"),
        ("[serve]\nqueue = 1.5\n", "serve.queue: expected a whole number >= 0, got 1.5"),
        ("[host]\nmemory = 1979-05-27\n", f"host.memory: {SIZE}, got 1979-05-27"),
        (
            "[tooling.a]\ncommand = 1979-05-27T07:32:00\n",
            "tooling.a.command: expected a string, got a date-time (1979-05-27T07:32:00)",
        ),
        ('[agents.a]\nrestartable = "yes"\n', "agents.a.restartable: expected true or false, got a string ('yes')"),
        ('[tooling.a]\ncommand = "x"\nprotocol = 2025\n', f"tooling.a.protocol: {PROTOCOL}, got 2025"),
    ],
)
def test_problems_speak_the_files_words_never_pydantics(text: str, expected: str) -> None:
    found = problems(text)
    assert found == [expected]
    assert not any(PYDANTIC_WORDS.search(line) for line in found), found


def test_a_default_is_quoted_as_written() -> None:
    found = problems('[tooling.b]\ncommand = "y"\ntimeout = "${UNSET:-abc}"\n')
    assert found == ["tooling.b.timeout: expected a number of seconds > 0, got '${UNSET:-abc}'"]


def test_a_nested_default_expands_and_is_quoted_as_written() -> None:
    secret = "s3cr3t-t0ken"
    config = parse_config(
        '[tooling.a]\ncommand = "${UNSET:-${CMD}}"\nargs = ["${UNSET:-${NONE:-plain}}"]\n', FILE, {"CMD": "npx"}
    )
    tooling = config.toolings["a"]
    assert (getattr(tooling, "command", None), getattr(tooling, "args", None)) == ("npx", ("plain",))
    found = problems('[tooling.c]\ncommand = "z"\ntimeout = "${UNSET:-${TOKEN}}"\n', {"TOKEN": secret})
    assert found == ["tooling.c.timeout: expected a number of seconds > 0, got '${UNSET:-${TOKEN}}'"]


@pytest.mark.parametrize("written", ["${VAR-default}", "${VAR:=x}", "${VAR", "${1X}", "${}"])
def test_a_reference_the_host_does_not_read_is_a_problem_not_literal_text(written: str) -> None:
    found = problems(f'[tooling.a]\ncommand = "{written}"\n', {"VAR": "v"}, hints=True)
    assert len(found) == 1 and found[0].startswith("tooling.a.command: "), found
    assert "${VAR}" in found[0] and "${VAR:-default}" in found[0] and "$$" in found[0], found
