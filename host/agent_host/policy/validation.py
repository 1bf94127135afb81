"""Tool arguments checked against the tool's input schema before a call leaves the host, and results
against its output schema when they come back, with `jsonschema` (the class the schema's `$schema`
names, Draft 2020-12 by default; validators cached per schema object, `CACHE_SIZE`, under a lock).

Bad arguments are `invalid-arguments`, a result breaking its output schema `protocol`: both name the
tool, the path, what is wrong and the rule, most relevant first (`MAX_REPORTED`). An invalid schema
is logged once and not enforced. The value is untrusted, so a check costs memory and time linear in
its size: at most `MAX_COLLECTED` violations are collected (`MAX_CONTEXT` per `anyOf`/`oneOf`
branch), and jsonschema, which quotes the `repr` of the value at fault in each message, is given a
copy whose `repr` is cut to `MAX_SHOWN` characters. `jsonschema` is imported at the first check.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

from agent_host.errors import ErrorCode, ToolingError

logger = logging.getLogger(__name__)

CACHE_SIZE: Final = 1024
"""Validators kept."""

MAX_REPORTED: Final = 3
"""Schema violations named in one error message."""

MAX_COLLECTED: Final = 16
"""Schema violations collected from one check, the most relevant of them reported."""

MAX_CONTEXT: Final = 4
"""Violations kept per branch of an `anyOf` or `oneOf` (what its failure is explained by)."""

MAX_SHOWN: Final = 80
"""Characters of a value quoted in a violation's message."""

MAX_MESSAGE: Final = 300
"""Characters of one violation's message in an error."""


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

        collected = list(itertools.islice(validator.iter_errors(_quiet(value)), MAX_COLLECTED + 1))
        if not collected:
            return None
        errors = sorted(collected[:MAX_COLLECTED], key=relevance)
        first = best_match(errors)
        ordered = [first] + [e for e in errors if e is not first]
        described = "; ".join(_describe(error) for error in ordered[:MAX_REPORTED])
        if len(collected) > MAX_COLLECTED:
            return f"{described} (and more)"
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
            validator: Any = _bounded(cls)(schema)
        except SchemaError as exc:
            logger.warning(
                "tooling %r: tool %r has an invalid %s schema (%s); not enforced", tooling, tool, kind, exc.message
            )
            validator = None
        return validator


def _describe(error: ValidationError) -> str:
    path = "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    message = error.message if len(error.message) <= MAX_MESSAGE else f"{error.message[: MAX_MESSAGE - 3]}..."
    return f"at {_cut(path, MAX_SHOWN)}: {message} (rule: {error.validator})"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


_bounded_classes: dict[type, type] = {}
_bounded_lock = threading.Lock()


def _bounded(cls: Any) -> Any:
    """`cls` (a jsonschema validator class) whose `anyOf` and `oneOf` keep at most `MAX_CONTEXT`
    violations per branch (jsonschema's own collect every violation of every branch), and whose
    `uniqueItems` is linear (jsonschema's compares every pair when the items cannot be sorted)."""
    with _bounded_lock:
        found = _bounded_classes.get(cls)
        if found is None:
            from jsonschema import validators

            keywords = {"anyOf": _any_of, "oneOf": _one_of, "uniqueItems": _unique_items}
            found = validators.extend(cls, keywords)  # type: ignore[no-untyped-call]
            _bounded_classes[cls] = found
        return found


def _branch_errors(validator: Any, instance: object, subschema: Any, index: int) -> list[ValidationError]:
    return list(itertools.islice(validator.descend(instance, subschema, schema_path=index), MAX_CONTEXT))


def _any_of(validator: Any, any_of: list[Any], instance: object, schema: Any) -> Iterator[ValidationError]:
    """The `anyOf` keyword, as jsonschema's, with `MAX_CONTEXT` violations at most per branch."""
    from jsonschema.exceptions import ValidationError

    context: list[ValidationError] = []
    for index, subschema in enumerate(any_of):
        errors = _branch_errors(validator, instance, subschema, index)
        if not errors:
            return
        context.extend(errors)
    yield ValidationError(f"{instance!r} is not valid under any of the given schemas", context=context)


