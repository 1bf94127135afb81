"""Value types of the config file: what each one accepts, what it becomes, what it says when wrong.

Each type checks its own value. When the value is wrong it raises a problem that says what was found
and what is expected (`expected a number of seconds > 0, got 0`), and its JSON Schema tells an
editor the same. Sizes accept "256MiB", "1GB" or a number of bytes and become bytes. Durations are
numbers of seconds > 0 and become floats. Agent names follow `NAME_RULE`. A relative path is
resolved against the config file's folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, ValidationInfo, WithJsonSchema

from agent_host.config.base import problem, shown, source_of

NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
NAME_RULE: Final = "letters, digits, '-' and '_', starting with a letter or digit"
"""What an agent name (and so a guest folder made by `agent-host new`) may be."""

CapabilityName = Literal[
    "read_only", "network", "workspace_write", "process_execute", "external_side_effect", "agent_delegate"
]
CAPABILITIES: Final[frozenset[str]] = frozenset(get_args(CapabilityName))
"""What a tool call may need (see `agent_host.policy.capabilities`)."""

_UNITS: Final = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024, "mib": 1024**2, "gib": 1024**3}
_SIZE: Final = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*")
_SIZE_SCHEMA: Final = r"^\s*\d+(\.\d+)?\s*([bB]|[kKmMgG][iI]?[bB])?\s*$"
_MODULE_SPEC: Final = r"^[A-Za-z_][\w.]*(:[A-Za-z_][\w.]*)?$"


def name_problem(name: str) -> str | None:
    """Why `name` is not a valid agent name, or None when it is."""
    if NAME_PATTERN.fullmatch(name):
        return None
    return f"{name!r} is not a valid agent name: use only {NAME_RULE}"


def parse_size(value: str | int) -> int | None:
    """Bytes from `256MiB`, `1GB`, `4096` or an int; None when it cannot be read."""
    if isinstance(value, int):
        return value
    match = _SIZE.fullmatch(value)
    if match is None or match.group(2).lower() not in _UNITS:
        return None
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def format_size(size: int) -> str:
    """`64 MiB`, `1.5 GiB`, `512 bytes`: a byte count as a person reads it."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            return f"{size / factor:g} {unit}"
    return f"{size} bytes"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _seconds(value: object) -> object:
    if not _is_number(value) or not value > 0:  # type: ignore[operator]
        raise problem(f"expected a number of seconds > 0, got {shown(value)}")
    return value


def _positive(value: object) -> object:
    if not _is_number(value) or not value > 0:  # type: ignore[operator]
        raise problem(f"expected a number > 0, got {shown(value)}")
    return value


def _at_least_zero(value: object) -> object:
    if not _is_number(value) or not value >= 0:  # type: ignore[operator]
        raise problem(f"expected a number >= 0, got {shown(value)}")
    return value


def _whole(minimum: int) -> BeforeValidator:
    def check(value: object) -> object:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise problem(f"expected a whole number >= {minimum}, got {shown(value)}")
        return value

    return BeforeValidator(check)


def _size(value: object) -> int:
    parsed = parse_size(value) if isinstance(value, str | int) and not isinstance(value, bool) else None
    if parsed is None or parsed <= 0:
        raise problem(f'expected a size such as "256MiB" or a number of bytes, got {shown(value)}')
    return parsed


def _capability(value: object) -> object:
    if isinstance(value, str) and value not in CAPABILITIES:
        raise problem(f"unknown capability {value!r}; known: {', '.join(sorted(CAPABILITIES))}")
    return value


def _http_url(value: object) -> object:
    if isinstance(value, str) and not value.startswith(("http://", "https://")):
        raise problem(f"expected an http:// or https:// URL, got {shown(value)}")
    return value


def ray_address_problem(address: str) -> tuple[str, str] | None:
    """Why `address` is not a Ray address agent-host can join ("auto" or HOST:PORT), with a hint;
    None when it is one."""
    hint = "give `auto` (the cluster `ray start` made on this machine) or the HOST:PORT that `ray start --head` printed"
    if address == "auto":
        return None
    if address.startswith("ray://"):
        return "Ray Client addresses (ray://) are not supported: agent-host joins as a driver", hint
    if "://" in address:
        return f"expected `auto` or HOST:PORT, not a URL: {address!r}", hint
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return f"expected `auto` or HOST:PORT (a port from 1 to 65535), got {address!r}", hint
    return None


