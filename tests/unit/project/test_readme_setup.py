"""The README's quick start installs what `make setup` installs.

Every `pip install -e '.[...]'` of the README names the extras the Makefile installs (`ray` among them),
so whoever follows the quick start does not skip the Ray tests.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def extras(text: str) -> list[set[str]]:
    """The extras of every `pip install ... -e '.[A,B]'` (or the Makefile's `$(PIP) -e '.[A,B]'`) in `text`."""
    return [set(found.split(",")) for found in re.findall(r"(?:pip install|\$\(PIP\))[^\n]*-e '\.\[([a-z,]+)\]'", text)]


def test_the_quick_starts_pip_alternative_installs_the_extras_make_setup_does() -> None:
    setup = (REPO / "Makefile").read_text().split("$(STAMP): pyproject.toml\n", 1)[1].split("\n\n", 1)[0]
    (make,) = extras(setup)  # the recipe of `make setup` (`make bench` adds the `bench` extra to it)
    readme = extras((REPO / "README.md").read_text())
    assert readme and all(found == make for found in readme), (make, readme)
