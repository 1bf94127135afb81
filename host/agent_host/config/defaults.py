"""Default values of every setting the config file may leave out, each with its unit and purpose."""

from __future__ import annotations

from typing import Final

DEFAULT_FILE_NAME: Final = "agent-host.toml"
"""Looked up in the current folder when neither `--config` nor `AGENT_HOST_CONFIG` is given."""

ENV_CONFIG: Final = "AGENT_HOST_CONFIG"
"""Environment variable naming the config file."""

DEFAULT_REQUEST_TIMEOUT: Final = 30.0
"""Seconds a tooling request may take before it is cancelled."""

DEFAULT_CONNECT_TIMEOUT: Final = 30.0
"""Seconds to start (or reach) a server and complete the MCP handshake."""

DEFAULT_MAX_BACKOFF: Final = 10.0
"""Longest wait, in seconds, between attempts to reach a server that keeps failing."""

DEFAULT_MEMORY: Final = 256 * 1024 * 1024
"""Bytes of linear memory a guest may use (a componentize-py guest needs ~13 MiB to start)."""

DEFAULT_CPU_TIME: Final = 60.0
"""Seconds of CPU time (time running wasm, not waiting in the host) a guest's `run` may use."""

DEFAULT_RUN_TIMEOUT: Final = 300.0
"""Wall-clock seconds a guest's `run` may take, waits included."""

DEFAULT_MAX_ARGUMENT_BYTES: Final = 1024 * 1024
"""Bytes of tool arguments (JSON text) one call may send."""

DEFAULT_MAX_RESULT_BYTES: Final = 16 * 1024 * 1024
"""Bytes of one tool result (JSON) or resource content a guest may receive."""

DEFAULT_MAX_PENDING_BYTES: Final = 64 * 1024 * 1024
"""Bytes the host holds for one guest: the arguments of its open calls (text and parsed value) and
its undelivered envelopes; `call-tool` and `subscribe-*` answer `limit-exceeded` beyond."""

DEFAULT_MAX_OPEN_FILES: Final = 256
"""Host file descriptors one guest may hold through its granted folders (`dirs`): open files and
folders, directory streams (`[host]` / `[agents.NAME] max_open_files`); beyond, it is stopped."""

DEFAULT_INBOX_SIZE: Final = 1024
"""Envelopes one guest's inbox holds."""

DEFAULT_MAX_OPEN_CALLS: Final = 256
"""Calls one guest may have open at once."""

DEFAULT_MAX_SUBSCRIPTIONS: Final = 256
"""Subscriptions one guest may hold at once."""

DEFAULT_RECV_TIMEOUT: Final = 60.0
"""Seconds `inbox.recv` waits when the guest passes no timeout."""

DEFAULT_SERVER_LOG_MAX: Final = 8 * 1024 * 1024
"""Bytes of a stdio server's stderr log before it is rotated (`[host] server_log_max`)."""

DEFAULT_SERVER_LOG_KEEP: Final = 1
"""Rotated stderr logs kept per stdio server (`[host] server_log_keep`)."""

DEFAULT_AUDIT_LOG_MAX: Final = 64 * 1024 * 1024
"""Bytes of the audit log before it is rotated (`[host] audit_log_max`)."""

DEFAULT_AUDIT_LOG_KEEP: Final = 5
"""Rotated audit logs kept (`[host] audit_log_keep`): AUDIT.1 (newest) ... AUDIT.5."""

DEFAULT_AUDIT_RUN_MAX: Final = 4 * 1024 * 1024
"""Bytes of audit lines one agent run may write (`[host] audit_run_max`): 1/96 of the default
history (6 files of 64 MiB); beyond, its lines are counted, not written."""

DEFAULT_AUDIT_CLIENT_MAX: Final = 4 * 1024 * 1024
"""Bytes of audit lines one client of `agent-host serve` may write at once (`[serve]
audit_client_max`): 1/96 of the default history; refilled at `DEFAULT_AUDIT_CLIENT_RATE`."""

DEFAULT_AUDIT_CLIENT_RATE: Final = 4 * 1024
"""Bytes per second a `serve` client's audit allowance refills (`[serve] audit_client_rate`): about
14 MiB an hour, so one client alone takes over a day to fill the default history."""

DEFAULT_GUEST_OUTPUT_MAX: Final = 16 * 1024 * 1024
"""Bytes of stdout, and as many of stderr, one guest run may write (`[host] guest_output_max`);
beyond, its output is dropped (a notice says so)."""

DEFAULT_MAX_CALL_TIME: Final = 600.0
"""Seconds a tool call may take in all, however often it reports progress (`max_call_time`)."""

DEFAULT_PROVIDER_TIMEOUT: Final = 60.0
"""Seconds one chat with a model provider may take in all, retries included (a stream: until its
first piece, then between two pieces) (`[provider.NAME] timeout`)."""

DEFAULT_PROVIDER_RETRIES: Final = 2
"""Times the provider's SDK sends a request again after a connection error, a 408, 409, 429 or 5xx
(`[provider.NAME] max_retries`), waiting as the answer's `retry-after` says, else backing off."""

DEFAULT_OPENAI_URL: Final = "https://api.openai.com/v1"
"""Where a `kind = "openai"` provider sends its requests unless `base_url` says otherwise."""

DEFAULT_ANTHROPIC_URL: Final = "https://api.anthropic.com"
"""Where a `kind = "anthropic"` provider sends its requests unless `base_url` says otherwise."""

DEFAULT_ANTHROPIC_MAX_TOKENS: Final = 4096
"""Tokens an Anthropic model may write when the request names no `max_tokens` (the Messages API
requires one) (`[provider.NAME] max_tokens`)."""

DEFAULT_MOCK_MODEL: Final = "mock"
"""The model a mock provider says it is when its table names none."""
