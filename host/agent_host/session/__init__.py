"""What one running guest can do, as plain Python: `GuestSession` and the parts it delegates to.

- `core`: `SessionCore`, one agent's operations as coroutines on the bridge loop (checks, bounds, audit);
- `guest_session`: `GuestSession`, a guest's handles, inbox, calls and subscriptions: a thin client of the core;
- `admission`: the checks before a call, then approval; what the agent may see;
- `calls`: asynchronous calls and how a result is shaped for the guest;
- `subscriptions`: through the toolings' shared `Watchers`; `questions`: a server's, to the guest;
- `deadline`: every bounded wait, and its one message; `guest_log`: the guest's `log`;
- `audit`: audit spans (`audit_log` the file, `audit_line` a line's bounds, `audit_budget` what a
  run or a client may write); `cassette`, `tape_values`, `recorded`: record and replay.

Imports neither wasmtime nor mcp.
"""

from agent_host.model import CallOutcome as CallOutcome
from agent_host.session.admission import Admission as Admission
from agent_host.session.admission import AdmittedCall as AdmittedCall
from agent_host.session.admission import parse_arguments as parse_arguments
from agent_host.session.calls import call_outcome as call_outcome
from agent_host.session.core import APPROVAL_TIMEOUT as APPROVAL_TIMEOUT
from agent_host.session.core import CONNECT_GRACE as CONNECT_GRACE
from agent_host.session.core import Caller as Caller
from agent_host.session.core import SessionCore as SessionCore
from agent_host.session.guest_log import LOG_LEVELS as LOG_LEVELS
from agent_host.session.guest_log import MAX_LOG_MESSAGE as MAX_LOG_MESSAGE
from agent_host.session.guest_session import GuestSession as GuestSession
from agent_host.session.guest_session import Handle as Handle
from agent_host.session.guest_session import LogSink as LogSink
from agent_host.session.subscriptions import RELEASE_TIMEOUT as RELEASE_TIMEOUT
from agent_host.session.subscriptions import SubscriptionKind as SubscriptionKind

__all__ = (
    "APPROVAL_TIMEOUT",
    "CONNECT_GRACE",
    "LOG_LEVELS",
    "MAX_LOG_MESSAGE",
    "RELEASE_TIMEOUT",
    "Admission",
    "AdmittedCall",
    "CallOutcome",
    "Caller",
    "GuestSession",
    "Handle",
    "LogSink",
    "SessionCore",
    "SubscriptionKind",
    "call_outcome",
    "parse_arguments",
)
