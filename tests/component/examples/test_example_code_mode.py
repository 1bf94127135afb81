"""The code-mode example (`examples/code-mode.toml`, docs/code-mode.md) as a user runs it: its
commands answer what the page shows, over the bundled demo server."""

from __future__ import annotations

import json

import pytest

from tests.support import in_process
from tests.support.component import REPO

pytestmark = [pytest.mark.component, pytest.mark.timeout(300)]

EXAMPLE = str(REPO / "examples" / "code-mode.toml")


def test_the_python_agent_answers_the_pages_examples() -> None:
    done = in_process.run(
        "run", "--config", EXAMPLE, "--agent", "python", "--input", "from toolings import demo\ndemo.add(a=2, b=3)"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"result": {"sum": 5.0}, "stdout": ""}
    piped = in_process.run("run", "--config", EXAMPLE, "--agent", "python", "--input", "-", stdin="6 * 7")
    assert json.loads(piped.stdout) == {"result": 42, "stdout": ""}


def test_the_pages_snippet_runs_as_written() -> None:
    snippet = (REPO / "docs" / "code-mode.md").read_text().split("## Inside a snippet (Python)\n\n```python\n")[1]
    snippet = snippet.split("```")[0]
    done = in_process.run("run", "--config", EXAMPLE, "--agent", "python", "--input", "import toolings\n" + snippet)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["result"] == {"total": 5.0}
    assert answer["stdout"].startswith('total 5.0\ntool-failed\ndemo.add(*, a: float, b: float) -> {"sum": float}')


@pytest.mark.npm
def test_the_javascript_agent_answers(toolchain: object) -> None:
    done = in_process.run(
        "run", "--config", EXAMPLE, "--agent", "javascript", "--input", "toolings.demo.add({ a: 2, b: 3 })"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"result": {"sum": 5}, "stdout": ""}


def test_the_pages_python_api_example() -> None:
    from agent_host import Host, load_config

    with Host(load_config(EXAMPLE)) as host:  # a str path, as the page writes it
        code = "from toolings import demo\ndemo.echo(text='hi')"
        outcome = host.run(host.agent_component("python"), code, agent="python")
    assert (outcome.status, outcome.text) == ("ok", '{"result": {"result": "hi"}, "stdout": ""}')
