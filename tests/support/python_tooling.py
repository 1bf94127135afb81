"""A `kind = "python"` tooling for configs of the component tests: `PYTHON_TOML` is tooling `py`,
offering `die` and `word_count` of tests/support/pytools.py (imported from the repository)."""

from __future__ import annotations

from typing import Final

from tests.support.component import REPO

PYTHON_TOML: Final = (
    f'[tooling.py]\nkind = "python"\npath = ["{REPO}"]\n'
    'tools = ["tests.support.pytools:die", "tests.support.pytools:word_count"]\n'
)
"""Tooling `py`: `die` (kills its process, or, given `marker`, only the first time) and `word_count`."""
