"""The service's live event fan-out. It lives in `desktop.events.fanout` (the session engine
publishes into it and must not import the server); this module keeps the server's names."""

from __future__ import annotations

from desktop.events.fanout import (
    HEARTBEAT_SECONDS,
    SUBSCRIBER_QUEUE_LIMIT,
    Fanout,
    Subscription,
    connected_event,
    encode_event,
)

EventBus = Fanout

__all__ = [
    "HEARTBEAT_SECONDS",
    "SUBSCRIBER_QUEUE_LIMIT",
    "EventBus",
    "Fanout",
    "Subscription",
    "connected_event",
    "encode_event",
]
