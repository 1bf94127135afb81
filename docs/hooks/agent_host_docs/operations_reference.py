"""The table of how the host serves each imported WIT function, from `agent_host.operations.FUNCTIONS`.

One row per function, in the table's order: where it lives, whether it may wait, what it answers
instead of an error when it cannot fail, the audit operation it is written as, whether a cassette
records it, and what a replay checks of the agent's grants before answering from the tape.
"""

from __future__ import annotations

from typing import Final

from agent_host.operations import FUNCTIONS, WitFunction

HEADER: Final = (
    "| function | since | waits | fails with `error` | audited as | recorded | a replay checks |\n"
    "| --- | --- | --- | --- | --- | --- | --- |\n"
)

_GRANTS: Final = {
    "tooling": "the tooling is granted",
    "tool": "the tool is granted",
    "resource": "the resource is granted",
    "provider": "the provider is granted",
    "model": "the model is granted",
}


def _row(function: WitFunction) -> str:
    where = f"{function.interface}: `{function.resource}.{function.name}`" if function.resource else None
    name = where or f"{function.interface}: `{function.name}`"
    fails = (
        "yes" if function.fallible else "no" if function.result is None else f"no: answers `{_wit(function.fallback)}`"
    )
    audited = f"`{function.audit}`" if function.audit is not None else ""
    recorded = "yes" if function.taped else "no"
    if function.compared is not None:
        recorded += f" (replay compares {function.compared} of its arguments)"
    grant = _GRANTS[function.grant] if function.grant is not None else ""
    waits = "yes" if function.waits else "no"
    return f"| {name} | {function.since} | {waits} | {fails} | {audited} | {recorded} | {grant} |\n"


def _wit(value: object) -> str:
    if isinstance(value, bool):
        return "false" if not value else "true"
    return '""' if value == "" else "none" if value is None else str(value)


def markdown() -> str:
    """The table (see the module docstring)."""
    return HEADER + "".join(_row(function) for function in FUNCTIONS)
