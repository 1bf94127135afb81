"""JavaScript guest folders without a build: which language a folder is, which module exports
`run`, how the library `agentlib` is made to resolve in the build folder (and keyed, and refused
where the guest has an entry of its name), what a failed componentize-js run is reported as, and
the toolchain's error when node or npm is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_host._support.paths import js_lib_dir, wit_dir
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


def test_the_entry_wraps_the_guests_module_and_knows_its_own_name_and_the_librarys() -> None:
    source = js_build.entry_source("main.js")
    assert 'import * as guest from "./main.js";' in source
    assert f'file !== "{js_build.ENTRY_FILE}"' in source and f'file !== "{js_build.LIBRARY}"' in source
    assert "guest.default" in source  # `export default agent(...)`
    assert "__MODULE__" not in source and "__ENTRY__" not in source and "__LIBRARY__" not in source


def test_the_library_resolves_from_every_folder_of_modules_as_one_module(tmp_path: Path) -> None:
    """StarlingMonkey resolves `agentlib` beside the importing module: the library at the top, a
    re-export of it in each subfolder holding modules, nothing where there are none."""
    folder = folder_with(tmp_path, "app.js")
    (folder / "lib" / "deep").mkdir(parents=True)
    (folder / "lib" / "helper.js").write_text('import { tooling } from "agentlib";\n')
    (folder / "lib" / "deep" / "more.mjs").write_text("")
    (folder / "data").mkdir()
    (folder / "data" / "words.txt").write_text("")
    source = tmp_path / "build" / "guest"
    js_build._copy_guest(folder, source)
    js_build._add_library(folder, source)
    library = (js_lib_dir() / js_build.LIBRARY_FILE).read_text(encoding="utf-8")
    assert (source / "agentlib").read_text(encoding="utf-8") == library
    assert (source / "lib" / "agentlib").read_text() == 'export * from "../agentlib";\n'
    assert (source / "lib" / "deep" / "agentlib").read_text() == 'export * from "../../agentlib";\n'
    assert not (source / "data" / "agentlib").exists()


def test_a_guest_entry_named_like_the_library_is_refused(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, "app.js")
    (folder / "agentlib").mkdir()
    (folder / "agentlib" / "index.js").write_text("")
    source = tmp_path / "build" / "guest"
    js_build._copy_guest(folder, source)
    with pytest.raises(BuildError) as refused:
        js_build._add_library(folder, source)
    assert refused.value.message.startswith(f"{folder / 'agentlib'}: agentlib is the name of the library")
    assert refused.value.hint == "rename the file or folder"


def test_the_library_is_built_against_the_current_wit_and_keyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_with(tmp_path, "app.js")
    (folder / "app.js").write_text('import { agent } from "agentlib";\nexport const run = agent((x) => x);\n')
    assert js_build.guest_wit(folder) == wit_dir()
    key = js_build.js_build_key(folder, "app.js")
    (folder / "old.js").write_text('import { log } from "agent-host:guest/log@0.2.0";\n')
    with pytest.raises(BuildError, match=r"imports agent-host:guest at 0\.2\.0, 0\.3\.0"):
        js_build.guest_wit(folder)
    (folder / "old.js").unlink()
    changed = tmp_path / "jslib"
    changed.mkdir()
    (changed / js_build.LIBRARY_FILE).write_text("export const changed = true;\n")
    monkeypatch.setattr(js_build, "js_lib_dir", lambda: changed)
    assert js_build.js_build_key(folder, "app.js") != key


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


def test_the_toolings_a_js_guest_asks_the_library_for_are_read_from_its_imports_of_tooling(tmp_path: Path) -> None:
    from agent_host.components.needs import toolings_asked

    folder = folder_with(tmp_path)
    (folder / "app.js").write_text(
        'import { agent, tooling } from "agentlib";\n'
        'const demo = tooling("demo");\n'
        "export const run = agent(() => demo.echo({ text: 'x' }));\n"
    )
    (folder / "more.js").write_text('import * as lib from "agentlib";\nlib.tooling("files");\nlib.provider("llm");\n')
    (folder / "own.js").write_text('function tooling(name) {}\ntooling("local");\n')  # no import of the library
    assert [(a.tooling, a.file.name, a.line) for a in toolings_asked(folder)] == [
        ("demo", "app.js", 2),
        ("files", "more.js", 2),
    ]
