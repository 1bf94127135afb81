"""The README is the short front door whose links resolve; the reference pages hold their generators.

The README stays within 200 lines and links into the site; reference pages are generated, never copied,
the Python API from docstrings. `mkdocs build --strict` (in `make lint`) checks the links between pages
and the navigation.
"""

from __future__ import annotations

import re
from pathlib import Path

import griffe
import pytest

import agent_host
import reference_pages
from agent_host.config.starter import starter_template

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
    assert "<!-- generated: python-api -->" in python
    assert all(f"::: {module}\n" in python for module in ("agent_host.tools", "agent_host.testing.plugin"))
    api = reference_pages.expand("<!-- generated: python-api -->")
    assert "::: agent_host.app.host.Host\n" in api and "::: agent_host.app.client.ToolingClient\n" in api


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


def test_the_api_reference_lists_each_module_once_and_hides_pydantics_internals() -> None:
    """The page's own headings name the modules (no second contents entry); pydantic's `Field(...)`
    values, labels and private bases (mkdocstrings' options in mkdocs.yml) stay out."""
    options = (REPO / "mkdocs.yml").read_text(encoding="utf-8").split("mkdocstrings:", 1)[1].split("\n\n", 1)[0]
    for option in ("show_root_toc_entry", "inherited_members", "show_attribute_values", "show_labels", "show_bases"):
        assert f"\n            {option}: false\n" in options + "\n", option
    assert '"!^model_"' in options


def test_the_api_reference_names_the_exception_family_the_hidden_bases_would_show() -> None:
    text = " ".join((REPO / "docs" / "reference" / "python.md").read_text(encoding="utf-8").split())
    errors = {name: getattr(agent_host, name) for name in agent_host.__all__}
    host_errors = sorted(
        name
        for name, value in errors.items()
        if isinstance(value, type) and issubclass(value, agent_host.HostError) and value is not agent_host.HostError
    )
    assert host_errors and ", ".join(f"`{name}`" for name in host_errors[:-1]) + f" and `{host_errors[-1]}` are" in text


def test_the_maintainers_notes_are_out_of_the_navigation_and_linked_from_contributing() -> None:
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config.split("\nnav:\n", 1)[1]
    assert "notes/" not in nav and "\nnot_in_nav: |\n  /notes/\n" in config
    contributing = (REPO / "docs" / "contributing.md").read_text(encoding="utf-8")
    notes = sorted(path.name for path in (REPO / "docs" / "notes").glob("*.md"))
    assert notes and all(f"](notes/{name})" in contributing for name in notes)


def test_the_starter_configs_header_points_at_pages_that_exist() -> None:
    header = starter_template().split("\n\n", 1)[0]
    pages = re.findall(r"docs/[\w/.-]+\.md", header)
    assert "docs/operators/configuration.md" in pages and "README" not in header
    assert all((REPO / page).is_file() for page in pages), pages
