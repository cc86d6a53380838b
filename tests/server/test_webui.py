"""Every row of API.md "Web UI serving", against a real socket."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

IMMUTABLE = "public, max-age=31536000, immutable"


async def test_existing_asset_is_immutable_with_its_type(client: TestClient) -> None:
    response = await client.get("/_assets/app-3f2a1b.js", headers={"Accept-Encoding": "identity"})
    assert response.status == 200
    assert await response.text() == "console.log('embedded')"
    assert response.headers["Content-Type"].startswith("text/javascript")
    assert response.headers["Cache-Control"] == IMMUTABLE

    css = await client.get("/_assets/style-9c8d7e.css")
    assert css.headers["Content-Type"].startswith("text/css")
    font = await client.get("/_assets/font-1a2b3c.woff2")
    assert font.headers["Content-Type"] == "font/woff2"
    assert await font.read() == bytes([0, 1, 2, 255])


async def test_precompressed_sibling_is_used_when_accepted(client: TestClient) -> None:
    response = await client.get(
        "/_assets/app-3f2a1b.js", headers={"Accept-Encoding": "gzip"}, auto_decompress=False
    )
    assert response.status == 200
    assert response.headers["Content-Encoding"] == "gzip"
    assert response.headers["Content-Type"].startswith("text/javascript")
    import gzip

    assert gzip.decompress(await response.read()) == b"console.log('embedded')"


@pytest.mark.parametrize("path", ["/_assets/old.js", "/_assets/old.css", "/_assets/missing"])
async def test_missing_asset_is_empty_404_no_store(client: TestClient, path: str) -> None:
    response = await client.get(path)
    assert response.status == 404
    assert response.headers["Cache-Control"] == "no-store"
    assert await response.read() == b""


async def test_service_worker_is_revalidated_javascript(client: TestClient) -> None:
    response = await client.get("/sw.js")
    assert response.status == 200
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["Content-Type"].startswith("text/javascript")


@pytest.mark.parametrize(
    "path", ["/", "/index.html", "/workspace/x.js", "/assets/old.js", "/sessions/abc", "/a.b.c"]
)
async def test_other_paths_get_index_with_csp(client: TestClient, path: str) -> None:
    response = await client.get(path)
    assert response.status == 200
    assert "embedded" in await response.text()
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["Content-Type"].startswith("text/html")
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")


def _directives(policy: str) -> dict[str, list[str]]:
    out = {}
    for item in policy.split(";"):
        name, *values = item.split()
        out[name] = values
    return out


async def test_csp_allows_scripts_only_from_self_behind_trusted_types(client: TestClient) -> None:
    response = await client.get("/")
    policy = _directives(response.headers["Content-Security-Policy"])
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]  # no unsafe-inline, unsafe-eval, wasm-unsafe-eval
    assert policy["connect-src"] == ["'self'"]  # same-origin ws: only, not any host
    assert policy["require-trusted-types-for"] == ["'script'"]
    assert sorted(policy["trusted-types"]) == ["desk-sw", "dompurify"]
    assert all("unsafe-eval" not in v for values in policy.values() for v in values)


async def test_root_files_of_the_build_are_served(client: TestClient) -> None:
    response = await client.get("/manifest.webmanifest")
    assert response.status == 200
    assert await response.json(content_type=None) == {"name": "Desk"}


@pytest.mark.parametrize(
    "raw",
    [
        "/_assets/../index.html",
        "/_assets/%2e%2e/index.html",
        "/_assets/%2E%2E/%2E%2E/secret.txt",
        "/_assets/..%2f..%2fsecret.txt",
        "/_assets/%252e%252e/secret.txt",
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/_assets/..%5c..%5csecret.txt",
        "/_assets/app-3f2a1b.js%00.html",
    ],
)
async def test_traversal_is_404_and_never_leaks(client: TestClient, raw: str) -> None:
    # A raw request line: HTTP clients (and browsers) would normalise the dots away.
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(f"GET {raw} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    assert b"outside the build" not in answer
    assert answer.startswith(b"HTTP/1.1 404"), (raw, answer[:80])


async def test_unknown_api_route_is_json_404(client: TestClient, auth: dict[str, str]) -> None:
    for method, path in [("GET", "/api/nope"), ("POST", "/api/x/y"), ("DELETE", "/api/")]:
        response = await client.request(method, path, headers=auth)
        assert response.status == 404
        body = await response.json()
        assert body["error"]["type"] == "route.not_found"
        assert "nope" in body["error"]["message"] or path in body["error"]["message"]


async def test_random_paths_never_escape_or_fail(client: TestClient) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    segments = st.lists(
        st.sampled_from(["..", ".", "_assets", "assets", "%2e%2e", "%2f", "secret.txt", "x", "%00"])
        | st.text(alphabet="abc./%25\\", max_size=6),
        max_size=6,
    )
    paths: list[str] = []

    @settings(max_examples=150, suppress_health_check=list(HealthCheck), deadline=None)
    @given(segments)
    def collect(parts: list[str]) -> None:
        paths.append("/" + "/".join(parts))

    collect()
    for raw in paths:
        reader, writer = await asyncio.open_connection(client.host, client.port)
        writer.write(f"GET {raw} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        answer = await reader.read()
        writer.close()
        assert b"outside the build" not in answer, raw
        status = answer[9:12]
        assert status in (b"200", b"404", b"400"), (raw, answer[:60])


async def test_asset_of_a_later_build_is_served(client: TestClient, web_dist: Path) -> None:
    (web_dist / "_assets" / "app-new999.js").write_text("console.log('rebuilt')")
    response = await client.get("/_assets/app-new999.js")
    assert response.status == 200
    assert await response.text() == "console.log('rebuilt')"
    assert response.headers["Cache-Control"] == IMMUTABLE


async def test_an_etag_revalidates_to_304_and_head_sends_the_length_without_a_body(
    client: TestClient,
) -> None:
    first = await client.get("/")
    etag = first.headers["ETag"]
    again = await client.get("/workspace/x", headers={"If-None-Match": etag})
    assert again.status == 304
    assert again.headers["Cache-Control"] == "no-cache"
    head = await client.head("/_assets/app-3f2a1b.js", headers={"Accept-Encoding": "identity"})
    assert head.status == 200
    assert head.headers["Content-Length"] == str(len("console.log('embedded')"))
    assert await head.read() == b""


async def test_brotli_refused_with_q0_falls_back(client: TestClient) -> None:
    response = await client.get(
        "/_assets/app-3f2a1b.js",
        headers={"Accept-Encoding": "br;q=0, gzip;q=0"},
        auto_decompress=False,
    )
    assert "Content-Encoding" not in response.headers
    assert await response.text() == "console.log('embedded')"
