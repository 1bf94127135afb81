"""Finding, reading and validating the config file; the embedded default.

Where the configuration comes from, first match wins: `--config FILE`, the `AGENT_HOST_CONFIG`
environment variable, `./agent-host.toml`, else the embedded default (tooling `demo`: the MCP
server bundled in `agent_host.demo_server`, started with the host's own Python over stdio).
Nothing is half-loaded: either a whole `Config` comes back or one `ConfigError` names the file and
every problem found (variables, then the problems of validation), each quoting what the file says
where a value came from a `${...}` reference (`${TOKEN}`, never the token). Every problem is found
at once: pydantic checks the rules between the keys of a table only once each key is valid, so the
tree is validated again without the keys found wrong (at most `MAX_PASSES` times), and a rule found
then is reported unless it read a key left out (it would judge a value the file does not have).
"""

from __future__ import annotations

import copy
import os
import sys
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from agent_host.config.base import Source
from agent_host.config.defaults import DEFAULT_FILE_NAME, ENV_CONFIG
from agent_host.config.errors import Problem, config_error, findings_of
from agent_host.config.expand import expand
from agent_host.config.keys import Step
from agent_host.config.models import Config
from agent_host.config.toolings import StdioToolingConfig
from agent_host.errors import ConfigError

MAX_PASSES: Final = 16
"""Validations of one file at most while looking for every problem (each leaves out at least one more key)."""


def default_config() -> Config:
    """The embedded default: tooling `demo`, the bundled MCP server over stdio."""
    demo = StdioToolingConfig(command=sys.executable, args=("-m", "agent_host.demo_server"))
    return Config(tooling={"demo": demo})


def find_config_file(explicit: str | None, cwd: Path | None = None) -> Path | None:
    """The config file to use, or None for the embedded default."""
    if explicit:
        return Path(explicit)
    from_env = os.environ.get(ENV_CONFIG)
    if from_env:
        return Path(from_env)
    candidate = (cwd or Path.cwd()) / DEFAULT_FILE_NAME
    return candidate if candidate.is_file() else None


def load_config(path: str | Path | None, environ: Mapping[str, str] | None = None) -> Config:
    """Read and validate `path`, or return the embedded default when `path` is None.

    Raises `ConfigError` when the file is missing, unreadable, not TOML or not a valid config.
    """
    if path is None:
        return default_config()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such file", hint="run `agent-host config init` to write a starter file"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_config(text, path, environ)


def parse_config(text: str, path: Path, environ: Mapping[str, str] | None = None) -> Config:
    """Validate TOML `text` as if read from `path` (named in messages; relative paths are resolved
    against its folder). `environ` (default: the process's) is what `${VAR}` reads.

    Raises `ConfigError` naming every problem found.
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint="check quoting and `key = value` syntax") from None
    expanded = expand(raw, os.environ if environ is None else environ, Config)
    toolings, providers = _table_names(expanded.tree, "tooling"), _table_names(expanded.tree, "provider")
    source = Source(file=path, toolings=toolings, providers=providers, written=raw)
    config, found = _validated(expanded.tree, source)
    problems = [*expanded.problems, *found]
    if config is None or problems:
        raise config_error(path, [problem.shown(expanded.written, expanded.secret) for problem in problems])
    return config.with_secrets(expanded.secret)


def _table_names(tree: dict[str, Any], key: str) -> frozenset[str] | None:
    """The names of the `[KEY.NAME]` tables of `tree`; None when `key` is not a table."""
    tables = tree.get(key, {})
    return frozenset(tables) if isinstance(tables, dict) else None


def _validated(tree: dict[str, Any], source: Source) -> tuple[Config | None, list[Problem]]:
    """`tree` as a `Config`, or None and every problem of it (see the module docstring)."""
    try:
        return Config.model_validate(tree, context=source), []
    except ValidationError as exc:
        findings = findings_of(exc, Config)
    problems = list(dict.fromkeys(finding.problem for finding in findings))
    pruned: set[tuple[Step, ...]] = set()
    for _ in range(MAX_PASSES):
        more = {path for finding in findings for path in finding.prune} - pruned
        if not more or () in more:
            break
        pruned |= more
        tree = _without(tree, more)
        try:
            Config.model_validate(tree, context=source)
            break
        except ValidationError as exc:
            findings = findings_of(exc, Config)
        for finding in findings:
            if finding.uses is not None and not _touches(finding.uses, pruned) and finding.problem not in problems:
                problems.append(finding.problem)
    return None, problems


def _touches(uses: Iterable[tuple[Step, ...]], pruned: Iterable[tuple[Step, ...]]) -> bool:
    """Whether a key of `uses` is, holds or is inside a key left out."""
    return any(used[: len(gone)] == gone or gone[: len(used)] == used for used in uses for gone in pruned)


def _without(tree: dict[str, Any], paths: Iterable[tuple[Step, ...]]) -> dict[str, Any]:
    """A copy of `tree` without the keys at `paths` (each ends with a key of a table)."""
    tree = copy.deepcopy(tree)
    for path in paths:
        node: Any = tree
        for step in path[:-1]:
            if isinstance(node, dict) and step in node:
                node = node[step]
            elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
                node = node[step]
            else:
                node = None
                break
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return tree
