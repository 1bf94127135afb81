"""Which providers, and which of their models, an agent may ask (`ProviderGrants`), and its
model budgets per run (`LlmLimits`, enforced by `session.llm_budget`).

A grant is a provider's name (all its models) or `NAME:GLOB` (the models the glob matches, as
`policy.globs.matches` does). Deny by default: a provider no grant names is `denied` at `get`, a
model no grant of its provider matches is `denied` before anything is sent. Refusals say where the
grants come from and how to widen them; they never quote a key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agent_host.errors import ErrorCode, ToolingError
from agent_host.policy.globs import matches

ALL: tuple[str, ...] = ("*",)


@dataclass(frozen=True)
class ProviderGrants:
    """An agent's provider grants, parsed: provider name -> the model globs granted."""

    agent: str
    models: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = "no provider grant"
    """Where the grants come from, for messages (`[agents.scout] providers in agent-host.toml`)."""

    @classmethod
    def parse(cls, agent: str, grants: Iterable[str], source: str) -> ProviderGrants:
        """From `NAME` and `NAME:GLOB` strings (a `NAME` grant wins over its globs)."""
        models: dict[str, tuple[str, ...]] = {}
        for grant in grants:
            name, _, glob = grant.partition(":")
            if models.get(name) == ALL:
                continue
            models[name] = ALL if not glob else (*models.get(name, ()), glob)
        return cls(agent, models, source)

    def check_provider(self, name: str) -> None:
        """Raise `denied` unless some grant names provider `name`."""
        if name not in self.models:
            raise ToolingError(
                ErrorCode.DENIED,
                f"agent {self.agent!r} is not granted provider {name[:200]!r} (its grants come from {self.source}); "
                f'grant it with providers = ["{name[:200]}"] in [agents.{self.agent}]',
            )

    def model_allowed(self, name: str, model: str) -> bool:
        return any(matches(model, glob) for glob in self.models.get(name, ()))

    def check_model(self, name: str, model: str) -> None:
        """Raise `denied` unless a grant of provider `name` matches `model`."""
        self.check_provider(name)
        if not self.model_allowed(name, model):
            globs = ", ".join(f"{name}:{glob}" for glob in self.models[name])
            raise ToolingError(
                ErrorCode.DENIED,
                f"agent {self.agent!r} may not ask model {model[:200]!r} of provider {name!r}: it matches none of "
                f"{globs} ({self.source}); add a matching grant there",
            )


@dataclass(frozen=True)
class LlmLimits:
    """The budgets of one run (None: unlimited) and, for messages, where each is set."""

    requests: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    where: str = "[host]"
    """Where the keys are set, as messages name it (`[agents.scout] in agent-host.toml`)."""
