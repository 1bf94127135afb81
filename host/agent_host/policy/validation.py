"""Tool arguments checked against the tool's input schema before a call leaves the host, and results
against its output schema when they come back.

Every kind of tooling is checked the same way, with `jsonschema` (the validator class follows the
schema's `$schema`; Draft 2020-12 when absent). Validators are built once per (tooling, tool, schema
object) and cached (`CACHE_SIZE` entries, LRU), shared by every guest thread under a lock. Bad
arguments are `invalid-arguments`, a result whose `structuredContent` is missing or breaks the
output schema `protocol`: both name the tool, the path (`$.a.b[0]`), what is wrong and the rule
(keyword), most relevant first (at most `MAX_REPORTED`). A schema that is itself invalid (the
server's fault) is not enforced: it is logged once. `jsonschema` is imported at the first check.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

from agent_host.errors import ErrorCode, ToolingError

logger = logging.getLogger(__name__)

CACHE_SIZE: Final = 1024
"""Validators kept."""

MAX_REPORTED: Final = 3
"""Schema violations named in one error message."""


class ArgumentValidator:
    """Validates tool arguments against input schemas, caching one validator per schema."""

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple[str, str, str, int], tuple[dict[str, Any], Any]] = OrderedDict()
        self._lock = threading.Lock()

    def check(
        self, tooling: str, tool: str, schema: dict[str, Any], arguments: dict[str, Any], *, subject: str | None = None
    ) -> None:
        """Raise `ToolingError(invalid-arguments)` when `arguments` do not match `schema`; the message
        names `subject` (default: the tool of the tooling)."""
        described = self._violations(tooling, tool, "input", schema, arguments)
        if described is not None:
            raise ToolingError(
                ErrorCode.INVALID_ARGUMENTS,
                f"the arguments of {subject or f'tool {tool!r} of tooling {tooling!r}'} do not match its input "
                f"schema: {described}",
            )

    def check_answer(self, tooling: str, schema: dict[str, Any], content: dict[str, Any]) -> None:
        """Raise `ToolingError(invalid-arguments)` when the answer `content` to a question of
        `tooling`'s server does not match the schema it requested."""
        described = self._violations(tooling, "elicitation", "requested", schema, content)
        if described is not None:
            raise ToolingError(
                ErrorCode.INVALID_ARGUMENTS,
                f"the answer to the question of tooling {tooling!r} does not match the requested schema: {described}",
            )

    def check_output(self, tooling: str, tool: str, schema: dict[str, Any], structured: object) -> None:
        """Raise `ToolingError(protocol)` when a result's `structuredContent` (None: absent) does not
        match the tool's output schema: the server broke its own declaration."""
        where = f"tool {tool!r} of tooling {tooling!r}"
        if structured is None:
            raise ToolingError(
                ErrorCode.PROTOCOL, f"{where} declares an output schema but its result has no structuredContent"
            )
        described = self._violations(tooling, tool, "output", schema, structured)
        if described is not None:
            raise ToolingError(
                ErrorCode.PROTOCOL, f"the structuredContent of {where} does not match its output schema: {described}"
            )

    def _violations(self, tooling: str, tool: str, kind: str, schema: dict[str, Any], value: object) -> str | None:
        """What is wrong with `value` under `schema`, most relevant first; None when it matches (or
        the schema is invalid)."""
        validator = self._validator(tooling, tool, kind, schema)
        if validator is None:
            return None
        from jsonschema.exceptions import best_match, relevance  # imported at the first check: ~60 ms

        errors = sorted(validator.iter_errors(value), key=relevance)
        if not errors:
            return None
        first = best_match(errors)
        ordered = [first] + [e for e in errors if e is not first]
        described = "; ".join(_describe(error) for error in ordered[:MAX_REPORTED])
        more = f" (and {len(errors) - MAX_REPORTED} more)" if len(errors) > MAX_REPORTED else ""
        return described + more

    def _validator(self, tooling: str, tool: str, kind: str, schema: dict[str, Any]) -> Any:
        # Keyed by the schema object (kept alive in the entry, so its id cannot be reused meanwhile):
        # a tooling keeps the same object until it re-lists its tools.
        key = (tooling, tool, kind, id(schema))
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None and entry[0] is schema:
                self._cache.move_to_end(key)
                return entry[1]
        validator = self._build(tooling, tool, kind, schema)
        with self._lock:
            self._cache[key] = (schema, validator)
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return validator

    def _build(self, tooling: str, tool: str, kind: str, schema: dict[str, Any]) -> Any:
        from jsonschema import Draft202012Validator, validators
        from jsonschema.exceptions import SchemaError

        cls = validators.validator_for(schema, default=Draft202012Validator)
        try:
            cls.check_schema(schema)
            validator: Any = cls(schema)
        except SchemaError as exc:
            logger.warning(
                "tooling %r: tool %r has an invalid %s schema (%s); not enforced", tooling, tool, kind, exc.message
            )
            validator = None
        return validator


def _describe(error: ValidationError) -> str:
    path = "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    return f"at {path}: {error.message} (rule: {error.validator})"
