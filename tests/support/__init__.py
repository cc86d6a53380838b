"""Helpers shared by every test suite and by bench/, one module per job.

Conftests hold fixtures only and import their helpers from here; no test imports another
package's conftest or another test module.

- wait: the one polling helper (`wait_until` blocking, `wait_for` on the event loop)
- reader: waiting on a terminal stream's output and messages, whatever carries it
- websocket: the WebSocket reader for `/api/pty/{id}/connect`
- host: a real PTY host per test (fixtures `start_host`, `host`), stopping it, its readers
- terminals: terminal routes of the in-process app (create, connect, error bodies)
- app: the in-process app's test token and aiohttp's client factory
- service: a real `desk serve` subprocess (restart, stop, kill -9, API calls, emptied for
  the next test when a module shares it)
- runner: the agent in an in-process service on the strict fake (prompt, wait on the log)
- desk: the `desk` CLI on private dirs, and API calls to the service it starts
- xvfb: a private X display; window: the `desk` window under it with its probe
- chromium: Debian's Chromium for Playwright and signing a page in
- chat: sessions and messages published through the service's test hook
- sessions, sse, fake_provider, tunnel: the session store, SSE frames, the strict fake
  provider, an SSH-style forwarded port
"""
