"""Work on untrusted text or values that may be large, kept off the event loop that serves everyone.

`run(fn, *args, size=n)` calls `fn(*args)` on the loop when `size` (the characters or bytes of the
text it works on, or `size_of` a parsed value) is at most `INLINE` (well under a millisecond of
work, less than handing it to a thread), else on a worker thread: at most `THREADS` at once per
event loop, behind a limiter of their own (they never wait behind other blocking work, nor it
behind them). Every check of untrusted text costs time linear in its size, so a worker ends soon: a
caller cancelled meanwhile waits for it (abandoning it would free its place while it still runs, and
clients hanging up would then pile up workers). `size_of(value)` counts the values of parsed JSON,
stopping at `COUNT_LIMIT`: its own cost is bounded whatever the value.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Final, TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

_T = TypeVar("_T")

INLINE: Final = 16 * 1024
"""Characters, bytes or values of work done on the loop itself (above: on a worker thread)."""

THREADS: Final = 2
"""Worker threads at once per event loop for work above `INLINE` (the work is CPU-bound)."""

COUNT_LIMIT: Final = INLINE + 1
"""Values `size_of` counts at most: enough to tell whether a value is above `INLINE`."""

_limiter: RunVar[anyio.CapacityLimiter] = RunVar("agent_host_off_loop_limiter")


def _workers() -> anyio.CapacityLimiter:
    """The limiter of this event loop's workers (made at its first use)."""
    try:
        return _limiter.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(THREADS)
        _limiter.set(limiter)
        return limiter


async def run(fn: Callable[..., _T], *args: object, size: int) -> _T:
    """`fn(*args)`: here when `size` is at most `INLINE`, else on a worker thread (see the module
    docstring). Raises what `fn` raises."""
    if size <= INLINE:
        return fn(*args)
    return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=_workers())


def size_of(value: object, limit: int = COUNT_LIMIT) -> int:
    """The values in `value` (parsed JSON: each container, key and scalar counts one, a string one
    per `INLINE` characters too), counted up to `limit` at most: bounded cost whatever `value` holds."""
    count = 0
    pending: list[Iterator[object]] = [iter((value,))]
    while pending and count < limit:
        item = next(pending[-1], _END)
        if item is _END:
            pending.pop()
            continue
        count += 1
        if isinstance(item, str):
            count += len(item) // INLINE
        elif isinstance(item, dict):
            pending.append(itertools.chain(item.keys(), item.values()))
        elif isinstance(item, list | tuple):
            pending.append(iter(item))
    return min(count, limit)


_END: Final = object()
"""Marks an iterator's end in `size_of`."""
