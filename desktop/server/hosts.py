"""DNS-rebinding defence: answer only requests addressed to a loopback host name, or to one
`DESK_ALLOWED_HOSTS` names.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from aiohttp import web

from desktop.server.errors import Handler, error_response

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


_HOST = re.compile(
    r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_.])?))"
    r"(?::(?P<port>[0-9]{1,5}))?"
)


def host_name(host_header: str) -> str:
    """The name part of a Host header: no port, no IPv6 brackets, lower case; "" when the
    header is not exactly `name[:port]` or `[ipv6][:port]` (it then names no host)."""
    match = _HOST.fullmatch(host_header.strip().lower())
    if match is None:
        return ""
    if match["ipv6"] is not None:
        return match["ipv6"]
    return match["name"].rstrip(".")


def is_loopback_name(name: str) -> bool:
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class HostPolicy:
    """Which Host names the service answers: loopback names plus the configured extras."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        items = {item.strip() for item in allowed if item.strip()}
        self.allow_any = "*" in items
        self.extras = frozenset(host_name(item) for item in items - {"*"}) - {""}

    def allows(self, host_header: str | None) -> bool:
        if self.allow_any:
            return True
        if not host_header:
            return False
        name = host_name(host_header)
        return bool(name) and (is_loopback_name(name) or name in self.extras)


def make_host_middleware(policy: HostPolicy) -> web.middleware:  # type: ignore[valid-type]
    @web.middleware
    async def host_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if policy.allows(request.headers.get("Host")):
            return await handler(request)
        return error_response(
            403,
            "host.forbidden",
            "This Desk service answers only requests addressed to a loopback host "
            "(127.0.0.1, localhost, [::1]); list other host names in DESK_ALLOWED_HOSTS.",
        )

    return host_middleware
