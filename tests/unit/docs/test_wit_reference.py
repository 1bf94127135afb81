"""The WIT reference page holds every interface, type, case and function of `wit/*.wit` with its comment.

The page is generated from the WIT files, so a function added in code appears with no other edit. The
check reads the WIT files with plain regular expressions, independently of the page's parser, so a
function the parser missed fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_host_docs import wit_reference

WIT = Path(__file__).resolve().parents[3] / "wit"
FUNCTION = re.compile(r"^\s*(?:export\s+)?(%?[a-z][a-z0-9-]*)\s*:\s*func\b", re.M)
BLOCK = re.compile(r"^\s*(world|interface|resource|record|variant|enum|flags)\s+([a-z][a-z0-9-]*)\s*\{", re.M)


@pytest.fixture(scope="module")
def page() -> str:
    return wit_reference.markdown(wit_reference.parse_folder(WIT))


def test_every_function_of_every_wit_file_is_a_heading_with_its_signature(page: str) -> None:
    functions = [(path.name, name) for path in sorted(WIT.glob("*.wit")) for name in FUNCTION.findall(path.read_text())]
    assert ("tooling.wit", "call-tool-blocking") in functions and ("world.wit", "run") in functions
    for file, name in functions:
        assert re.search(rf"^#+ `{re.escape(name)}` \{{#wit-[a-z0-9-]*{re.escape(name)}\}}$", page, re.M), (file, name)
        assert re.search(rf"^(export )?{re.escape(name)}: func", page, re.M), (file, name)


def test_every_block_and_every_comment_line_is_on_the_page(page: str) -> None:
    flat = " ".join(page.split())
    for path in sorted(WIT.glob("*.wit")):
        text = path.read_text()
        for kind, name in BLOCK.findall(text):
            assert f"{kind} `{name}`" in page, (path.name, kind, name)
        for comment in re.findall(r"^[ \t]*///[ \t]?(.*)$", text, re.M):
            assert " ".join(comment.split()) in flat, (path.name, comment)


def test_every_case_and_field_is_listed_under_its_type() -> None:
    files = {wit.path: wit for wit in wit_reference.parse_folder(WIT)}
    items = {(item.kind, item.name): item for wit in files.values() for top in wit.items for item in top.walk()}
    codes = [case.name for case in items["enum", "error-code"].children]
    assert codes[:3] == ["not-found", "denied", "invalid-arguments"] and "unauthorized" in codes
    assert [f.name for f in items["record", "error"].children] == ["code", "message", "data"]
    event = items["variant", "event"]
    assert ("tool-result", "tool-result") == (event.children[0].name, event.children[0].signature)
    text = wit_reference.markdown(files.values())
    assert "- `tool-result(tool-result)`: The call succeeded." in text
    assert "- `data`: `option<string>`" in text


def test_a_function_added_to_a_wit_file_appears_with_its_comment_even_over_several_lines() -> None:
    wit = wit_reference.parse(
        "package a:b@1.0.0;\n\n/// An interface.\ninterface extra {\n    use types.{error};\n\n"
        "    /// Does a new thing.\n    ///\n    /// - first\n    new-thing: func(a: string,\n"
        "        b: u32) -> result<string, error>;\n\n    record r {\n        /// A field.\n        f: u8,\n    }\n}\n",
        "extra.wit",
    )
    text = wit_reference.markdown([wit])
    assert "Package `a:b@1.0.0`." in text and "### interface `extra` {#wit-extra}" in text
    assert "#### `new-thing` {#wit-extra-new-thing}" in text
    assert "new-thing: func(a: string, b: u32) -> result<string, error>;" in text
    assert "Does a new thing.\n\n- first" in text and "- `f`: `u8`: A field." in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("interface a {\n    frobnicate x;\n}\n", r"x\.wit:2: the WIT reference cannot read 'frobnicate x;'"),
        ("interface a {\n", "is not closed"),
        ("}\n", "closes no block"),
    ],
)
def test_wit_the_parser_does_not_know_fails_the_build_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wit_reference.parse(text, "x.wit")