def _one_of(validator: Any, one_of: list[Any], instance: object, schema: Any) -> Iterator[ValidationError]:
    """The `oneOf` keyword, as jsonschema's, with `MAX_CONTEXT` violations at most per branch."""
    from jsonschema.exceptions import ValidationError

    context: list[ValidationError] = []
    first_valid: int | None = None
    for index, subschema in enumerate(one_of):
        errors = _branch_errors(validator, instance, subschema, index)
        if not errors:
            first_valid = index
            break
        context.extend(errors)
    if first_valid is None:
        yield ValidationError(f"{instance!r} is not valid under any of the given schemas", context=context)
        return
    more = [
        index
        for index in range(first_valid + 1, len(one_of))
        if validator.evolve(schema=one_of[index]).is_valid(instance)
    ]
    if more:
        shown = ", ".join(_cut(repr(one_of[index]), MAX_SHOWN) for index in [*more, first_valid])
        yield ValidationError(f"{instance!r} is valid under each of {shown}")


def _unique_items(validator: Any, unique: bool, instance: object, schema: Any) -> Iterator[ValidationError]:
    """The `uniqueItems` keyword in linear time: items are told apart by a hashable key of their JSON
    value (`_identity`)."""
    from jsonschema.exceptions import ValidationError

    if unique and isinstance(instance, list):
        identities = [_identity(item) for item in instance]
        if len(set(identities)) != len(identities):
            yield ValidationError(f"{instance!r} has non-unique elements")


def _identity(value: object) -> object:
    """A hashable key equal for two JSON values exactly when JSON Schema holds them equal (`1` and
    `1.0` alike, `true` and `1` not, objects by their members whatever their order)."""
    if isinstance(value, bool):
        return (0, value)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, str(value))
    if isinstance(value, list):
        return (3, tuple(_identity(item) for item in value))
    if isinstance(value, dict):
        return (4, frozenset((str(key), _identity(item)) for key, item in value.items()))
    return (5, repr(value))


class _Object(dict[str, Any]):
    """A JSON object checked by jsonschema: its `repr` is cut (`MAX_SHOWN`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return _shown(self)


class _Array(list[Any]):
    """A JSON array checked by jsonschema: its `repr` is cut (`MAX_SHOWN`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return _shown(self)


class _Text(str):
    """A JSON string checked by jsonschema: its `repr` is cut (`MAX_SHOWN`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return _shown(self)


def _quiet(value: object) -> object:
    """A copy of `value` (parsed JSON) whose objects, arrays and strings have a cut `repr` (iterative:
    memory beyond the copy bounded by the depth; time linear in the size)."""
    top = _Array()
    frames: list[tuple[Iterator[tuple[object, object]], _Object | _Array]] = [(iter([(None, value)]), top)]
    while frames:
        entries, into = frames[-1]
        for key, item in entries:
            made: object = _Text(item) if type(item) is str else item
            inner: Iterator[tuple[object, object]] | None = None
            if isinstance(item, dict):
                made, inner = _Object(), iter(item.items())
            elif isinstance(item, list):
                made, inner = _Array(), ((None, each) for each in item)
            if isinstance(into, _Array):
                into.append(made)
            else:
                into[_Text(key) if type(key) is str else key] = made  # type: ignore[index]
            if inner is not None:
                frames.append((inner, made))  # type: ignore[arg-type]
                break
        else:
            frames.pop()
    return top[0]


def _shown(value: object) -> str:
    """Python's `repr` of `value` (parsed JSON), cut to `MAX_SHOWN` characters, at a cost bounded by
    that length whatever the size of `value` (each step writes at least one character)."""
    parts: list[str] = []
    left = MAX_SHOWN

    def emit(text: str) -> bool:
        """Write `text` (what fits); whether there is room for more."""
        nonlocal left
        parts.append(text[: max(left, 0)])
        left -= len(text)
        return left >= 0

    def visit(item: object) -> bool:
        """Write `item`; whether there is room for more."""
        if isinstance(item, dict):
            return (
                emit("{")
                and all(_entry(index, key, inner) for index, (key, inner) in enumerate(item.items()))
                and emit("}")
            )
        if isinstance(item, list):
            return (
                emit("[")
                and all(emit(", " if index else "") and visit(inner) for index, inner in enumerate(item))
                and emit("]")
            )
        if isinstance(item, str):
            return emit(str.__repr__(item[: max(left, 0) + 1]))
        if isinstance(item, int) and not isinstance(item, bool) and item.bit_length() > 64:
            return emit(f"<an integer of {item.bit_length()} bits>")
        return emit(repr(item))

    def _entry(index: int, key: object, inner: object) -> bool:
        return emit(", " if index else "") and visit(key) and emit(": ") and visit(inner)

    return "".join(parts) if visit(value) else "".join(parts) + "..."
