"""The public API is listed once, in `agent_host/__init__.pyi`: `__all__` is its names, sorted;
every name resolves to the object its module defines, as type checkers see it; the Python API page
names each of them and no other; the README imports only public names from `agent_host`; names of
earlier releases still resolve with a warning; and importing the package (or its light names) loads
neither wasmtime nor the MCP SDK.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agent_host

REPO = Path(__file__).resolve().parents[3]
STUB = Path(agent_host.__file__).with_suffix(".pyi")

LIGHT = ["AgentHostError", "ExitCode", "ToolingError", "Config", "load_config", "tool", "ToolContext", "BaseTool"]
"""Public names whose modules need neither wasmtime nor the MCP SDK (errors, config, the tool API)."""


def stub_imports() -> dict[str, str]:
    """Name -> module of the stub's imports, read with `ast` (the package reads them without it)."""
    found: dict[str, str] = {}
    for statement in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                assert alias.asname == alias.name, f"{alias.name}: re-export with `X as X`"
                assert alias.name not in found, f"{alias.name} is listed twice"
                found[alias.name] = str(statement.module)
    return found


def test_the_public_api_is_the_stubs_names_in_sorted_order() -> None:
    names = stub_imports()
    assert list(agent_host.__all__) == sorted(names)
    assert len(names) > 40 and "Host" in names and "ToolingClient" in names and "RunResult" in names


def test_every_public_name_is_the_object_its_module_defines_and_is_listed_by_dir() -> None:
    """The re-export is the same object, so `isinstance` and `except` work with either spelling."""
    for name, module in stub_imports().items():
        assert getattr(agent_host, name) is getattr(importlib.import_module(module), name), name
    assert set(agent_host.__all__) <= set(dir(agent_host))
    namespace: dict[str, object] = {}
    exec("from agent_host import *", namespace)
    assert set(agent_host.__all__) <= set(namespace)


def test_the_python_api_page_names_every_public_name_and_no_other() -> None:
    """The table of docs/embedding/python-api.md headed `| name | what |`: each row's first cell
    lists names in backticks."""
    page = (REPO / "docs" / "embedding" / "python-api.md").read_text(encoding="utf-8")
    rows = page.split("\n| name | what |\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    table = [row.split("|")[1] for row in rows]
    documented = {name for cell in table for name in re.findall(r"`(\w+)`", cell)}
    assert documented == set(agent_host.__all__) - {"__version__"}


@pytest.mark.parametrize(
    ("old", "new"), [("Outcome", "RunResult"), ("GuestResult", "RunResult"), ("GuestError", "RunError")]
)
def test_a_name_of_an_earlier_release_still_resolves_with_a_warning_naming_the_new_one(old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"renamed {new}"):
        assert getattr(agent_host, old) is getattr(agent_host, new)
    assert old not in agent_host.__all__


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    with pytest.raises(AttributeError, match=r"^module 'agent_host' has no attribute 'runtime_internals'$"):
        agent_host.runtime_internals  # type: ignore[attr-defined]  # noqa: B018


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
    assert ("agent_host", "tool") in found and ("agent_host", "RunResult") in found, found
    for module, name in found:
        assert module == "agent_host", f"the README imports {name} from {module}: import it from agent_host"
        assert name in agent_host.__all__, f"the README imports {name!r} from agent_host, which does not export it"


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


def test_every_host_error_is_defined_in_the_errors_module_exported_and_a_run_status() -> None:
    """The exception tree is drawn in one module; a run a `HostError` keeps from starting has its
    reference as status, so every reference is a `RunStatus` member."""
    from agent_host import errors
    from agent_host.model import RunStatus

    def subclasses(cls: type[errors.AgentHostError]) -> list[type[errors.AgentHostError]]:
        found: list[type[errors.AgentHostError]] = []
        for direct in cls.__subclasses__():
            found += [direct, *subclasses(direct)]
        return found

    importlib.import_module("agent_host.app.host")  # the modules raising each error, imported
    importlib.import_module("agent_host.serve.uvicorn_hooks")

    tree = subclasses(errors.AgentHostError)
    assert {cls.__module__ for cls in tree} == {"agent_host.errors"}
    assert {cls.__name__ for cls in tree} <= set(agent_host.__all__)
    references = {getattr(cls, "reference") for cls in [errors.HostError, *subclasses(errors.HostError)]}  # noqa: B009
    assert references <= {status.value for status in RunStatus}, references - {s.value for s in RunStatus}
