"""The gateway-wide budget for the bytes of large request frames being read (no broker needed)."""

from __future__ import annotations

import asyncio

import pytest

from policy.exceptions import FrameTimeoutError
from policy.protocol import FrameBudget, read_frame


def test_small_frames_never_reserve_or_wait() -> None:
    async def scenario() -> int:
        budget = FrameBudget(max_bytes=100_000, small_bytes=1000)
        budget.used = budget.max_bytes  # spent by others
        return await asyncio.wait_for(budget.acquire(1000), 1)

    assert asyncio.run(scenario()) == 0


def test_a_large_frame_waits_until_the_budget_has_room() -> None:
    async def scenario() -> list[str]:
        budget = FrameBudget(max_bytes=3000, small_bytes=100)
        order: list[str] = []
        first = await budget.acquire(2000)
        order.append("first")

        async def second() -> None:
            held = await budget.acquire(2000)
            order.append("second")
            budget.release(held)

        task = asyncio.create_task(second())
        await asyncio.sleep(0)  # let it try: 2,000 + 2,000 is over 3,000
        assert budget.used == 2000 and order == ["first"]
        budget.release(first)
        await asyncio.wait_for(task, 1)
        assert budget.used == 0
        return order

    assert asyncio.run(scenario()) == ["first", "second"]


def test_a_frame_larger_than_the_budget_takes_all_of_it() -> None:
    async def scenario() -> int:
        budget = FrameBudget(max_bytes=3000, small_bytes=100)
        return await budget.acquire(10_000)

    assert asyncio.run(scenario()) == 3000


def test_read_frame_times_out_while_the_budget_is_spent_and_gives_back_what_it_reserved() -> None:
    async def scenario() -> FrameBudget:
        budget = FrameBudget(max_bytes=3000, small_bytes=100)
        budget.used = 2500
        reader = asyncio.StreamReader()
        reader.feed_data((1000).to_bytes(4, "big") + b"x" * 1000)
        with pytest.raises(FrameTimeoutError):
            await read_frame(reader, max_bytes=10_000, idle_timeout_s=1, frame_timeout_s=0.2, budget=budget)
        budget.used = 0
        reader = asyncio.StreamReader()
        reader.feed_data((1000).to_bytes(4, "big") + b"y" * 1000)
        assert await read_frame(reader, max_bytes=10_000, idle_timeout_s=1, frame_timeout_s=1, budget=budget) \
            == b"y" * 1000
        return budget

    assert asyncio.run(scenario()).used == 0
