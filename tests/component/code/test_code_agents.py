"""Code agents (`[agents.NAME] code = "python"`): a snippet runs in a fresh sandbox with its granted
toolings as functions of the module `toolings`, and answers `{"result", "stdout"}`.

Through the Python API (`Host.agent_component`, `Host.run`), mock toolings in the host: what the
snippet sees (tools as functions, `ToolError`, `help`, `gather`, `search`, names as identifiers),
what it cannot reach (a tooling not granted, by `toolings` or by the WIT import itself), its
answer and failures (the snippet's own frames only), and the bounds it runs under (stdout, CPU,
memory, nothing kept between runs).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agent_host import Host
from agent_host._support import strict_json
from agent_host.errors import ConfigError
from agent_host.model import RunResult
from agent_host.policy.code_agents import ANSWER_MAX

pytestmark = [pytest.mark.component, pytest.mark.timeout(180)]

TOOLINGS = (
    """
[tooling.calc]
kind = "mock"
[[tooling.calc.tools]]
name = "add"
description = "Add two numbers.\\n\\nBoth are required."
input_schema = { type = "object", required = ["a", "b"], properties = { a = INT, b = INT } }
output_schema = { type = "object", properties = { sum = { type = "integer" } } }
results = [{ structured = { sum = 3 } }]
repeat_last = true
[[tooling.calc.tools]]
name = "shout"
results = [{ text = "HEY" }]
repeat_last = true
[[tooling.calc.tools]]
name = "broken"
results = [{ error = "it broke" }]
repeat_last = true
[[tooling.calc.tools]]
name = "slow-one"
results = [{ text = "slow", delay = 0.05 }]
repeat_last = true

[tooling.my-server]
kind = "mock"
[[tooling.my-server.tools]]
name = "ping"
results = [{ text = "pong" }]
repeat_last = true

[tooling.secret]
kind = "mock"
[[tooling.secret.tools]]
name = "leak"
results = [{ text = "the secret" }]
"""
).replace("INT", '{ type = "integer" }')

AGENT = '[agents.py]\ncode = "python"\ntoolings = ["calc", "my-server"]\n'


def run(host: Host, code: str, agent: str = "py") -> RunResult:
    return host.run(host.agent_component(agent), code, agent=agent)


def answer(outcome: RunResult) -> Any:
    assert outcome.status == "ok", outcome
    return json.loads(outcome.text)


@pytest.fixture
def host(make_host: Callable[[str], Host]) -> Host:
    return make_host(TOOLINGS + AGENT)


def test_a_tool_is_a_function_answering_its_structured_content_else_its_text(host: Host) -> None:
    code = "from toolings import calc\nprint('adding')\n[calc.add(a=1, b=2), calc.shout()]"
    assert answer(run(host, code)) == {"result": [{"sum": 3}, "HEY"], "stdout": "adding\n"}


def test_the_result_is_the_last_expression_as_json_else_its_repr_else_null(host: Host) -> None:
    assert answer(run(host, "x = {'a': [1, 2.5, None, True]}\nx"))["result"] == {"a": [1, 2.5, None, True]}
    assert answer(run(host, "class P:\n    def __repr__(self): return 'P!'\nP()"))["result"] == "P!"
    assert answer(run(host, "float('nan')"))["result"] == "nan"
    assert answer(run(host, "x = 1"))["result"] is None
    assert answer(run(host, ""))["result"] is None


def test_a_tool_failure_raises_tool_error_which_the_snippet_can_catch(host: Host) -> None:
    code = (
        "import toolings\n"
        "try:\n    toolings.calc.broken()\nexcept toolings.ToolError as e:\n    caught = (e.code, e.message)\n"
        "try:\n    toolings.calc.nope(x=1)\nexcept toolings.ToolError as e:\n    missing = (e.code, e.message)\n"
        "[caught, missing]"
    )
    caught, missing = answer(run(host, code))["result"]
    assert caught == ["tool-failed", "it broke"]
    assert missing[0] == "not-found"
    assert "calc has no tool 'nope'; its tools: add, broken, shout, slow_one" in missing[1]


def test_positional_arguments_are_refused_with_what_to_write(host: Host) -> None:
    outcome = run(host, "import toolings\ntoolings.calc.add(1, 2)")
    assert outcome.status == "error" and "takes keyword arguments only" in outcome.text


def test_a_tooling_not_granted_is_not_importable_and_the_error_names_the_granted_ones(host: Host) -> None:
    outcome = run(host, "from toolings import secret")
    assert outcome.status == "error"
    assert "tooling 'secret' is not granted to this agent; granted: calc, my_server" in outcome.text
    caught = run(host, "import toolings\ntry:\n    toolings.secret\nexcept ImportError as e:\n    said = str(e)\nsaid")
    assert "not granted" in answer(caught)["result"]


def test_the_host_refuses_an_ungranted_tooling_whatever_the_snippet_imports(host: Host) -> None:
    """The `toolings` module is a convenience, not the fence: the host's grants are."""
    code = (
        "from agentlib import tooling, ToolingError\n"
        "try:\n    tooling('secret').leak()\nexcept ToolingError as e:\n    code = e.code\ncode"
    )
    assert answer(run(host, code))["result"] == "denied"


