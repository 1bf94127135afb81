"""The fixtures of agentlib's tests: the generated bindings (once per module), stubbed on
`sys.modules` for each test (`tests.support.guestlib_fakes`), and agentlib imported over them."""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agent_host._support.paths import guest_lib_dir
from agent_host.components.bindings import write_bindings
from tests.support.guestlib_fakes import World, stub_bindings


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """componentize-py's bindings of the world `agent` (only `wit_world.imports.types` and
    `componentize_py_types` are used as they are)."""
    folder = write_bindings(tmp_path_factory.mktemp("agentlib") / "typings")
    shutil.rmtree(folder / "agentlib")  # the copy `agent-host bindings` adds: the source is tested
    return folder


@pytest.fixture
def world(generated: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """The stubbed bindings on `sys.modules`, and agentlib's source folder on `sys.path`."""
    with stub_bindings(generated, monkeypatch) as stubbed:
        yield stubbed


@pytest.fixture
def agentlib(world: World) -> ModuleType:
    """agentlib as a guest imports it, from guests/lib, over the stubbed bindings."""
    module = importlib.import_module("agentlib")
    assert str(module.__file__).startswith(str(guest_lib_dir()))
    return module
