"""A guest is built from what its build key covers, and a build and a dev run accept the same imports.

componentize-py adds the host's site-packages to the guest's module path, which the build key does
not cover (editing such a package would leave the old code in the build): a build refuses a
pure-Python package installed in the host's environment as dev mode does, naming the module and how
to vendor it; a package copied into the guest folder works in both and is in the key.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

import pytest

from agent_host.components.build import build_guest, build_key
from agent_host.errors import BuildError
from tests.support import cli_process
from tests.support.component import REPO

pytestmark = pytest.mark.component

HOST_ONLY: Final = "tomli_w"
"""A pure-Python package installed in the host's environment (a dependency of agent-host), not in a guest's."""

GUEST: Final = f"""\
import {HOST_ONLY}
import wit_world


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        return {HOST_ONLY}.__name__ + " " + getattr({HOST_ONLY}, "MARK", "")
"""


@pytest.mark.timeout(120)  # a build refused by componentize-py, then `run --dev`: 12 s alone, 47 s under load
def test_a_host_package_is_refused_by_a_build_and_by_a_dev_run_with_the_same_hint(tmp_path: Path) -> None:
    guest = tmp_path / "needs-host-package"
    guest.mkdir()
    (guest / "app.py").write_text(GUEST)
    with pytest.raises(BuildError) as raised:
        build_guest(guest)
    built = f"{raised.value.message}\n{raised.value.hint}"
    assert f"No module named '{HOST_ONLY}'" in built
    fix = f"pip install --no-deps --target {guest} {HOST_ONLY.partition('.')[0]}"
    assert "never the host's packages" in built and fix in built
    dev = cli_process.run("run", "--dev", str(guest), "--input", "x", cwd=REPO)
    assert dev.returncode == 1, dev.stderr
    assert f"No module named '{HOST_ONLY}'" in dev.stderr
    assert "never the host's packages" in dev.stderr and fix in dev.stderr


def test_a_vendored_package_is_in_the_key_and_works_built_and_in_dev_mode(tmp_path: Path) -> None:
    guest = tmp_path / "vendors"
    guest.mkdir()
    (guest / "app.py").write_text(GUEST)
    import tomli_w

    shutil.copytree(Path(tomli_w.__file__).parent, guest / HOST_ONLY, ignore=shutil.ignore_patterns("__pycache__"))
    before = build_key(guest, "app")
    with (guest / HOST_ONLY / "__init__.py").open("a") as init:
        init.write('\nMARK = "edited"\n')
    assert build_key(guest, "app") != before
    for how in (["run"], ["run", "--dev"]):
        done = cli_process.run(*how, str(guest), "--input", "x", cwd=REPO)
        assert (done.returncode, done.stdout.strip()) == (0, f"{HOST_ONLY} edited"), done.stderr


def test_a_module_compiled_without_its_source_is_in_the_key(tmp_path: Path) -> None:
    """Python imports `NAME.pyc` outside `__pycache__` without a source: the build takes it, so its key does."""
    guest = tmp_path / "sourceless"
    guest.mkdir()
    (guest / "app.py").write_text("import helper\n")
    (guest / "helper.pyc").write_bytes(b"one")
    before = build_key(guest, "app")
    (guest / "helper.pyc").write_bytes(b"two")
    assert build_key(guest, "app") != before
