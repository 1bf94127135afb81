"""How a cassette writes each recorded answer as JSON and reads it back, derived from `operations`.

A function's answer is written and read by its result type: a pydantic `TypeAdapter` for plain
data (read strictly: `"false"` is no `bool`, `1.0` no handle), an envelope by its kind's payload
type (`model.EVENT_PAYLOADS`), an error as {code, message, data}. `read` raises `ValueError` naming
the first thing wrong, so that a cassette is refused at load rather than half replayed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import EVENT_PAYLOADS, Envelope
from agent_host.operations import FUNCTIONS


def error_out(exc: ToolingError) -> dict[str, Any]:
    return {"code": exc.code.value, "message": exc.message, "data": exc.data}


def error_in(data: Any) -> ToolingError:
    """The `ToolingError` recorded as `data`; `ValueError` when it is not one."""
    if not isinstance(data, dict):
        raise ValueError(f"an error is an object, got {type(data).__name__}")
    message, detail = data.get("message"), data.get("data")
    if not isinstance(message, str) or not isinstance(detail, str | None):
        raise ValueError("an error's message is a string, its data a string or null")
    code = data.get("code")
    if not isinstance(code, str) or code not in ErrorCode.__members__.values():
        raise ValueError(f"{code!r} is not an error code")
    return ToolingError(ErrorCode(code), message, detail)


Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]
"""(write: the answer to JSON data, read: JSON data to the answer)."""


@functools.cache
def codec(kind: Any) -> Codec:
    """How an answer of Python type `kind` is written and read (see the module docstring)."""
    if kind is ToolingError:
        return error_out, error_in
    if kind is None:
        return _nothing, _nothing_in
    if kind == Envelope | None:
        return _envelope_out, _envelope_in
    adapter: TypeAdapter[Any] = TypeAdapter(kind)

    def read(data: Any) -> Any:
        try:
            return adapter.validate_json(json.dumps(data), strict=True)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            raise ValueError(f"{where + ': ' if where else ''}{first['msg']}{more}") from None

    return functools.partial(adapter.dump_python, mode="json"), read


def _nothing(value: Any) -> None:
    return None


def _nothing_in(data: Any) -> None:
    if data is not None:
        raise ValueError(f"expected null, got {type(data).__name__}")


def _envelope_out(item: Envelope | None) -> Any:
    if item is None:
        return None
    write, _ = codec(EVENT_PAYLOADS[item.kind])
    return {"id": item.id, "kind": item.kind, "payload": write(item.payload)}


def _envelope_in(data: Any) -> Envelope | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"an envelope is an object, got {type(data).__name__}")
    if not isinstance(data.get("id"), str):
        raise ValueError("an envelope's id is a string")
    kind = data.get("kind")
    if kind not in EVENT_PAYLOADS:
        raise ValueError(f"{kind!r} is not an event kind")
    _, read = codec(EVENT_PAYLOADS[kind])
    try:
        payload = read(data.get("payload"))
    except ValueError as exc:
        raise ValueError(f"payload of a {kind} envelope: {exc}") from None
    return Envelope(data["id"], kind, payload)


def args_out(args: Sequence[Any]) -> list[Any]:
    """A call's arguments as JSON values: as they are, but records (a `ChatRequest`) as the JSON
    pydantic writes of them (what a cassette holds and a replay compares)."""
    return [arg if arg is None or isinstance(arg, str | int | float | bool) else _dumped(arg) for arg in args]


def _dumped(value: Any) -> Any:
    kind: Any = type(value)  # the codecs are made once per type (`codec` is cached)
    return codec(kind)[0](value)


RECORDED: Final[Mapping[str, Any]] = {f.key: f.result for f in FUNCTIONS if f.taped}
"""The result type of each function a cassette records, by its `key` (its WIT name, qualified where shared)."""


def answers(name: str) -> Codec:
    """How the answer of recorded function `name` is written and read back (made at first use: the
    adapters cost a little time, which a run that records nothing need not spend)."""
    return codec(RECORDED[name])


COMPARED: Final[Mapping[str, int]] = {f.key: f.compared for f in FUNCTIONS if f.compared is not None}
"""Functions whose arguments a replay compares only in part, by how many it compares."""
