"""The table of WIT functions (`agent_host.operations`) is the contract of `wit/*.wit`, and what is made from it.

The WIT files are read with the docs' parser; each function of the imported interfaces is in the
table with its interface, resource, parameters and failure shape, and the other way round. Each
entry's session method takes its arguments, every audit operation belongs to one function, and
every recorded answer is written and read back by its result type (and a wrong one refused).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import (
    EVENT_PAYLOADS,
    Asked,
    CallOutcome,
    ChatDelta,
    ChatResult,
    Envelope,
    Operation,
    Progress,
    ResourceData,
    ResourceSpec,
    ToolCall,
    ToolSpec,
    Usage,
)
from agent_host.operations import BY_NAME, FUNCTIONS, VERSIONS, ProviderHandle, ToolingHandle, linked
from agent_host.session.guest_session import GuestSession
from agent_host.session.tape_values import RECORDED, answers, codec
from agent_host_docs import wit_reference

WIT = Path(__file__).resolve().parents[3] / "wit"
PARAM = re.compile(r"(%?[a-z][a-z0-9-]*)\s*:")


OLD_WIT = Path(__file__).resolve().parents[3] / "wit" / "released" / "0.2.0"
"""The WIT of package 0.2.0, as released: what a component built then imports."""


def _wit_functions(folder: Path = WIT) -> dict[tuple[str, str | None, str], str]:
    """(interface, resource or None, name) -> signature of every function of the world's interfaces."""
    found: dict[tuple[str, str | None, str], str] = {}
    for wit in wit_reference.parse_folder(folder):
        for top in wit.items:
            if top.kind != "interface" or top.name == "types":
                continue
            for item in top.children:
                if item.kind == "func":
                    found[(top.name, None, item.name)] = item.signature
                for method in item.children if item.kind == "resource" else []:
                    if method.kind == "func":
                        found[(top.name, item.name, method.name)] = method.signature
    return found


def _where(function: Any) -> tuple[str, str | None, str]:
    return (function.interface, function.resource, function.name)


def test_the_table_holds_every_imported_wit_function_as_the_wit_files_declare_it() -> None:
    wit = _wit_functions()
    assert set(wit) == {_where(function) for function in FUNCTIONS}
    assert len(BY_NAME) == len(FUNCTIONS)  # every key unique
    for function in FUNCTIONS:
        signature = wit[_where(function)]
        params = PARAM.findall(signature.split("->")[0])
        assert [name for name, _ in function.params] == params, function.name
        assert function.fallible == bool(re.search(r"->\s*result<.*,\s*error>$", signature)), function.name


def test_a_guest_of_an_earlier_package_version_links_exactly_the_functions_it_had() -> None:
    assert VERSIONS[-1] in (WIT / "world.wit").read_text() and VERSIONS[0] in (OLD_WIT / "world.wit").read_text()
    old = _wit_functions(OLD_WIT)
    assert {_where(function) for function in linked(VERSIONS[0])} == set(old)
    for function in linked(VERSIONS[0]):
        assert old[_where(function)] == _wit_functions()[_where(function)], function.key  # unchanged since


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.key)
def test_each_function_s_session_method_takes_its_handle_and_parameters(function: Any) -> None:
    method = getattr(GuestSession, function.session)
    arguments = ["self"] + (["rep"] if function.resource else []) + [n for n, _ in function.params]
    inspect.signature(method).bind(*arguments)  # raises TypeError when the arity differs


def test_every_audit_operation_is_the_audit_of_one_function() -> None:
    audited = [function.audit for function in FUNCTIONS if function.audit is not None]
    assert sorted(audited) == sorted(Operation)


SPEC = ToolSpec("echo", None, {"type": "object"}, capabilities=frozenset({"net", "fs"}))
SAMPLES: dict[Any, Any] = {
    str: "text ✓",
    bool: True,
    None: None,
    ToolingHandle: 7,
    list[ToolSpec]: [SPEC, ToolSpec("other", "d", {}, {"type": "object"}, {"title": "t"})],
    list[ResourceSpec]: [ResourceSpec("file:///a", "a", None, "text/plain")],
    CallOutcome: CallOutcome("echo", "{}", '{"content": []}'),
    ResourceData: ResourceData("file:///a", None, blob="AAAA"),
    ProviderHandle: 3,
    list[str]: ["gpt-4.1", "llama-3"],
    ChatResult: ChatResult("m", None, (ToolCall("c1", "add", '{"a": 1}'),), "tool-calls", Usage(12, 3)),
}
ENVELOPES = [
    Envelope("c1", "tool-result", CallOutcome("echo", "{}", "{}")),
    Envelope("c1", "error", ToolingError(ErrorCode.TIMEOUT, "slow", "details")),
    Envelope("c1", "progress", Progress(1, None, "half")),
    Envelope("s1", "resource-list-updated", [ResourceSpec("u", "n")]),
    Envelope("s1", "resource-updated", ResourceData("u", "text/plain", text="x")),
    Envelope("s1", "tool-list-updated", [SPEC]),
    Envelope("c1", "elicitation", Asked("name?", {"type": "object"})),
    Envelope("c2", "chat-delta", ChatDelta("Hel", None)),
    Envelope("c2", "chat-delta", ChatDelta(None, ToolCall("t1", "add", "{}"))),
    Envelope("c2", "chat-end", ChatResult("m", "Hello", (), "stop", Usage(5, 1))),
]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_each_recorded_answer_is_written_as_json_and_read_back_equal(name: str) -> None:
    write, read = answers(name)
    kind = RECORDED[name]
    values = ENVELOPES + [None] if kind == Envelope | None else [SAMPLES[kind]]
    for value in values:
        text = json.dumps(write(value))
        back = read(json.loads(text))
        if isinstance(value, Envelope) and isinstance(value.payload, ToolingError):
            assert (back.id, back.kind, str(back.payload), back.payload.data) == (
                "c1",
                "error",
                "timeout: slow",
                "details",
            )
        else:
            assert back == value, text


def test_the_envelope_kinds_are_the_wit_event_cases_and_each_payload_type_has_a_codec() -> None:
    event = [i for w in wit_reference.parse_folder(WIT) for t in w.items for i in t.walk() if i.name == "event"][0]
    assert [case.name for case in event.children] == list(EVENT_PAYLOADS)
    for payload in EVENT_PAYLOADS.values():
        codec(payload)


def test_a_set_of_names_is_written_sorted_whatever_the_hashing() -> None:
    assert answers("list-tools")[0]([SPEC])[0]["capabilities"] == ["fs", "net"]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("get", 0, "greater than or equal to 1"),
        ("get", True, "valid integer"),
        ("get", 2**31, "less than or equal to 2147483647"),
        ("is-open", "false", "valid boolean"),
        ("kind", 3, "valid string"),
        ("call-tool-blocking", {"name": 42, "arguments": "{}", "value": "{}"}, "name: Input should be a valid string"),
        ("list-tools", [{"name": "a", "description": None, "input_schema": []}], "0.input_schema: "),
        ("respond", "x", "expected null"),
        ("recv", {"id": "c", "kind": "progress", "payload": {}}, "payload of a progress envelope: progress: Field"),
        ("recv", {"id": "c", "kind": "nope", "payload": {}}, "'nope' is not an event kind"),
        ("try-recv", {"id": 1, "kind": "progress", "payload": {}}, "an envelope's id is a string"),
    ],
)
def test_a_recorded_answer_of_the_wrong_type_is_refused_naming_what_is_wrong(
    name: str, data: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        answers(name)[1](data)
