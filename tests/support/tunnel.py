"""A real forwarded TCP port, the shape of `ssh -L LOCAL:127.0.0.1:PORT`.

The browser talks to the forwarder's port, so its `Host` and `Origin` name a port the
service does not listen on, exactly as through an SSH tunnel.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def forwarded_port(target_port: int, target_host: str = "127.0.0.1") -> Iterator[int]:
    """Listen on a free loopback port and forward every connection to the target."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stopping = threading.Event()
    open_sockets: list[socket.socket] = []

    def accept_loop() -> None:
        while not stopping.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection((target_host, target_port))
            open_sockets.extend((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    acceptor = threading.Thread(target=accept_loop, daemon=True)
    acceptor.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stopping.set()
        acceptor.join(2)
        listener.close()
        for sock in open_sockets:
            with contextlib.suppress(OSError):
                sock.close()
