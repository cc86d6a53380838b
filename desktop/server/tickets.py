"""Single-use tickets that let a browser open a terminal WebSocket (it cannot set headers).

A ticket is bound to one terminal, expires after `ttl` seconds and is consumed by its first
use, whether that use succeeds or not.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

TICKET_TTL_SECONDS = 60.0
MAX_OUTSTANDING = 10_000


@dataclass(frozen=True, slots=True)
class _Ticket:
    terminal_id: str
    expires: float


class TicketStore:
    def __init__(
        self, ttl: float = TICKET_TTL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self._tickets: dict[str, _Ticket] = {}

    def __len__(self) -> int:
        return len(self._tickets)

    def issue(self, terminal_id: str) -> str:
        now = self.clock()
        self._purge(now)
        if len(self._tickets) >= MAX_OUTSTANDING:
            # Drop the oldest: a flood of unused tickets must not grow memory.
            oldest = next(iter(self._tickets))
            del self._tickets[oldest]
        ticket = secrets.token_urlsafe(32)
        self._tickets[ticket] = _Ticket(terminal_id, now + self.ttl)
        return ticket

    def redeem(self, ticket: str, terminal_id: str) -> bool:
        """True when `ticket` is valid for `terminal_id`; any ticket is consumed by this call."""
        entry = self._tickets.pop(ticket, None)
        if entry is None:
            return False
        return entry.terminal_id == terminal_id and self.clock() < entry.expires

    def _purge(self, now: float) -> None:
        expired = [key for key, entry in self._tickets.items() if entry.expires <= now]
        for key in expired:
            del self._tickets[key]
