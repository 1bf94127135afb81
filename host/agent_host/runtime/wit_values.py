"""Every conversion between host data and WIT values: the only module that builds `Record`/`Variant`.

wasmtime-py lowers `variant`, `result` and `option` "tagged only if ambiguous": when two cases map
to overlapping Python types the value must be `Variant(tag, payload)`, otherwise the bare payload;
each function here says which form it builds or reads. The WIT contract's encoding rules live here
too, such as `guest_content`. Imports only `model` and `errors` of the host.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from wasmtime.component import Record, Variant

from agent_host._support import strict_json
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import (
    EVENT_PAYLOADS,
    Asked,
    CallOutcome,
    ChatDelta,
    ChatMessage,
    ChatRequest,
    ChatResult,
    Envelope,
    Progress,
    ResourceData,
    ResourceSpec,
    ToolCall,
    ToolSpec,
)


def record(**fields: Any) -> Record:
    """A WIT record; snake_case keyword names become kebab-case attribute names (`mime-type`)."""
    value = Record()
    for key, item in fields.items():
        setattr(value, key.replace("_", "-"), item)
    return value


def error(exc: ToolingError) -> Record:
    """The WIT `error` record, also the bare `err` of `result<string | list<..> | own<..>, error>`
    (unambiguous: its `ok` is the bare value)."""
    return record(code=exc.code.value, message=exc.message, data=exc.data)


def tool(spec: ToolSpec) -> Record:
    return record(
        name=spec.name,
        description=spec.description,
        input_schema=json.dumps(spec.input_schema, ensure_ascii=False),
        output_schema=json.dumps(spec.output_schema, ensure_ascii=False) if spec.output_schema is not None else None,
    )


def tool_result(outcome: CallOutcome) -> Record:
    return record(name=outcome.name, arguments=outcome.arguments, value=outcome.value)


def resource_info(spec: ResourceSpec) -> Record:
    return record(uri=spec.uri, name=spec.name, description=spec.description, mime_type=spec.mime_type)


def resource_content(data: ResourceData) -> Record:
    return record(uri=data.uri, mime_type=data.mime_type, content=guest_content(data))


def guest_content(data: ResourceData) -> str:
    """The content as the WIT contract gives it to a guest (tested in `tests/unit/runtime/test_wit_values.py`).

    Text when the MIME type is absent or `text/*`, base64 of the bytes otherwise; a text
    resource with a non-text type is encoded, a blob with a text type decoded (and kept as
    base64 when it is not UTF-8, which the guest can tell from the MIME type it asked for).
    """
    textual = data.mime_type is None or data.mime_type.lower().startswith("text/")
    if data.text is not None:
        return data.text if textual else base64.b64encode(data.text.encode("utf-8")).decode("ascii")
    blob = data.blob or ""
    if not textual:
        return blob
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return blob


def progress(report: Progress) -> Record:
    """`f64` fields must be Python floats (wasmtime-py refuses an int for `option<f64>`)."""
    total = float(report.total) if report.total is not None else None
    message = str(report.message) if report.message is not None else None
    return record(progress=float(report.progress), total=total, message=message)


def asked(question: Asked) -> Record:
    return record(message=question.message, requested_schema=json.dumps(question.schema, ensure_ascii=False))


U32_MAX: Final = 2**32 - 1


def tool_call(call: ToolCall) -> Record:
    return record(id=call.id, name=call.name, arguments=call.arguments)


def chat_result(result: ChatResult) -> Record:
    """A model's answer; token counts beyond a `u32` are given as its maximum."""
    usage = record(
        input_tokens=min(result.usage.input_tokens, U32_MAX), output_tokens=min(result.usage.output_tokens, U32_MAX)
    )
    return record(
        model=result.model,
        content=result.content,
        tool_calls=[tool_call(call) for call in result.tool_calls],
        finish_reason=result.finish_reason,
        usage=usage,
    )