def test_tooling_and_tool_names_become_identifiers(host: Host) -> None:
    code = (
        "import toolings\nfrom toolings import my_server\n"
        "[my_server.ping(), toolings.get('my-server').ping(), toolings.calc.slow_one()]"
    )
    assert answer(run(host, code))["result"] == ["pong", "pong", "slow"]


def test_help_shows_a_tools_signature_and_description(host: Host) -> None:
    shown = answer(run(host, "import toolings\nhelp(toolings.calc.add)\nhelp(toolings.calc)"))["stdout"]
    assert 'calc.add(*, a: int, b: int) -> {"sum": int}\n    Add two numbers.\n\nBoth are required.' in shown
    assert "calc.shout(**more: Any) -> str" in shown and "tooling calc:" in shown
    found = answer(run(host, "import toolings\ntoolings.search('numbers')"))["result"]
    assert found == ['calc.add(*, a: int, b: int) -> {"sum": int}\n    Add two numbers.']


def test_gather_runs_several_calls_at_once_and_answers_in_order(host: Host) -> None:
    code = (
        "from toolings import calc, gather, ToolError\n"
        "calls = [calc.slow_one.start(), calc.add.start(a=1, b=2), calc.shout.start()]\n"
        "done = gather(*calls)\n"
        "try:\n    gather(calc.shout.start(), calc.broken.start())\nexcept ToolError as e:\n    failed = e.code\n"
        "[done, failed]"
    )
    assert answer(run(host, code))["result"] == [["slow", {"sum": 3}, "HEY"], "tool-failed"]


def test_an_exception_is_a_failure_with_the_snippets_own_frames_only(host: Host) -> None:
    outcome = run(host, "from toolings import calc\ndef f():\n    calc.broken()\nf()")
    assert outcome.status == "error" and outcome.exit_code == 1
    lines = outcome.text.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert [line.strip() for line in lines if line.strip().startswith("File")] == [
        'File "<code>", line 4, in <module>',
        'File "<code>", line 3, in f',
    ]
    assert lines[-1] == "toolings.ToolError: tool-failed: it broke"
    assert "agentlib" not in outcome.text and "_agent_host" not in outcome.text


def test_a_syntax_error_names_the_snippets_line(host: Host) -> None:
    outcome = run(host, "x = 1\ny = (\n")
    assert outcome.status == "error"
    assert 'File "<code>", line 2' in outcome.text and "SyntaxError" in outcome.text.splitlines()[-1]


def test_stdout_is_bounded_by_the_guest_output_limit(make_host: Callable[[str], Host]) -> None:
    host = make_host("[host]\nguest_output_max = 1000\n" + TOOLINGS + AGENT)
    stdout = answer(run(host, "for _ in range(10000):\n    print('x' * 99)"))["stdout"]
    assert stdout.startswith("x" * 99 + "\n") and len(stdout) < 1200
    assert stdout.endswith("[stdout cut at 1000 bytes: 999000 bytes more were dropped]\n")


def test_nothing_is_kept_between_runs(host: Host) -> None:
    first = "import builtins, sys, toolings\nbuiltins.kept = 1\nsys.modules['kept'] = sys\ntoolings.kept = 1\nkept"
    assert answer(run(host, first))["result"] == 1
    second = "import toolings\nhasattr(toolings, 'x')"
    outcome = run(host, second)
    assert outcome.status == "error" and "'x' is not granted" in outcome.text  # a fresh module
    check = "import builtins, sys\n[hasattr(builtins, 'kept'), 'kept' in sys.modules]"
    assert answer(run(host, check))["result"] == [False, False]


def test_a_snippet_runs_under_the_agents_cpu_and_memory_limits(make_host: Callable[[str], Host]) -> None:
    host = make_host(TOOLINGS + '[agents.py]\ncode = "python"\ncpu_time = 0.5\nmemory = "64MiB"\n')
    spun = run(host, "while True:\n    pass")
    assert (spun.status, spun.tripped) == ("trap", "cpu_time"), spun
    grown = run(host, "x = bytearray(200 * 1024 * 1024)")
    assert (grown.status, grown.tripped) == ("trap", "memory"), grown


