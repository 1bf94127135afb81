"""A server's sampling request as a chat, and a chat's answer as the sampling result (MCP <-> model).

`as_chat` maps `CreateMessageRequestParams` to a `ChatRequest`: the system prompt first, each text
block as text, `tool_use` blocks as the assistant's tool calls, each `tool_result` block as a `tool`
message (its text blocks joined, else its structured content as JSON), the offered tools as tool
specs (`tool_choice` "none": none offered), `max_tokens` and `temperature`. It raises
`ToolingError(invalid-arguments)` for what a chat cannot carry (image or audio blocks). Stop
sequences, model preferences and `include_context` are not passed on (hints, in MCP's words).
`as_result` maps a `ChatResult` back: text, or the tool calls as `tool_use` blocks.
"""

from __future__ import annotations

import json
from typing import Final

import mcp_types as types

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatMessage, ChatRequest, ChatResult, ToolCall, ToolSpec

STOP_REASONS: Final = {"stop": "endTurn", "length": "maxTokens", "tool-calls": "toolUse"}
"""A chat's finish reason -> MCP's stop reason (the others are passed on as they are named)."""

_Block = types.TextContent | types.ImageContent | types.AudioContent | types.ToolUseContent | types.ToolResultContent


def _blocks(message: types.SamplingMessage) -> list[_Block]:
    content = message.content
    return list(content) if isinstance(content, list) else [content]


def _unfit(block: object) -> ToolingError:
    kind = getattr(block, "type", type(block).__name__)
    return ToolingError(
        ErrorCode.INVALID_ARGUMENTS,
        f"a sampling request with {kind} content cannot be answered by a provider (text and tool calls only)",
    )


def _result_text(block: types.ToolResultContent) -> str:
    texts = [item.text for item in block.content if isinstance(item, types.TextContent)]
    if texts:
        return "\n".join(texts)
    if block.structured_content is not None:
        return json.dumps(block.structured_content, ensure_ascii=False)
    return ""


def _messages(message: types.SamplingMessage) -> list[ChatMessage]:
    """One sampling message as chat messages: its tool results each a `tool` message, the rest one."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[ChatMessage] = []
    for block in _blocks(message):
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ToolUseContent):
            calls.append(ToolCall(block.id, block.name, json.dumps(block.input, ensure_ascii=False)))
        elif isinstance(block, types.ToolResultContent):
            results.append(ChatMessage("tool", _result_text(block), tool_call_id=block.tool_use_id))
        else:
            raise _unfit(block)
    own = ChatMessage(message.role, "\n".join(texts) if texts else None, tuple(calls))
    return [*results, own] if texts or calls else results


def as_chat(params: types.CreateMessageRequestParams) -> ChatRequest:
    """The chat `params` asks for (see the module docstring)."""
    messages: list[ChatMessage] = []
    if params.system_prompt:
        messages.append(ChatMessage("system", params.system_prompt))
    for message in params.messages:
        messages.extend(_messages(message))
    offered = params.tools or []
    if params.tool_choice is not None and params.tool_choice.mode == "none":
        offered = []
    tools = tuple(
        ToolSpec(tool.name, tool.description, dict(tool.input_schema), dict(tool.output_schema or {}) or None)
        for tool in offered
    )
    return ChatRequest(tuple(messages), None, tools, params.max_tokens, params.temperature)


def as_result(result: ChatResult) -> types.CreateMessageResult | types.CreateMessageResultWithTools:
    """The sampling result of a chat's `result`."""
    reason = STOP_REASONS.get(result.finish_reason, result.finish_reason)
    if not result.tool_calls:
        text = types.TextContent(type="text", text=result.content or "")
        return types.CreateMessageResult(role="assistant", content=text, model=result.model, stop_reason=reason)
    blocks: list[_Block] = [types.TextContent(type="text", text=result.content)] if result.content else []
    for call in result.tool_calls:
        try:
            arguments = json.loads(call.arguments) if call.arguments else {}
        except (ValueError, RecursionError):
            arguments = None
        if not isinstance(arguments, dict):
            raise ToolingError(
                ErrorCode.PROTOCOL, f"the model's call of tool {call.name!r} has arguments that are not a JSON object"
            )
        blocks.append(types.ToolUseContent(type="tool_use", id=call.id, name=call.name, input=arguments))
    return types.CreateMessageResultWithTools(role="assistant", content=blocks, model=result.model, stop_reason=reason)
