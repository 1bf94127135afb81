"""mkdocs hook: fills the generated reference pages' markers with text made from the sources.

`docs/reference/configuration.md` holds `<!-- generated: configuration -->`, replaced by the tables
of every config key (from the models' JSON Schema); `docs/reference/wit.md` holds
`<!-- generated: wit -->`, replaced by every WIT item with its comment (from `wit/*.wit`), and
`<!-- generated: wit-host -->`, by how the host serves each function (`agent_host.operations`);
`docs/reference/python.md`'s `<!-- generated: python-api -->`, by one mkdocstrings block per public
name (from `agent_host/__init__.pyi`, which griffe does not read). A page
naming a marker this hook does not know, or a generator failing, fails the build. It also mends two
renderings: mkdocs-click 0.9 with click 8.3 shows an option without a default as `Sentinel.UNSET`,
and Python-Markdown keeps the backslash of an escaped pipe inside code in a table, which GitHub drops.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from agent_host_docs import config_reference, operations_reference, wit_reference

ROOT: Final = Path(__file__).resolve().parents[2]
"""The repository: this file is docs/hooks/reference_pages.py."""
MARKER: Final = re.compile(r"<!-- generated: ([a-z-]+) -->")
UNSET_CELL: Final = "<td><code>Sentinel.UNSET</code></td>"
"""How mkdocs-click 0.9 writes the default of an option that has none under click 8.3."""
CODE: Final = re.compile(r"<code>[^<]*</code>")


def _configuration() -> str:
    from agent_host.config.schema import json_schema

    return config_reference.markdown(json_schema())


def _wit() -> str:
    return wit_reference.markdown(wit_reference.parse_folder(ROOT / "wit"))


def _python_api() -> str:
    import agent_host

    blocks = []
    for name in sorted(set(agent_host.__all__) - {"__version__"}, key=str.lower):
        module = agent_host._EXPORTS[name]  # type: ignore[attr-defined]  # the stub lists the public names only
        blocks.append(f"::: {module}.{name}\n    options:\n      show_root_heading: true\n      heading_level: 3\n")
    return "\n".join(blocks)


GENERATORS: Final[dict[str, Callable[[], str]]] = {
    "configuration": _configuration,
    "wit": _wit,
    "wit-host": operations_reference.markdown,
    "python-api": _python_api,
}
"""Marker name -> the function that writes its text."""


def expand(markdown: str) -> str:
    """`markdown` with every marker replaced by its generated text."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"unknown marker <!-- generated: {name} -->; known: {', '.join(sorted(GENERATORS))}")
        return GENERATORS[name]()

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return expand(markdown)


def on_page_content(html: str, **kwargs: Any) -> str:
    html = html.replace(UNSET_CELL, "<td>none</td>")
    return CODE.sub(lambda code: code.group(0).replace("\\|", "|"), html)
