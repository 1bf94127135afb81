"""What a checkout leaves and shows: generated folders ignored by git, docs commands that print no banner.

`agent-host bindings` writes its stubs into `./typings` (Python) or `./typings-ts` (TypeScript) at
the top of the repository: both are in `.gitignore`. Every `mkdocs build` or `mkdocs serve` the
README and the docs show sets `NO_MKDOCS_2_WARNING=1`, as the Makefile does, so that Material's
notice about MkDocs 2.0 is not what a newcomer reads first.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent_host.components import bindings, ts_bindings

REPO = Path(__file__).resolve().parents[3]
MKDOCS_COMMAND = re.compile(r"(\S*\s*)(?:\S*bin/mkdocs|^mkdocs) (?:build|serve)", re.M)
"""A command running mkdocs (`.venv/bin/mkdocs build`, `$(BIN)/mkdocs serve`, a line `mkdocs build`),
with the word before it; prose naming the step (`and mkdocs build --strict`) is no command."""


def test_the_default_folders_of_agent_host_bindings_are_ignored_by_git() -> None:
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    for folder in (bindings.DEFAULT_FOLDER, ts_bindings.DEFAULT_FOLDER):
        assert f"/{folder}/" in ignored, folder


def test_every_mkdocs_command_shown_silences_materials_notice() -> None:
    texts = {"README.md": (REPO / "README.md").read_text(encoding="utf-8")}
    texts["Makefile"] = (REPO / "Makefile").read_text(encoding="utf-8")
    texts.update(
        {str(page.relative_to(REPO)): page.read_text(encoding="utf-8") for page in (REPO / "docs").rglob("*.md")}
    )
    commands = [(name, found) for name, text in texts.items() for found in MKDOCS_COMMAND.finditer(text)]
    assert any(name == "README.md" for name, _ in commands)
    loud = [(name, found.group(0)) for name, found in commands if "NO_MKDOCS_2_WARNING=1" not in found.group(1)]
    assert not loud, loud
