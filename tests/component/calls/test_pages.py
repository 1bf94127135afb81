"""Lists are complete: every page of tools and resources reaches the guest, in order.

`list-tools` and `list-resources` gather all pages of a server that pages its lists.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent_host import Host
from tests.servers.paged import RESOURCES, TOOLS
from tests.support.component import REPO, ok, probe

pytestmark = pytest.mark.component

PAGED = f'[tooling.paged]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.paged"]\ncwd = "{REPO}"\n'


def test_list_tools_and_list_resources_read_every_page(make_host: Callable[[str], Host], probe_wasm: Path) -> None:
    host = make_host(PAGED)
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "paged", "as": "p"},
         {"op": "list_tools", "h": "p"},
         {"op": "list_resources", "h": "p"},
         {"op": "call_blocking", "h": "p", "tool": f"tool_{TOOLS - 1}", "args": "{}"}],
    )  # fmt: skip
    assert [t["name"] for t in ok(results[1])] == [f"tool_{i}" for i in range(TOOLS)]
    assert [r["uri"] for r in ok(results[2])] == [f"paged://{i}" for i in range(RESOURCES)]
    assert ok(results[3])["value"]["content"][0]["text"] == f"tool {TOOLS - 1}"
