"""Every MCP stdio client the tests (and the README) start passes its environment.

Without `env`, the SDK's stdio client starts its server with a minimal environment (HOME, PATH, ...),
dropping AGENT_HOST_CACHE (guests would be built into the home cache), AGENT_HOST_CONFIG and the
config's `${VAR}`s.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]


def calls_without_env(path: Path) -> list[int]:
    """The lines of `StdioServerParameters(...)` calls in `path` that give no `env`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "StdioServerParameters"
        and not any(keyword.arg == "env" for keyword in node.keywords)
    ]


def test_every_stdio_client_of_the_component_tests_passes_its_environment() -> None:
    found = {
        str(path.relative_to(REPO)): lines
        for path in sorted((REPO / "tests" / "component").rglob("*.py"))
        if (lines := calls_without_env(path))
    }
    assert not found, f"StdioServerParameters without env= (the child loses AGENT_HOST_CACHE): {found}"


def test_the_serving_pages_stdio_client_example_passes_its_environment() -> None:
    page = (REPO / "docs" / "serving.md").read_text(encoding="utf-8")
    examples = re.findall(r"StdioServerParameters\([^)]*\)", page)
    assert examples and all("env=" in example for example in examples), examples
