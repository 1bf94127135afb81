"""One `subscriptions/listen` stream of a 2026-07-28 connection, run by its own task.

`Listen.run` opens the stream for a `WatchSet` and sets `acked` once the server acknowledged it
(or failed: then `error` says why, and `failure()` gives the `ToolingError` for the subscriber);
events are handed to `on_event` in order. After the ack, a stream that ends or breaks reports the
connection lost (unless `stop()` was called). What the server did not honour is `unavailable`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
from mcp.client.subscriptions import SubscriptionLost
from mcp_types import SubscriptionFilter

from agent_host.errors import ErrorCode, ToolingError
from agent_host.toolings.base import WatchSet
from agent_host.toolings.mcp.errors import first_line

if TYPE_CHECKING:
    from agent_host.toolings.mcp.connection import McpConnection, OnEvent


class Listen:
    """One `subscriptions/listen` stream, run by its own task."""

    def __init__(self, conn: McpConnection, watch: WatchSet, on_event: OnEvent) -> None:
        self.conn = conn
        self.watch = watch
        self._on_event = on_event
        self.acked = anyio.Event()
        self.error: BaseException | None = None
        self.honored: SubscriptionFilter | None = None
        self._scope: anyio.CancelScope | None = None
        self._stopping = False

    async def run(self) -> None:
        watch = self.watch
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with self.conn.client.listen(
                    tools_list_changed=watch.tool_list,
                    resources_list_changed=watch.resource_list,
                    resource_subscriptions=sorted(watch.uris),
                ) as subscription:
                    self.honored = subscription.honored
                    missing = not_honoured(watch, subscription.honored)
                    if missing:
                        self.error = ToolingError(
                            ErrorCode.UNAVAILABLE,
                            f"tooling {self.conn.config.name!r}: the server does not honour subscriptions to {missing}",
                        )
                        return
                    self.acked.set()
                    async for event in subscription:
                        self._on_event(event)
                if not self._stopping:
                    self.conn.lost("the server closed the subscription stream")
        except SubscriptionLost:
            if self.acked.is_set() and not self._stopping:
                self.conn.lost("the subscription stream was lost")
            elif not self.acked.is_set():
                self.error = SubscriptionLost("the stream ended before the server acknowledged it")
        except Exception as exc:  # boundary: a failing listen becomes an error for the subscriber or a lost connection
            if not self.acked.is_set():
                self.error = exc
            elif not self._stopping:
                self.conn.lost(f"the subscription stream failed: {exc!r}")
        finally:
            self.acked.set()

    def stop(self) -> None:
        self._stopping = True
        if self._scope is not None:
            self._scope.cancel()

    def failure(self, timeout: float) -> ToolingError:
        name = self.conn.config.name
        if isinstance(self.error, ToolingError):
            return self.error
        if self.error is None:
            return ToolingError(
                ErrorCode.TIMEOUT,
                f"tooling {name!r}: the server did not acknowledge the subscription within {timeout:g} s",
            )
        return ToolingError(
            ErrorCode.UNAVAILABLE, f"tooling {name!r}: the server refused the subscription: {first_line(self.error)}"
        )


def not_honoured(watch: WatchSet, honored: SubscriptionFilter) -> str:
    missing = []
    if watch.tool_list and not honored.tools_list_changed:
        missing.append("tool list changes")
    if watch.resource_list and not honored.resources_list_changed:
        missing.append("resource list changes")
    absent = watch.uris - set(honored.resource_subscriptions or ())
    missing += sorted(absent)
    return ", ".join(missing)
