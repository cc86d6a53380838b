"""Typed keys for what the service keeps on its aiohttp Application."""

from __future__ import annotations

from aiohttp import web

from desktop.agent.engine import Engine
from desktop.config import Settings
from desktop.events.fanout import Fanout
from desktop.server.inflight import InFlight
from desktop.store.db import Store

SETTINGS = web.AppKey("settings", Settings)
EVENTS = web.AppKey("events", Fanout)
TOKEN = web.AppKey("token", str)
STORE = web.AppKey("store", Store)
INFLIGHT = web.AppKey("inflight", InFlight)
ENGINE = web.AppKey("engine", Engine)  # the session engine: the routes read its parts