def _ray_address(value: object) -> object:
    found = ray_address_problem(value) if isinstance(value, str) else None
    if found is not None:
        raise problem(*found)
    return value


def _module_spec(value: object) -> object:
    if isinstance(value, str) and not re.fullmatch(_MODULE_SPEC, value):
        raise problem(f'expected "module" or "module:attribute", got {shown(value)}')
    return value


def _sampling(value: object) -> object:
    if value != "decline" and not (isinstance(value, str) and re.fullmatch(_MODULE_SPEC, value)):
        raise problem(
            f'expected "decline", "module:function" or {{ provider = "NAME" }}, got {shown(value)}',
            hint='e.g. sampling = { provider = "llm" } (a [provider.NAME] answers, charged to the agent\'s budget)',
        )
    return value


def _absolute(value: object) -> object:
    if isinstance(value, str) and not value.startswith("/"):
        raise problem(f'expected an absolute path such as "/data", got {shown(value)}')
    return value


def _agent_name(value: object) -> object:
    reason = name_problem(value) if isinstance(value, str) else None
    if reason is not None:
        raise problem(reason, hint="rename the [agents.NAME] table")
    return value


def _relative_to_file(path: Path, info: ValidationInfo) -> Path:
    base = source_of(info).base
    return base / path if base is not None else path


def _folder(path: Path, info: ValidationInfo) -> Path:
    folder = _relative_to_file(path, info).resolve()
    if not folder.is_dir():
        raise problem(f"{folder} is not a folder")
    return folder


Seconds = Annotated[float, Field(gt=0), BeforeValidator(_seconds)]
"""A duration: a number of seconds > 0."""

Delay = Annotated[float, Field(ge=0), BeforeValidator(_at_least_zero)]
"""A number of seconds >= 0."""

Count = Annotated[int, Field(ge=1), _whole(1)]
"""A whole number >= 1."""

Steps = Annotated[int, Field(ge=0), _whole(0)]
"""A whole number >= 0."""

Fraction = Annotated[float, Field(gt=0), BeforeValidator(_positive)]
"""A number > 0 (a share of CPUs: 0.5, 1, 2)."""

Executor = Literal["local", "ray"]
"""Where `agent-host run` runs agents."""

RayAddress = Annotated[str, BeforeValidator(_ray_address)]
"""A Ray cluster to join: "auto" or HOST:PORT (see `ray_address_problem`)."""

Size = Annotated[
    int,
    BeforeValidator(_size),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": _SIZE_SCHEMA}]}),
]
"""Bytes: "256MiB", "1.5KiB", "1GB" (units B, KB, MB, GB, KiB, MiB, GiB) or a number of bytes."""

Capability = Annotated[CapabilityName, BeforeValidator(_capability)]
"""One of `CAPABILITIES`."""

HttpUrl = Annotated[str, StringConstraints(pattern=r"^https?://"), BeforeValidator(_http_url)]
"""An http:// or https:// URL."""

ModuleSpec = Annotated[str, StringConstraints(pattern=_MODULE_SPEC), BeforeValidator(_module_spec)]
"""An import path: "module" or "module:attribute"."""

Sampling = Annotated[
    str,
    BeforeValidator(_sampling),
    WithJsonSchema({"anyOf": [{"enum": ["decline"]}, {"type": "string", "pattern": _MODULE_SPEC}]}),
]
"""What a server's sampling requests get: "decline", or the function "module:function" answering them."""

GuestPath = Annotated[str, StringConstraints(pattern=r"^/"), BeforeValidator(_absolute)]
"""An absolute path inside the guest."""

AgentName = Annotated[str, StringConstraints(pattern=f"^{NAME_PATTERN.pattern}$"), BeforeValidator(_agent_name)]
"""The NAME of an `[agents.NAME]` table (see `NAME_RULE`)."""

FilePath = Annotated[Path, AfterValidator(_relative_to_file)]
"""A path on this machine; a relative one is resolved against the config file's folder."""

Folder = Annotated[Path, AfterValidator(_folder)]
"""An existing folder on this machine (relative: to the config file's folder), made absolute."""

Json = dict[str, Any]
"""A JSON object kept as written: no `${VAR}` expansion inside (a schema, a scripted result)."""
