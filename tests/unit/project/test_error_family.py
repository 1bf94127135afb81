"""One common base for the host's exceptions: `except agent_host.AgentHostError` catches every error
the host raises to an embedder, both families (`HostError` for the person running the host,
`ToolingError` for what a guest sees), `Interrupted` among them; names, references, exit codes and
messages of the classes are unchanged.
"""

from __future__ import annotations

import importlib
import pkgutil
import signal
from pathlib import Path

import pytest

import agent_host
from agent_host.errors import (
    AgentHostError,
    BuildError,
    ComponentError,
    ConfigError,
    ErrorCode,
    ExitCode,
    HostError,
    Interrupted,
    ToolingError,
    UsageError,
)

INTERNAL: dict[str, str] = {
    "agent_host._support.strict_json.JsonTextError": "a ValueError its callers turn into invalid-arguments (or 400)",
    "agent_host.cli.signals._AtOnce": "the command line's exit at once on a second signal",
    "agent_host.config.expand._Unread": "becomes a problem of the ConfigError",
    "agent_host.providers.capped_http.AnswerTooLarge": "becomes a limit-exceeded ToolingError (providers.errors)",
    "agent_host.providers.capped_http.UnwantedEncoding": "becomes a protocol ToolingError (providers.errors)",
    "agent_host.providers.capped_http.UnwantedRedirect": "becomes a protocol ToolingError (providers.errors)",
    "agent_host.runtime.memory_image._Unsure": "caught by split: the component is left whole",
    "agent_host.serve.turns.Evicted": "becomes a limit-exceeded answer of the server",
    "agent_host.session.bridge._Expired": "becomes a timeout ToolingError",
    "agent_host.session.cassette.Diverged": "ends the replayed run: its outcome is `diverged` (runtime.guest)",
    "agent_host.session.cassette.ReplayedTrap": "ends the replayed run as the host ended the recorded one",
    "agent_host.toolings.mcp.auth.LoginRequired": "becomes an unauthorized ToolingError",
    "agent_host.toolings.mcp.auth._RefreshInstead": "ends the login callback: HostAuth refreshes instead",
    "agent_host.toolings.mcp.errors.Unsendable": "becomes an invalid-arguments ToolingError",
    "agent_host.tools.ToolError": "raised by a user's tool, not by the host: the guest gets tool-failed",
}
"""Exception classes of the package that never reach an embedder, each with where it ends."""


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of the package, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(agent_host.__path__, "agent_host."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_exception_class_of_the_host_is_an_agent_host_error_unless_it_never_leaves_the_host() -> None:
    classes = exception_classes()
    assert set(INTERNAL) <= set(classes), "an INTERNAL entry names no class: remove it"
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, AgentHostError))
    assert outside == sorted(INTERNAL)
    assert "agent_host.errors.Interrupted" in classes  # with the rest of the errors


def test_except_agent_host_error_catches_both_families_and_interrupted() -> None:
    raised: list[Exception] = [
        HostError("x"),
        ConfigError("bad file"),
        UsageError("no such option"),
        BuildError("failed"),
        ComponentError("not a component"),
        Interrupted("stopped", signum=signal.SIGTERM),
        ToolingError(ErrorCode.NOT_FOUND, "no tooling 'x'"),
    ]
    for error in raised:
        with pytest.raises(agent_host.AgentHostError):
            raise error
    assert not issubclass(ToolingError, HostError) and not issubclass(HostError, ToolingError)


def test_the_classes_keep_their_names_references_exit_codes_and_messages() -> None:
    from agent_host._support.stopping import Interrupted as FromStopping

    assert FromStopping is Interrupted and issubclass(Interrupted, HostError)
    stopped = Interrupted("building: not done, stopped", signum=signal.SIGTERM)
    assert (stopped.reference, stopped.exit_code, str(stopped)) == ("interrupted", 143, "building: not done, stopped")
    assert Interrupted("x").exit_code == ExitCode.INTERRUPTED
    hinted = ConfigError("bad", hint="fix it")
    assert (hinted.reference, hinted.exit_code, str(hinted)) == ("config-error", 2, "bad\n  hint: fix it")
    tooling = ToolingError(ErrorCode.DENIED, "no")
    assert (str(tooling), repr(tooling)) == ("denied: no", "ToolingError('denied', 'no')")
    assert tooling == ToolingError(ErrorCode.DENIED, "no")


def test_what_the_public_functions_raise_is_caught_by_the_common_base(tmp_path: Path) -> None:
    with pytest.raises(agent_host.AgentHostError, match="nothing.toml"):
        agent_host.load_config(tmp_path / "nothing.toml")
    with pytest.raises(agent_host.AgentHostError, match="agent-host.toml"):
        agent_host.parse_config("[host\n", tmp_path / "agent-host.toml")
