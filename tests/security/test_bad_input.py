"""Every bad input at the HTTP boundary is a 4xx with nothing written, never a 500: the one
body parser (deep nesting, 5,000-digit integers, lone surrogates, NaN/Infinity, not UTF-8)
and the headers auth reads (Authorization, Cookie as raw bytes). Property-based: whatever
hypothesis sends, the answer is below 500."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.server.errors import BodyError, parse_json_body
from tests.support.app import TOKEN

NASTY_BODIES = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"title": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"title": "x", "n": ' + b"9" * 5000 + b"}",
    b'{"title": "\\ud800"}',
    b'{"\\udfff": 1}',
    b'{"title": NaN}',
    b'{"title": -Infinity}',
    b'{"value": 1e999}',
    b'{"title": "\xff\xfe"}',
    b"\xef\xbb\xbf{}",
]

# (method, path): every route that reads a JSON body (the session ones on a real session).
BODY_ROUTES = [
    ("POST", "/api/session"),
    ("PATCH", "/api/session/{sid}"),
    ("POST", "/api/session/{sid}/prompt"),
    ("PATCH", "/api/session/{sid}/message/msg_none"),
    ("POST", "/api/session/{sid}/permission/call_1"),
    ("PUT", "/api/ui/prefs/theme"),
    ("PUT", "/api/config/provider"),
    ("PATCH", "/api/pty/pty_none"),
]


async def new_session(client: TestClient, auth: dict[str, str], tmp_path: Path) -> str:
    response = await client.post(
        "/api/session", json={"title": "t", "directory": str(tmp_path)}, headers=auth
    )
    assert response.status in (200, 201), await response.text()
    return str((await response.json())["data"]["id"])


async def answers(
    client: TestClient, auth: dict[str, str], sid: str, body: bytes
) -> list[tuple[str, int]]:
    found = []
    for method, path in BODY_ROUTES:
        response = await client.request(
            method,
            path.format(sid=sid),
            data=body,
            headers={**auth, "Content-Type": "application/json"},
        )
        found.append((f"{method} {path}", response.status))
        text = await response.text()
        assert "Traceback" not in text
    return found


@pytest.mark.parametrize("body", NASTY_BODIES, ids=range(len(NASTY_BODIES)))
def test_the_body_parser_refuses_each_nasty_body_with_a_reason(body: bytes) -> None:
    with pytest.raises(BodyError):
        parse_json_body(body)


async def test_each_nasty_body_is_a_4xx_on_every_route_and_changes_nothing(
    api: TestClient, auth: dict[str, str], tmp_path: Path
) -> None:
    client = api
    sid = await new_session(client, auth, tmp_path)
    before = await (await client.get("/api/session", headers=auth)).json()
    for body in NASTY_BODIES:
        statuses = await answers(client, auth, sid, body)
        assert [item for item in statuses if not 400 <= item[1] < 500] == [], body[:40]
    after = await (await client.get("/api/session", headers=auth)).json()
    assert after == before


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def as_body(value: object) -> bytes:
    return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")


def collect_bodies() -> list[bytes]:
    bodies: list[bytes] = []

    @settings(max_examples=120, suppress_health_check=list(HealthCheck), deadline=None)
    @given(
        st.one_of(
            st.binary(max_size=64),
            json_values.map(as_body),
            st.dictionaries(
                st.sampled_from(["title", "directory", "text", "value", "reply", "base_url"]),
                json_values,
            ).map(as_body),
        )
    )
    def collect(body: bytes) -> None:
        bodies.append(body)

    collect()
    return bodies


async def test_any_body_on_any_route_is_never_a_500(
    api: TestClient, auth: dict[str, str], tmp_path: Path
) -> None:
    client = api
    sid = await new_session(client, auth, tmp_path)
    for body in collect_bodies():
        statuses = await answers(client, auth, sid, body)
        assert [item for item in statuses if item[1] >= 500] == [], body[:80]


# --- headers, sent as raw bytes (a client library would refuse to send them) -------------


async def raw_status(client: TestClient, header: bytes) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
    writer.write(
        b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        + header
        + b"\r\n\r\n"
    )
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 400
    return status, answer


NASTY_HEADERS = [
    b"Authorization: Bearer \xff\xfe\xfd",
    b"Authorization: Bearer " + TOKEN.encode()[:-1] + b"\xe9",
    b"Authorization: \xc3\x28",
    b"Cookie: desk_token=\xff\xfe",
    b"Cookie: desk_session=\xff; desk_token=\x80\x81",
    b"Cookie: \xff=\xfe",
]


@pytest.mark.parametrize("header", NASTY_HEADERS, ids=range(len(NASTY_HEADERS)))
async def test_a_non_utf8_authorization_or_cookie_header_is_a_4xx(
    client: TestClient, header: bytes
) -> None:
    status, answer = await raw_status(client, header)
    assert 400 <= status < 500, answer[:300]
    assert b"Traceback" not in answer


def collect_headers() -> list[bytes]:
    headers: list[bytes] = []
    value = st.binary(max_size=48).map(
        lambda raw: raw.replace(b"\r", b"").replace(b"\n", b"").replace(b"\0", b"")
    )

    @settings(max_examples=150, suppress_health_check=list(HealthCheck), deadline=None)
    @given(st.sampled_from([b"Authorization: Bearer ", b"Authorization: ", b"Cookie: "]), value)
    def collect(name: bytes, raw: bytes) -> None:
        headers.append(name + raw)

    collect()
    return headers


async def test_any_authorization_or_cookie_header_is_never_a_500(client: TestClient) -> None:
    for header in collect_headers():
        status, answer = await raw_status(client, header)
        assert status < 500, (header, answer[:300])
