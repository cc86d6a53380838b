"""A PTY host of another protocol version (a real daemon whose constant is patched, as an
earlier Desk left running after an upgrade): the service is told at once, in a sentence
naming both versions, the pid and what to do; `stop_host` (`desk service stop --all`) has
it save and exit over SIGTERM, and the next terminal starts a host of this version."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.process.liveness import is_alive
from desktop.ptyhost.hostfiles import read_host_registration
from desktop.ptyhost.launcher import (
    START_TIMEOUT,
    ensure_host,
    stop_host,
)
from desktop.ptyhost.protocol import PROTOCOL_VERSION, PtyHostUnavailable
from tests.support.app import TOKEN
from tests.support.host import SHELL
from tests.support.host import stop_host as stop_for_good
from tests.support.other_version_host import OLD, start_old_host


async def test_a_host_of_another_protocol_version_is_refused_at_once_naming_both_versions(
    settings: Settings,
) -> None:
    old = await asyncio.to_thread(start_old_host, settings)
    try:
        began = time.monotonic()
        with pytest.raises(PtyHostUnavailable) as refused:
            await ensure_host(settings)
        message = refused.value.message
        assert f"protocol version {OLD}" in message
        assert f"this Desk speaks version {PROTOCOL_VERSION}" in message
        assert f"pid {old}" in message
        assert "desk service stop --all" in message
        assert "did not start" not in message
        assert time.monotonic() - began < START_TIMEOUT / 3  # no wait for a host to register
        registration = read_host_registration(settings)
        assert registration is not None
        assert (registration.pid, registration.protocol) == (old, OLD)  # no second host
        assert is_alive(old)  # its terminals keep running
    finally:
        await stop_for_good(settings)


async def test_stopping_a_host_of_another_version_lets_the_next_terminal_start_a_current_one(
    settings: Settings,
) -> None:
    old = await asyncio.to_thread(start_old_host, settings)
    try:
        result = await stop_host(settings)
        assert result == {"stopped": True, "saved": None, "protocol": OLD}
        assert not is_alive(old)
        client = await ensure_host(settings)
        try:
            assert client.pid != old
            assert client.registration.protocol == PROTOCOL_VERSION
        finally:
            await client.close()
    finally:
        await stop_for_good(settings)


async def test_opening_a_terminal_beside_a_host_of_another_version_answers_503_with_the_sentence(
    api: TestClient, settings: Settings
) -> None:
    old = await asyncio.to_thread(start_old_host, settings)
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        response = await api.post("/api/pty", json=SHELL, headers=headers)
        assert response.status == 503
        error = (await response.json())["error"]
        assert error["type"] == "pty.host_unavailable"
        assert f"protocol version {OLD}" in error["message"]
        assert f"speaks version {PROTOCOL_VERSION}" in error["message"]
        assert is_alive(old)
    finally:
        await stop_for_good(settings)
