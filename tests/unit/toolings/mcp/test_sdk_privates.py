"""No module of the package but `toolings/mcp/sdk_hooks.py` touches a private name of the MCP SDK.

A grep of the source (by its syntax tree): in a module that imports the SDK (`mcp`, `mcp_types`,
`httpx2`), no import of a private SDK module or name, no attribute `x._name` of an object that is not
`self` or `cls`, no `super()._name`, no class derived from an SDK class that defines or uses a private
name of that class (an override of a private method, or the SDK's private state), no `setattr` (a patch).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[4] / "host" / "agent_host"
SDK = ("mcp", "mcp_types", "httpx2")
THE_DOOR = PACKAGE / "toolings" / "mcp" / "sdk_hooks.py"
OWN_PRIVATES = {("toolings/mcp/tooling.py", "super()._changed")}
"""`x._name` uses of the package's own private names in modules that import the SDK."""


def _is_sdk(module: str) -> bool:
    return module.split(".")[0] in SDK


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _base_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _private_names_of(where: str) -> set[str]:
    """The private names of SDK class `module:name` and its SDK bases: class attributes and methods,
    and `self._x` attributes their source uses (instance state)."""
    module, _, name = where.partition(":")
    found: set[str] = set()
    for klass in inspect.getmro(getattr(importlib.import_module(module), name)):
        if not _is_sdk(klass.__module__):
            continue
        found |= {key for key in vars(klass) if _private(key)}
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):  # no source to read (a C type): its class attributes are enough
            continue
        found |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _private(n.attr)}
    return found


def touches(path: Path) -> list[str]:
    """What `path` does with private SDK names (empty when it does not import the SDK)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports_sdk = False
    sdk_names: dict[str, str] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_sdk(alias.name):
                    imports_sdk = True
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module is not None and _is_sdk(node.module):
            imports_sdk = True
            sdk_names |= {alias.asname or alias.name: f"{node.module}:{alias.name}" for alias in node.names}
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"line {node.lineno}: from {node.module} import ...")
            found += [f"line {node.lineno}: import {a.name} from {node.module}" for a in node.names if _private(a.name)]
    if not imports_sdk:
        return []
    where = str(path.relative_to(PACKAGE))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            shown = f"{ast.unparse(base)}.{node.attr}"
            if (where, shown) not in OWN_PRIVATES:
                found.append(f"line {node.lineno}: {shown}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            found.append(f"line {node.lineno}: setattr(...)")
        elif isinstance(node, ast.ClassDef) and (
            bases := [sdk_names[name] for base in node.bases if (name := _base_name(base)) in sdk_names]
        ):
            theirs = set().union(*(_private_names_of(base) for base in bases))
            for inner in ast.walk(node):
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef) and inner.name in theirs:
                    found.append(f"line {inner.lineno}: {node.name}.{inner.name} (a subclass of an SDK class)")
                elif isinstance(inner, ast.Attribute) and inner.attr in theirs:
                    found.append(f"line {inner.lineno}: {ast.unparse(inner)} (in a subclass of an SDK class)")
    return found


def test_only_the_sdk_hooks_module_touches_private_names_of_the_mcp_sdk() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != THE_DOOR and (lines := touches(path))
    }
    assert not found, f"private SDK names outside toolings/mcp/sdk_hooks.py: {found}"


def test_the_check_sees_each_kind_of_private_touch(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import mcp.client.stdio as s\nfrom mcp.shared._stream_protocols import ReadStream\n"
        "from mcp.client.stdio import _create_platform_compatible_process\n"
        "x = s._create_platform_compatible_process\nsetattr(s, 'validate_tool_result', None)\n"
        "from mcp.client.auth import OAuthClientProvider as B\n"
        "class A(B):\n    async def _initialize(self):\n"
        "        return super()._auth_flow(self._initialized, self._mine)\n",
        encoding="utf-8",
    )
    original = PACKAGE
    try:
        globals()["PACKAGE"] = tmp_path
        found = touches(sample)
    finally:
        globals()["PACKAGE"] = original
    assert len(found) == 8, found
