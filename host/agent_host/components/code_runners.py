"""The component each agent runs: its own, or a code agent's runner for its language.

`agent_component(agent)` is an agent's `component` (a guest folder built on demand, or a .wasm), or,
for a code agent, the prebuilt runner of its `code` language: the Python runner (`dev_runner`: dev
mode, syntax checks and code mode in one component) or the JavaScript runner, a JavaScript guest
made of `templates/code_mode.js.txt` in the cache, built once with componentize-js (installed from
npm on first use, as for any JavaScript guest) and cached like any guest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from agent_host._support.paths import template
from agent_host._support.stopping import StopToken
from agent_host.components.build import build_guest, resolve_component
from agent_host.components.dev_runner import runner_component, written_folder
from agent_host.config import AgentConfig

_JS_TEMPLATE: Final = "code_mode.js.txt"
JS_MODULE: Final = "app.js"
"""The JavaScript runner's module in its folder."""


def js_runner_component(stop: StopToken | None = None) -> Path:
    """The JavaScript runner component, built on first use (a progress line; ~30 s once, the
    toolchain's install from npm before that on a fresh machine) and cached after. Raises
    `BuildError` or `Interrupted` as `build.build_guest` does."""
    folder = written_folder("js-runner", {JS_MODULE: template(_JS_TEMPLATE)})
    return build_guest(folder, stop=stop, label="the JavaScript runner of code agents (once; cached)")


def agent_component(agent: AgentConfig, stop: StopToken | None = None) -> Path:
    """The component `agent` runs (see the module docstring). Raises `BuildError` or `Interrupted`."""
    if agent.code == "python":
        return runner_component(stop)
    if agent.code == "javascript":
        return js_runner_component(stop)
    assert agent.component is not None, "an agent that runs has a component or code"
    return resolve_component(agent.component, stop=stop)
