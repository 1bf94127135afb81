"""JavaScript guests, as their authors meet them: a syntax error at build time, `agent-host new
--lang js` with `bindings --lang ts` checked by tsc, and the `dev` loop rebuilding on each save.

Skipped, with the reason, where node or npm is missing. The runs themselves are in test_js_guests.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Final

import pytest

from agent_host.components import js_toolchain
from agent_host.errors import ExitCode
from tests.support import in_process
from tests.support.component import REPO
from tests.support.dev_watch import Watch

pytestmark = [pytest.mark.component, pytest.mark.npm, pytest.mark.timeout(300)]
"""Longer than the suite's 60 s: each test builds (componentize-js) and compiles, a fresh run installs the
toolchain first."""

JSPROBE: Final = REPO / "tests" / "guests" / "jsprobe"
WAIT: Final = 180.0
"""Seconds a dev-mode child may take for an answer (a JavaScript rebuild and compile, on a loaded machine)."""


def test_a_syntax_error_names_the_file_line_and_column_without_nodes_frames(
    toolchain: js_toolchain.Toolchain, tmp_path: Path
) -> None:
    guest = tmp_path / "broken"
    guest.mkdir()
    (guest / "app.js").write_text(
        'import { twice } from "./lib.js";\nexport function run(input) {\n  return twice(input);\n}\n'
    )
    (guest / "lib.js").write_text("export function twice(text) {\n  return text +;\n}\n")
    done = in_process.run("build", str(guest))
    assert done.returncode == ExitCode.USAGE_ERROR, done.stderr
    assert f"error: building {guest} failed: lib.js:2:16 SyntaxError: expected expression, got ';'" in done.stderr
    assert "    at " not in done.stderr and "Node.js v" not in done.stderr, done.stderr


def test_new_lang_js_writes_a_guest_that_type_checks_runs_and_answers(
    toolchain: js_toolchain.Toolchain, tmp_path: Path
) -> None:
    """`agent-host new NAME --lang js`, `bindings --lang ts`, jco's declarations checked with tsc
    (installed with jco), then `agent-host run` of the new guest against the bundled server."""
    made = in_process.run("new", "scout", "--lang", "js", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "write the bindings: agent-host bindings --lang ts" in made.stderr
    assert sorted(p.name for p in (tmp_path / "guests" / "scout").iterdir()) == ["app.js", "jsconfig.json"]
    bindings = in_process.run("bindings", "--lang", "ts", cwd=tmp_path)
    assert bindings.returncode == 0, bindings.stderr
    declared = (tmp_path / "typings-ts" / "interfaces" / "agent-host-guest-tooling.d.ts").read_text()
    assert "declare module 'agent-host:guest/tooling@0.3.0'" in declared and "callToolBlocking(" in declared
    assert in_process.run("bindings", "--lang", "ts", cwd=tmp_path).returncode == 0  # its own copy: replaced
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "index.d.ts").write_text("// not agent-host's\n")
    foreign = in_process.run("bindings", "--lang", "ts", "mine", cwd=tmp_path)
    assert foreign.returncode == ExitCode.USAGE_ERROR and "was not written by agent-host bindings" in foreign.stderr
    assert (tmp_path / "mine" / "index.d.ts").read_text() == "// not agent-host's\n"
    tsc = toolchain.prefix / "node_modules" / ".bin" / "tsc"
    check = [str(tsc), "-p", "guests/scout/jsconfig.json"]
    checked = subprocess.run(check, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout
    app = tmp_path / "guests" / "scout" / "app.js"
    app.write_text(app.read_text().replace("tool.name)", "tool.nam)"))
    broken = subprocess.run(check, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert "Property 'nam' does not exist on type" in broken.stdout, broken.stdout
    app.write_text(app.read_text().replace("tool.nam)", "tool.name)"))
    answered = in_process.run("run", "guests/scout", "--input", "hi", cwd=tmp_path)
    assert answered.returncode == 0, answered.stderr
    tools = ["echo", "add", "word_count", "fail", "sleep", "set_note"]
    assert json.loads(answered.stdout) == {"tools": tools, "echo": "hi"}


def test_dev_rebuilds_a_js_guest_on_save_and_reports_a_broken_save_until_it_is_fixed(
    toolchain: js_toolchain.Toolchain, tmp_path: Path
) -> None:
    guest = tmp_path / "jsprobe"  # the name and sources of tests/guests/jsprobe: its build is the cached one
    shutil.copytree(JSPROBE, guest)
    watch = Watch(guest, "--input", "fine", wait=WAIT)
    try:
        assert watch.next_answer() == "fine: fine"
        app = guest / "app.js"
        original = app.read_text()
        app.write_text(original.replace("return `fine: ${input}`", "return `v2: ${input}`"))
        # The next answer that is not the old one: the v2 build may come from the cache (an earlier
        # run of this test), and the folder's copying may have started one more run of the old code.
        assert _next_new_answer(watch, "fine: fine") == "v2: fine"
        app.write_text(original.replace("return `fine: ${input}`", "return `fine: ` +;"))
        watch.wait_err("SyntaxError: expected expression")
        app.write_text(original)
        assert _next_new_answer(watch, "v2: fine", waiting_for="SyntaxError") == "fine: fine"
    finally:
        code = watch.stop()
    assert code == 130, watch.err


def test_a_build_whose_top_level_never_ends_is_ended_at_the_build_timeout_leaving_nothing(
    toolchain: js_toolchain.Toolchain, tmp_path: Path
) -> None:
    """A guest's top-level code runs while it is built (pre-initialisation): an endless loop there
    made the build run for ever. It ends at `AGENT_HOST_BUILD_TIMEOUT`, with no process left (the
    autouse check) and no temp folder of componentize-js's left behind."""
    guest = tmp_path / "toploop"
    guest.mkdir()
    (guest / "app.js").write_text("for (;;) {}\nexport function run(input) { return input; }\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = in_process.run("build", str(guest), env={"AGENT_HOST_BUILD_TIMEOUT": "3", "TMPDIR": str(temp)})
    assert done.returncode == ExitCode.USAGE_ERROR, done.stderr
    assert f"error: building {guest} did not finish within 3 s: a guest's top-level code runs" in done.stderr
    assert "hint: move that work into run(), or allow more time with AGENT_HOST_BUILD_TIMEOUT=SECONDS" in done.stderr
    assert list(temp.iterdir()) == []


def test_a_file_linked_from_outside_the_guest_folder_is_refused(
    toolchain: js_toolchain.Toolchain, tmp_path: Path
) -> None:
    """Followed, the link's target was built into the guest and quoted in build errors (a link to
    /etc/passwd imported as a module printed its first line)."""
    guest = tmp_path / "linked"
    guest.mkdir()
    (tmp_path / "secret.js").write_text('export const secret = "outside";\n')
    (guest / "secret.js").symlink_to(tmp_path / "secret.js")
    (guest / "app.js").write_text(
        'import { secret } from "./secret.js";\nexport function run(input) { return secret; }\n'
    )
    done = in_process.run("build", str(guest))
    assert done.returncode == ExitCode.USAGE_ERROR
    assert (
        f"{guest / 'secret.js'}: a symbolic link to {tmp_path / 'secret.js'}, outside the guest folder" in done.stderr
    )


def _next_new_answer(watch: Watch, old: str, waiting_for: str = "") -> str:
    """The next answer of `watch` other than `old` (bounded by the watch's own wait)."""
    answer = watch.next_answer(waiting_for)
    while answer == old:
        answer = watch.next_answer(waiting_for)
    return answer
