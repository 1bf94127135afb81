"""A host without wasm for the unit tests of the session parts: a bridge, mock toolings, a policy.

`World` holds a `Bridge` and a `ToolingSet` made from `MOCK` (a mock tooling `m`, a Python tooling
`py`); `session()` makes a `GuestSession` for agent `tester` (or any agent of the config).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from agent_host.config import Config, parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ToolSpec
from agent_host.policy.approval import ApprovalRequest, Decision
from agent_host.policy.grants import AgentPolicy
from agent_host.session import Admission, AdmittedCall, GuestSession
from agent_host.session.audit_log import AuditLog
from agent_host.session.bridge import Bridge
from agent_host.session.inbox import Inbox
from agent_host.toolings import Tooling, ToolingSet

_T = TypeVar("_T")

WAIT = 5.0
"""Seconds any wait of these tests may take before it counts as a hang."""

MOCK = """
[tooling.m]
kind = "mock"
timeout = 0.5
progress_resets_timeout = false  # the timeout tests count on 0.5 s for `slow`, which reports progress

[[tooling.m.tools]]
name = "echo"
input_schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
capabilities = ["read_only"]
results = [{ text = "one" }, { structured = { n = 2 } }, { error = "it broke" }]

[[tooling.m.tools]]
name = "write"
capabilities = ["workspace_write"]
results = [{ text = "written" }]
repeat_last = true

[[tooling.m.tools]]
name = "slow"
capabilities = ["read_only"]
results = [{ text = "late", delay = 3, progress = 30 }]
repeat_last = true

[[tooling.m.tools]]
name = "hidden"
results = [{ text = "secret" }]

[[tooling.m.resources]]
uri = "mock://a"
name = "a"
text = "A1"

[[tooling.m.resources]]
uri = "mock://private"
name = "private"
text = "P"

[[tooling.m.updates]]
after = 0.05
resource = "mock://a"
text = "A2"

[[tooling.m.updates]]
after = 0.1
add_tool = { name = "hidden2", results = [{ text = "x" }] }

[[tooling.m.updates]]
after = 0.15
add_tool = { name = "echo2", results = [{ text = "x" }] }

[tooling.py]
kind = "python"
tools = [
    "tests.support.pytools:registry",
    "tests.support.pytools:Deploy",
    "tests.support.pytools:plain",
    "tests.support.pytools:Broken",
]

[tooling.other]
kind = "mock"

[agents.tester]
component = "x.wasm"
toolings = ["m", "py"]
tools = { m = ["echo*", "write", "slow"] }
resources = { m = ["mock://a"] }
capabilities = ["read_only", "workspace_write", "network", "external_side_effect"]
require_approval = ["workspace_write"]
"""


class World:
    """A bridge and the toolings of `MOCK` (see the module docstring). Close it."""

    def __init__(self, tmp_path: Path, text: str = MOCK) -> None:
        self.config: Config = parse_config(text, tmp_path / "agent-host.toml", {})
        self.tmp_path = tmp_path
        self.bridge = Bridge()
        self.toolings = ToolingSet(self.config.toolings, nursery=self.bridge.nursery, log_dir=tmp_path)
        self._logs: list[AuditLog] = []

    def policy(self, agent: str = "tester") -> AgentPolicy:
        return AgentPolicy.resolve(self.config, agent, self.config.agents.get(agent))

    def tooling(self, name: str) -> Tooling:
        """Tooling `name`, created and connected on the loop."""
        return on_loop(self.bridge, self.toolings.connect, name)

    def session(self, agent: str = "tester", **kwargs: Any) -> GuestSession:
        return GuestSession(agent, self.bridge, self.toolings, self.policy(agent), **kwargs)

    def audit_log(self, *, include_arguments: bool = False) -> AuditLog:
        """The audit log `audit_lines` reads (closed with the world); with `include_arguments`, the
        arguments are written too (`[host] audit_arguments = true`)."""
        log = AuditLog(self.tmp_path / "audit.jsonl", include_arguments=include_arguments)
        self._logs.append(log)
        return log

    def audit_lines(self) -> list[dict[str, Any]]:
        path = self.tmp_path / "audit.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def close(self) -> None:
        self.bridge.close(self.toolings.aclose)
        for log in self._logs:
            log.close()


def on_loop(bridge: Bridge, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
    """`fn(*args)` run on the bridge's loop, within `WAIT`."""

    def hang() -> ToolingError:
        return ToolingError(ErrorCode.TIMEOUT, "the test waited too long")

    return bridge.call(fn, *args, timeout=WAIT, on_timeout=hang)


def small_inbox() -> Inbox:
    return Inbox(capacity=8, max_open_calls=2, max_subscriptions=2)


def admit(
    admission: Admission, tooling: Tooling, name: str, arguments: str, lookup: Callable[[str], ToolSpec]
) -> AdmittedCall:
    """Admission's checks of a call in their order (`precheck`, then `admit_with` the spec `lookup` gives),
    as `SessionCore` makes them."""
    return admission.admit_with(tooling, name, arguments, admission.precheck(tooling, name, arguments), lookup(name))


def approve(admission: Admission, call: AdmittedCall, decide: Callable[[ApprovalRequest], Decision]) -> None:
    """Approval as `SessionCore` asks for it: `decide` is asked only about a call that needs approval."""
    if call.to_approve:
        admission.decided(call, decide(admission.approval_request(call)))
