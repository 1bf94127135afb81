"""The README is the short front door whose links resolve; the reference pages hold their generators.

Provenance: issue 22, points 1, 2 and 4 ("the README becomes the front door, at most ~200 lines ...
links into the site"; "reference pages generated, never copied"; the Python API from docstrings).
`mkdocs build --strict` (in `make lint`) checks the links between pages and the navigation.
"""

from __future__ import annotations

import re
from pathlib import Path

import griffe
import pytest

import agent_host
import reference_pages

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
MAX_README_LINES = 200
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_is_short_and_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES
    first_block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    assert first_block.startswith("make demo") and "\nmake test" in first_block


def test_every_relative_link_of_the_readme_resolves_to_a_file_or_folder() -> None:
    links = [link for link in LINK.findall(README.read_text(encoding="utf-8")) if "://" not in link]
    assert "docs/guests/python.md" in links and "docs/reference/configuration.md" in links
    missing = [link for link in links if not (REPO / link.split("#")[0]).exists()]
    assert not missing, missing


def first_python_block(text: str) -> str:
    found = re.search(r"```python\n(.*?)```", text, re.S)
    assert found is not None
    return found.group(1)


def test_the_readmes_first_guest_is_the_guides() -> None:
    guide = (REPO / "docs" / "guests" / "python.md").read_text(encoding="utf-8")
    assert first_python_block(README.read_text(encoding="utf-8")) == first_python_block(guide)


def test_the_reference_pages_are_generated_not_written() -> None:
    reference = REPO / "docs" / "reference"
    assert "<!-- generated: configuration -->" in (reference / "configuration.md").read_text()
    assert "<!-- generated: wit -->" in (reference / "wit.md").read_text()
    assert "::: mkdocs-click" in (reference / "cli.md").read_text()
    python = (reference / "python.md").read_text()
    modules = ("agent_host", "agent_host.tools", "agent_host.testing.plugin")
    assert all(f"::: {module}\n" in python for module in modules)


def test_the_hook_fills_each_marker_and_refuses_an_unknown_one() -> None:
    text = reference_pages.expand("a\n<!-- generated: wit -->\nb")
    assert "#### `call-tool-blocking`" in text and text.startswith("a\n") and text.endswith("\nb")
    assert "| `max_open_files` |" in reference_pages.expand("<!-- generated: configuration -->")
    with pytest.raises(ValueError, match="unknown marker <!-- generated: nothing -->"):
        reference_pages.expand("<!-- generated: nothing -->")


def test_the_hook_mends_mkdocs_clicks_unset_defaults_and_escaped_pipes_in_code() -> None:
    assert reference_pages.on_page_content("<td><code>Sentinel.UNSET</code></td>") == "<td>none</td>"
    assert reference_pages.on_page_content(r"<td><code>[a\|b]</code> x\|y</td>") == r"<td><code>[a|b]</code> x\|y</td>"


def test_every_public_name_has_a_docstring_so_the_api_reference_shows_it() -> None:
    """mkdocstrings leaves out an object without a docstring (`show_if_no_docstring` is off); griffe
    reads them as mkdocstrings does (a dataclass's generated signature is no docstring)."""
    package = griffe.load("agent_host", search_paths=[str(REPO / "host")], resolve_aliases=True)
    names = set(agent_host.__all__) - {"__version__"}
    assert len(names) > 30
    undocumented = sorted(name for name in names if package[name].docstring is None)
    assert not undocumented, f"public names without a docstring (missing from docs/reference/python.md): {undocumented}"
