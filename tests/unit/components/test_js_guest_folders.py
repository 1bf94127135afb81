"""JavaScript guest folders without a build: which language a folder is, which module exports
`run`, what a failed componentize-js run is reported as, and the toolchain's error when node or
npm is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_host.components import js_build, js_toolchain
from agent_host.components.build import JAVASCRIPT, PYTHON, component_problem, find_guests, guest_entry
from agent_host.errors import BuildError

FAILED_EVALUATION = """file:///x/componentize-js/src/componentize.js:365
    throw new Error(err);
          ^

Error: Failed to initialize component (wizer (/x/wizer)):
Exception while evaluating top-level script
app.js:2:15 SyntaxError: expected expression, got ';':
app.js:2:15   return "x" +;
    at componentize (file:///x/componentize-js/src/componentize.js:365:11)
    at async componentizeCmd (file:///x/componentize-js/src/cli.js:9:25)

Node.js v20.20.2
"""


def folder_with(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "guest"
    folder.mkdir()
    for name in names:
        (folder / name).write_text("")
    return folder


def test_app_js_makes_a_javascript_guest_and_app_py_a_python_one(tmp_path: Path) -> None:
    assert guest_entry(folder_with(tmp_path, "app.js", "lib.js")) == (JAVASCRIPT, "app.js")
    other = tmp_path / "other"
    other.mkdir()
    (other / "app.py").write_text("")
    assert guest_entry(other) == (PYTHON, "app")


def test_a_module_given_by_name_picks_the_language_by_its_file(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, "main.js", "tool.py")
    assert guest_entry(folder, "main") == (JAVASCRIPT, "main.js")
    assert guest_entry(folder, "main.js") == (JAVASCRIPT, "main.js")
    assert guest_entry(folder, "tool") == (PYTHON, "tool")


def test_a_folder_with_both_app_py_and_app_js_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as refused:
        guest_entry(folder_with(tmp_path, "app.py", "app.js"))
    assert "holds both app.py and app.js" in refused.value.message
    assert refused.value.hint == "keep one of them, or pass --module NAME"


def test_the_generated_entry_name_cannot_be_the_guests_module(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="is the name of the entry agent-host generates"):
        js_build.js_module(folder_with(tmp_path, js_build.ENTRY_FILE), js_build.ENTRY_FILE.removesuffix(".js"))


def test_javascript_folders_are_guests_for_config_init_and_check(tmp_path: Path) -> None:
    (tmp_path / "guests" / "js").mkdir(parents=True)
    (tmp_path / "guests" / "js" / "app.js").write_text("export function run(input) { return input; }\n")
    (tmp_path / "guests" / "notes").mkdir()
    (tmp_path / "guests" / "notes" / "readme.txt").write_text("")
    assert find_guests(tmp_path) == [tmp_path / "guests" / "js"]
    assert component_problem(tmp_path / "guests" / "js") is None


def test_the_entry_wraps_the_guests_module_and_knows_its_own_name() -> None:
    source = js_build.entry_source("main.js")
    assert 'import * as guest from "./main.js";' in source
    assert f'found[1] !== "{js_build.ENTRY_FILE}"' in source
    assert "__MODULE__" not in source and "__ENTRY__" not in source


def test_a_failed_build_is_told_by_the_error_loading_the_guest_raised_without_nodes_frames() -> None:
    assert js_build.failure_cause(FAILED_EVALUATION, 1) == "app.js:2:15 SyntaxError: expected expression, got ';':"
    text = js_build.failure_text(FAILED_EVALUATION)
    assert text.startswith("Error: Failed to initialize component") and "app.js:2:15   return" in text
    assert "    at " not in text and "Node.js" not in text
    assert js_build.failure_cause("Error: something else\n", 1) == "Error: something else"
    assert js_build.failure_cause("", 9) == "componentize-js exit 9"


def test_missing_node_or_npm_is_named_with_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(BuildError) as missing:
        js_toolchain.toolchain()
    assert missing.value.message == "node and npm not found on PATH: a JavaScript guest cannot be built"
    assert missing.value.hint == js_toolchain.NODE_HINT


def test_the_toolings_a_js_guest_asks_for_are_read_from_its_imports_of_get(tmp_path: Path) -> None:
    from agent_host.components.needs import toolings_asked

    folder = folder_with(tmp_path)
    (folder / "app.js").write_text(
        'import { log } from "agent-host:guest/log@0.2.0";\n'
        'import { get as tooling } from "agent-host:guest/tooling@0.2.0";\n'
        "export function run(input) {\n"
        '  const files = tooling("files");\n'
        "  return tooling('search').name() + get(\"not-the-import\") + tooling(input);\n"
        "}\n"
    )
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "x.js").write_text(
        'import { get } from "agent-host:guest/tooling@0.2.0";\nget("dep");\n'
    )
    (folder / "other.js").write_text('function get(name) {}\nget("local");\n')  # no import of the interface
    assert [(a.tooling, a.file.name, a.line) for a in toolings_asked(folder)] == [
        ("files", "app.js", 4),
        ("search", "app.js", 5),
    ]
