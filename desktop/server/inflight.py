"""Counts requests being answered, so a stopping service can let them finish.

aiohttp's own graceful shutdown cancels a handler that is still reading its body; the
service instead stops listening, waits here for ordinary requests (not event streams or
WebSockets, which are closed by the shutdown hooks) and only then cleans up.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from desktop.server.errors import Handler


class InFlight:
    def __init__(self) -> None:
        self.count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @staticmethod
    def is_long_lived(request: web.Request) -> bool:
        return (
            request.headers.get("Upgrade", "").lower() == "websocket"
            or request.path == "/api/event"
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.is_long_lived(request):
            return await handler(request)
        self.count += 1
        self._idle.clear()
        try:
            return await handler(request)
        finally:
            self.count -= 1
            if self.count == 0:
                self._idle.set()

    async def wait_idle(self, seconds: float) -> bool:
        """True when every ordinary request finished within `seconds`."""
        try:
            await asyncio.wait_for(self._idle.wait(), seconds)
        except TimeoutError:
            return False
        return True
