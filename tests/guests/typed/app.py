"""A test guest in the plain-function style: a typed input (a TypedDict, parsed from JSON and checked
by the guest library), the demo tooling as an object, stdlib logging, and an answer returned as a
dict (JSON). Input: `{"a": number, "b": number, "note"?: string}`; answer `{"sum", "note"}`."""

import logging
from typing import NotRequired, TypedDict

from agentlib import agent, tooling

demo = tooling("demo")
log = logging.getLogger("typed")


class Sum(TypedDict):
    """Two numbers for the demo tooling to add."""

    a: float
    b: float
    note: NotRequired[str]


@agent
def run(numbers: Sum) -> dict[str, object]:
    log.info("adding %s and %s", numbers["a"], numbers["b"])
    total = demo.add(a=numbers["a"], b=numbers["b"])
    return {"sum": total["sum"], "note": numbers.get("note", "")}
