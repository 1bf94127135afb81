"""The public API is pinned: `agent_host.__all__` is exactly the list below, every name in it resolves,
type checkers see the same names as the lazy loader, the README imports only from `agent_host`, and
importing the package (or its light names) loads neither wasmtime nor the MCP SDK.

Adding or removing a name is an API decision: change `PUBLIC` with it.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agent_host

REPO = Path(__file__).resolve().parents[3]

PUBLIC = [
    "AgentConfig",
    "AgentHost",
    "AgentHostError",
    "AgentPolicy",
    "ApprovalRequest",
    "ApproveAll",
    "Approver",
    "BaseTool",
    "BuildError",
    "CallbackApprover",
    "ComponentError",
    "Config",
    "ConfigError",
    "Decision",
    "DenyAll",
    "ElicitationRequest",
    "ErrorCode",
    "ExitCode",
    "FunctionTool",
    "GuestError",
    "GuestResult",
    "GuestSession",
    "GuestThread",
    "Host",
    "HostError",
    "Interrupted",
    "Outcome",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolingConfig",
    "ToolingError",
    "UsageError",
    "__version__",
    "default_config",
    "load_config",
    "parse_config",
    "resolve_component",
    "tool",
]
"""The public API, sorted (as `sorted` orders names: capitals, then `_`, then lower case)."""

LIGHT = ["AgentHostError", "ExitCode", "ToolingError", "Config", "load_config", "tool", "ToolContext", "BaseTool"]
"""Public names whose modules need neither wasmtime nor the MCP SDK (errors, config, the tool API)."""


def test_the_public_api_is_exactly_these_names_in_sorted_order() -> None:
    assert sorted(PUBLIC) == PUBLIC
    assert list(agent_host.__all__) == PUBLIC


def test_every_public_name_resolves_and_is_listed_by_dir() -> None:
    for name in PUBLIC:
        assert getattr(agent_host, name) is not None, name
    assert set(PUBLIC) <= set(dir(agent_host))
    namespace: dict[str, object] = {}
    exec("from agent_host import *", namespace)
    assert set(PUBLIC) <= set(namespace)


def test_a_public_name_is_the_object_its_module_defines() -> None:
    """The re-export is the same object, so `isinstance` and `except` work with either spelling."""
    from agent_host.errors import ToolingError
    from agent_host.testing import GuestResult
    from agent_host.tools import tool

    assert agent_host.tool is tool and agent_host.GuestResult is GuestResult and agent_host.ToolingError is ToolingError


def test_type_checkers_see_the_names_the_lazy_loader_serves() -> None:
    """The `TYPE_CHECKING` imports of `__init__` name each public name, from the module it is served from."""
    source = Path(agent_host.__file__).read_text(encoding="utf-8")
    checked: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module != "typing":
                    for alias in statement.names:
                        assert alias.asname == alias.name, f"{alias.name}: re-export with `X as X`"
                        checked[alias.name] = str(statement.module)
    served = dict(agent_host._EXPORTS)
    assert checked == served
    assert {*served, "__version__"} == set(PUBLIC)


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    with pytest.raises(AttributeError, match=r"^module 'agent_host' has no attribute 'runtime_internals'$"):
        agent_host.runtime_internals  # noqa: B018


IMPORT = re.compile(r"from[ \t]+(agent_host[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n`#]*)")
"""`from agent_host... import NAMES` in a code block or in inline code: the module and the names."""


def readme_imports() -> list[tuple[str, str]]:
    """(module, name) of every name the README and the documentation pages import from the package
    (`X as Y`: X)."""
    found = []
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    for module, names in IMPORT.findall("\n".join(page.read_text(encoding="utf-8") for page in pages)):
        for part in names.strip("()").split(","):
            name = part.split("#")[0].split(" as ")[0].strip()
            if name:
                found.append((module, name))
    return found


def test_the_readme_imports_only_public_names_from_the_package_itself() -> None:
    """Every `from agent_host... import ...` of the README (code blocks and inline code) imports from
    `agent_host`, never from a submodule, and only names it exports."""
    found = readme_imports()
    assert ("agent_host", "tool") in found and ("agent_host", "GuestResult") in found, found
    for module, name in found:
        assert module == "agent_host", f"the README imports {name} from {module}: import it from agent_host"
        assert name in PUBLIC, f"the README imports {name!r} from agent_host, which does not export it"


@pytest.mark.real_processes  # its subject: a process of its own
def test_importing_the_package_and_its_light_names_loads_neither_wasmtime_nor_the_mcp_sdk() -> None:
    code = (
        "import sys, agent_host\n"
        f"for name in {LIGHT!r}: getattr(agent_host, name)\n"
        "dir(agent_host)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'wasmtime', 'mcp'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
