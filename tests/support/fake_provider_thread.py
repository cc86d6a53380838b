"""The strict fake provider for synchronous tests (Playwright, subprocess services).

`FakeProvider` is an aiohttp server and wants an event loop; sync Playwright owns the test's
thread. This runs the fake on its own loop in a daemon thread and hands out thread-safe
handles: scripting replies, opening a gate that holds a stream mid-answer, reading the
recorded requests. The fake itself (and every strict rule it checks) is unchanged.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from tests.support.fake_provider import FakeProvider, RecordedRequest, Reply

T = TypeVar("T")


class Gate:
    """An `asyncio.Event` of the fake's loop, opened from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
        self._loop = loop
        self.event = event

    def open(self) -> None:
        self._loop.call_soon_threadsafe(self.event.set)


class ThreadedFakeProvider:
    def __init__(self, fake: FakeProvider, loop: asyncio.AbstractEventLoop) -> None:
        self.fake = fake
        self._loop = loop

    @property
    def base_url(self) -> str:
        return self.fake.base_url

    def _call(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(make(), self._loop).result(10)

    def script(self, *replies: Reply) -> None:
        async def add() -> None:
            self.fake.script(*replies)

        self._call(add)

    def gate(self) -> Gate:
        """A closed gate: set it as a reply's `gate` to hold that stream until `open()`."""

        async def make() -> asyncio.Event:
            return asyncio.Event()

        return Gate(self._loop, self._call(make))

    def requests(self) -> list[RecordedRequest]:
        async def read() -> list[RecordedRequest]:
            return list(self.fake.requests)

        return self._call(read)

    @property
    def invalid_count(self) -> int:
        async def read() -> int:
            return self.fake.invalid_count

        return self._call(read)


@contextmanager
def threaded_fake_provider(**options: Any) -> Iterator[ThreadedFakeProvider]:
    """`with threaded_fake_provider() as fake:` a started strict fake on its own thread."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="fake-provider", daemon=True)
    thread.start()
    ready.wait(10)

    async def make() -> FakeProvider:
        fake = FakeProvider(**options)
        await fake.start()
        return fake

    fake = asyncio.run_coroutine_threadsafe(make(), loop).result(10)
    try:
        yield ThreadedFakeProvider(fake, loop)
    finally:
        asyncio.run_coroutine_threadsafe(fake.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