def chat_delta(delta: ChatDelta) -> Record:
    return record(content=delta.content, tool_call=tool_call(delta.tool_call) if delta.tool_call is not None else None)


def _field(value: Any, name: str) -> Any:
    """Field `name` of a record a guest passed (wasmtime-py gives records kebab-case attributes)."""
    return getattr(value, name)


def _tool_call_of(value: Any) -> ToolCall:
    return ToolCall(str(_field(value, "id")), str(_field(value, "name")), str(_field(value, "arguments")))


def _schema_of(text: str, tool: str) -> dict[str, Any]:
    try:
        schema = strict_json.loads(text)
    except strict_json.JsonTextError as exc:
        raise ToolingError(
            ErrorCode.INVALID_ARGUMENTS, f"the input schema of tool {tool[:200]!r} is not JSON: {exc}"
        ) from None
    if not isinstance(schema, dict):
        raise ToolingError(ErrorCode.INVALID_ARGUMENTS, f"the input schema of tool {tool[:200]!r} is not a JSON object")
    return schema


def _tool_of(value: Any) -> ToolSpec:
    name = str(_field(value, "name"))
    output = _field(value, "output-schema")
    return ToolSpec(
        name,
        _field(value, "description"),
        _schema_of(str(_field(value, "input-schema")), name),
        _schema_of(str(output), name) if output is not None else None,
    )


def chat_request(value: Any) -> ChatRequest:
    """A `chat-request` a guest passed, as host data: each tool's schemas parsed (strict JSON, linear
    in their size); `invalid-arguments` when one is not a JSON object."""
    messages = tuple(
        ChatMessage(
            str(_field(message, "role")),  # type: ignore[arg-type]  # the WIT enum: one of `Role`'s names
            _field(message, "content"),
            tuple(_tool_call_of(call) for call in _field(message, "tool-calls")),
            _field(message, "tool-call-id"),
        )
        for message in _field(value, "messages")
    )
    temperature = _field(value, "temperature")
    return ChatRequest(
        messages,
        model=_field(value, "model"),
        tools=tuple(_tool_of(tool) for tool in _field(value, "tools")),
        max_tokens=_field(value, "max-tokens"),
        temperature=float(temperature) if temperature is not None else None,
        response_schema=_field(value, "response-schema"),
    )


_EVENTS: Final[Mapping[Any, Callable[[Any], Any]]] = {
    CallOutcome: tool_result,
    ToolingError: error,
    Progress: progress,
    list[ResourceSpec]: lambda specs: [resource_info(spec) for spec in specs],
    ResourceData: resource_content,
    list[ToolSpec]: lambda specs: [tool(spec) for spec in specs],
    Asked: asked,
    ChatDelta: chat_delta,
    ChatResult: chat_result,
}
"""How an envelope's payload becomes its `event` case's value, by its type (`model.EVENT_PAYLOADS`)."""


def envelope(item: Envelope) -> Record:
    """An inbox envelope; the `event` variant is always tagged (several cases are records).

    An `option<envelope>` is `None` or this record.
    """
    return record(id=item.id, event=Variant(item.kind, _EVENTS[EVENT_PAYLOADS[item.kind]](item.payload)))


def ok(value: Any) -> Variant:
    """The `ok` case of a result whose cases are ambiguous (both records, or both strings), such as
    `result<tool-result | resource-content, error>`: `Variant("ok", value)`."""
    return Variant("ok", value)


def err(exc: ToolingError) -> Variant:
    """The `err` case of a result whose cases are ambiguous: `Variant("err", error record)`."""
    return Variant("err", error(exc))


def run_result(value: Any) -> tuple[bool, str]:
    """Read `run`'s `result<string, string>`, always `Variant("ok"/"err", str)`: (ok?, text).

    Raises `TypeError` for any other value.
    """
    if not isinstance(value, Variant) or value.tag not in ("ok", "err") or not isinstance(value.payload, str):
        raise TypeError(f"unexpected value from run: {value!r}")
    return value.tag == "ok", value.payload
