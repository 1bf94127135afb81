"""Key paths through the model types: what a TOML key path, or a pydantic error location, lands on.

A pydantic location alternates keys of tables, indexes of lists and, at a discriminated union,
the tag of the member chosen (`tooling.a` + `mcp` + `stdio` + `command`). A tag is not a key of
the file, so it is left out of the dotted path (`tooling.a.command`); at a union that is not
discriminated, the location names a member by pydantic's label: the place is the union itself. `locate` walks a location
and returns the dotted key, the model and field it ends on, and the type expected there. `child`
and `resolve` walk a raw tree the same way: `expand` uses them to find values typed `Any`.
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Union, get_args, get_origin

from pydantic import BaseModel, Discriminator, Tag

Step = str | int

KEY_ERROR: Final = "[key]"
"""The step pydantic appends to the location of an error in a table key (not in its value)."""


@dataclass(frozen=True)
class Place:
    """Where an error location lands."""

    key: str
    """The dotted key path, as messages name it: `tooling.a.args[0]`."""
    table: str
    """The dotted path of the table holding the last key (`tooling.a`); "" at the top."""
    owner: type[BaseModel] | None
    """The model whose key the last step is (None for a mapping key or a list index)."""
    field: str | None
    """That key."""
    annotation: Any
    """The type expected at the place; None where nothing is expected (an unknown key)."""
    steps: tuple[Step, ...] = ()
    """The key path as steps of the raw tree (tags and labels left out)."""
    in_union: bool = False
    """Whether the error came from one member of a union that is not discriminated (the place is the
    union: every member's error is about the same value)."""


def dotted(steps: Sequence[Step]) -> str:
    """`tooling.a.args[0]` from `("tooling", "a", "args", 0)`."""
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else f".{step}" if text else step
    return text


def bare(tp: Any) -> Any:
    """`tp` without `Annotated` (unless it is a discriminated union) and without `| None`."""
    while True:
        if get_origin(tp) is Annotated:
            inner, *metadata = get_args(tp)
            if any(isinstance(item, Discriminator) for item in metadata):
                return tp
            tp = inner
        elif get_origin(tp) in (Union, types.UnionType):
            members = [arg for arg in get_args(tp) if arg is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def _plain_union(tp: Any) -> bool:
    """Whether `tp` is a union (of several members) without a discriminator."""
    return get_origin(tp) in (Union, types.UnionType) and len(get_args(tp)) > 1


def _union(tp: Any) -> tuple[Discriminator, dict[str, Any]] | None:
    """The discriminator and the members by tag of a discriminated union; None for another type."""
    if get_origin(tp) is not Annotated:
        return None
    union, *metadata = get_args(tp)
    discriminator = next((item for item in metadata if isinstance(item, Discriminator)), None)
    if discriminator is None:
        return None
    members: dict[str, Any] = {}
    for member in get_args(union):
        tags = [item for item in get_args(member)[1:] if isinstance(item, Tag)]
        members[tags[-1].tag] = member
    return discriminator, members


def resolve(tp: Any, value: Any) -> Any:
    """The type of `value` where `tp` is expected: at a discriminated union, the member it picks."""
    tp = bare(tp)
    while (union := _union(tp)) is not None:
        discriminator, members = union
        chooser = discriminator.discriminator
        tag = chooser(value) if callable(chooser) else value.get(chooser) if isinstance(value, dict) else None
        if tag not in members:
            return None
        tp = bare(members[tag])
    return tp


def child(tp: Any, step: Step) -> Any:
    """The type expected at `step` below a value of the (resolved) type `tp`; None when unknown."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        field = tp.model_fields.get(str(step))
        return field.rebuild_annotation() if field is not None else None
    origin, args = get_origin(tp), get_args(tp)
    if origin in (dict, Mapping) and len(args) == 2:
        return args[1]
    if origin in (tuple, list) and args:
        return args[0]
    return None


def locate(root: type[BaseModel], loc: Sequence[Step]) -> Place:
    """Where the error location `loc` (relative to a `root` model) lands."""
    tp: Any = root
    steps: list[Step] = []
    owner: type[BaseModel] | None = None
    field: str | None = None
    in_union = False
    for step in loc:
        if step == KEY_ERROR:
            continue
        tp = bare(tp)
        if _plain_union(tp):
            in_union = True
            break
        union = _union(tp)
        if union is not None and isinstance(step, str) and step in union[1]:
            tp = union[1][step]
            continue
        is_model = isinstance(tp, type) and issubclass(tp, BaseModel)
        owner, field = (tp, str(step)) if is_model else (None, None)
        tp = child(tp, step)
        steps.append(step)
    table = dotted(steps[:-1])
    return Place(dotted(steps), table, owner, field, bare(tp), tuple(steps), in_union)
