"""`agent_host.serve.feed.Feed`: bounded by bytes, dropping with one marker per gap, in order.

Log lines forwarded to a client are bounded by bytes, not by count, so a client that never reads
cannot grow the server.
"""

from __future__ import annotations

import anyio
import anyio.to_thread

from agent_host.serve.feed import Feed

WAIT = 10.0
"""Seconds a test may wait for the feed (a bound, not a synchronisation)."""


def test_a_consumer_that_does_not_read_holds_at_most_the_budget_then_one_marker_per_gap() -> None:
    async def main() -> tuple[list[str], int]:
        delivered: list[str] = []
        with Feed[str](10_000, len, lambda n: f"<{n} dropped>") as feed:

            def produce(first: int, last: int) -> None:  # a worker thread, as a guest's is
                for i in range(first, last):
                    feed.push(f"{i:04d}" + "x" * 996)  # 1,000 bytes each: 10 fit

            await anyio.to_thread.run_sync(produce, 0, 50)  # nobody reads yet
            held = feed.held
            got_ten = anyio.Event()

            async def sink(item: str) -> None:
                delivered.append(item)
                if len(delivered) == 10:  # the ten that fitted
                    got_ten.set()

            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(feed.forward, sink)
                    await got_ten.wait()
                    await anyio.to_thread.run_sync(produce, 50, 52)  # the marker comes before the next one
                    feed.close()
        return delivered, held

    delivered, held = anyio.run(main)
    assert held == 10_000
    assert [item[:4] for item in delivered] == [f"{i:04d}" for i in range(10)] + ["<40 "] + ["0050", "0051"]
    assert delivered[10] == "<40 dropped>"


def test_an_empty_item_costs_its_overhead_and_the_end_carries_the_last_marker() -> None:
    async def main() -> list[str]:
        delivered: list[str] = []
        with Feed[str](300, lambda item: len(item) + 100, lambda n: f"<{n} dropped>") as feed:

            def produce() -> None:
                for _ in range(10):
                    feed.push("")

            await anyio.to_thread.run_sync(produce)
            feed.close()
            await anyio.to_thread.run_sync(feed.push, "after the end")  # dropped silently

            async def sink(item: str) -> None:
                delivered.append(item)

            await feed.forward(sink)
        return delivered

    assert anyio.run(main) == ["", "", "", "<7 dropped>"]  # an empty line costs its overhead


def test_a_consumer_that_gives_up_learns_how_many_items_it_never_got() -> None:
    """What waited when the drain was cut is reported, not lost silently."""

    async def main() -> int:
        with Feed[str](3_000, len, lambda n: f"<{n} dropped>") as feed:

            def produce() -> None:
                for _ in range(5):  # 3 fit, 2 are dropped
                    feed.push("x" * 1000)

            await anyio.to_thread.run_sync(produce)
            stuck = anyio.Event()

            async def never_done(item: str) -> None:
                stuck.set()
                await anyio.sleep_forever()

            async with anyio.create_task_group() as tg:
                tg.start_soon(feed.forward, never_done)
                await stuck.wait()
                tg.cancel_scope.cancel()
            return feed.abandon()

    assert anyio.run(main) == 5  # the one cut mid-delivery, the 2 waiting, the 2 dropped
