"""Typed keys for what the service keeps on its aiohttp Application."""

from __future__ import annotations

from aiohttp import web

from desktop.agent.permissions import Permissions
from desktop.agent.runner import SessionRunner
from desktop.agent.service import SessionService
from desktop.config import Settings
from desktop.jobs.service import BackgroundWork
from desktop.server.events import EventBus
from desktop.server.inflight import InFlight
from desktop.store.db import Store

SETTINGS = web.AppKey("settings", Settings)
EVENTS = web.AppKey("events", EventBus)
TOKEN = web.AppKey("token", str)
STORE = web.AppKey("store", Store)
INFLIGHT = web.AppKey("inflight", InFlight)
SESSIONS = web.AppKey("sessions", SessionService)
PERMISSIONS = web.AppKey("permissions", Permissions)
RUNNER = web.AppKey("runner", SessionRunner)
BACKGROUND = web.AppKey("background", BackgroundWork)