def test_the_agents_env_cannot_change_what_the_runner_is_told(make_host: Callable[[str], Host]) -> None:
    table = '[agents.py]\ncode = "python"\ntoolings = ["calc"]\nenv = { AGENT_HOST_CODE_TOOLINGS = \'["secret"]\' }\n'
    host = make_host(TOOLINGS + table)
    outcome = run(host, "from toolings import secret")
    assert outcome.status == "error" and "granted: calc" in outcome.text


def test_an_agent_has_a_component_or_code_not_both(make_host: Callable[[str], Host], tmp_path: Any) -> None:
    (tmp_path / "g.wasm").write_bytes(b"")
    with pytest.raises(ConfigError, match="a `component` or `code`, not both"):
        make_host('[agents.both]\ncode = "python"\ncomponent = "g.wasm"\n')
    with pytest.raises(ConfigError, match="code"):
        make_host('[agents.js]\ncode = "cobol"\n')


CLASHING = """
[tooling.my_server]
kind = "mock"
[[tooling.my_server.tools]]
name = "ping"
results = [{ text = "the other server" }]
repeat_last = true
[tooling.get]
kind = "mock"
[[tooling.get.tools]]
name = "ping"
results = [{ text = "named get" }]
repeat_last = true
[agents.clash]
code = "python"
toolings = ["my-server", "my_server", "get"]
"""


def test_no_attribute_reaches_another_tooling_than_the_one_it_names(make_host: Callable[[str], Host]) -> None:
    """`my-server` and `my_server` share an identifier: the attribute is `my_server`'s own, `my-server`
    is reached by its name; a tooling named like a function of `toolings` is reached by `get`."""
    host = make_host(TOOLINGS + CLASHING)
    code = "import toolings\n[toolings.my_server.ping(), toolings.get('my-server').ping(), toolings.get('get').ping()]"
    assert answer(run(host, code, agent="clash"))["result"] == ["the other server", "pong", "named get"]
    assert answer(run(host, "import toolings\ncallable(toolings.get)", agent="clash"))["result"] is True


def test_the_answer_is_strict_json_within_its_bound_whatever_the_result(host: Host) -> None:
    """Values the host would not parse (too deep, too many digits, lone surrogates) are given as their
    repr; print output is cut so that the answer stays within `ANSWER_MAX`."""
    for code, expected in (
        ("10 ** 1500", str(10**1500)),
        ("'\\ud800'", "'\\ud800'"),
        ("x = []\nfor _ in range(130):\n    x = [x]\nx", None),
    ):
        outcome = run(host, code)
        parsed = strict_json.parse(outcome.text)  # what serve parses into structured content
        assert isinstance(parsed, dict) and isinstance(parsed["result"], str), (code, outcome.text[:200])
        if expected is not None:
            assert parsed["result"] == expected
    printed = run(host, "print('y' * 1_100_000)")
    parsed = strict_json.parse(printed.text)
    assert (
        isinstance(parsed, dict)
        and len(printed.text) <= ANSWER_MAX
        and "[stdout cut: 1100001 characters printed" in parsed["stdout"]
    )


def test_the_snippet_cannot_change_how_the_runner_writes_the_answer_through_json(host: Host) -> None:
    code = "import json\njson.dumps = lambda *a, **k: 'NOT JSON'\n{'still': 'json'}"
    assert answer(run(host, code))["result"] == {"still": "json"}


def test_what_the_results_own_methods_raise_is_the_snippets_failure(host: Host) -> None:
    code = (
        "class Odd(dict):\n"
        "    calls = 0\n"
        "    def items(self):\n"
        "        Odd.calls += 1\n"
        "        if Odd.calls > 1:\n"
        "            raise RuntimeError('second look')\n"
        "        return super().items()\n"
        "Odd(a=1)"
    )
    outcome = run(host, code)
    assert outcome.status in ("ok", "error"), outcome
    assert "code mode failed" not in outcome.text and "_agent_host" not in outcome.text


def test_an_exception_group_shows_the_snippets_frames_only(host: Host) -> None:
    code = (
        "from toolings import calc\nerrors = []\n"
        "try:\n    calc.broken()\nexcept toolings.ToolError as e:\n    errors.append(e)\n"
        "raise ExceptionGroup('several', errors)"
    )
    outcome = run(host, code)
    assert outcome.status == "error" and "ExceptionGroup: several" in outcome.text
    assert "_agent_host" not in outcome.text and "agentlib" not in outcome.text
    assert 'File "<code>", line 4, in <module>' in outcome.text
