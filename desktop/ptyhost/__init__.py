"""The PTY host: the daemon that owns every terminal and outlives the service.

Two processes use this package, each through its own modules.

Service side (desktop.server, desktop.jobs, desktop.app):
- client.py: PtyHostClient, the control connection (requests, answers, host events);
- launcher.py: ensure_host (connect, or start the daemon first), stop_host, shutdown_pty_host;
- handoff_client.py: hand_off (give a checked WebSocket upgrade's socket to the daemon) and
  accept_key.

Daemon side (`desk pty-host`):
- daemon.py: serving (lock, sockets, registration, signals, stop and save);
- host.py: PtyHost, the daemon's state (terminals, connected services, idle exit);
- connection.py: a service's control connection (the secret hello, then requests);
- operations.py: the operation table (op name -> handler) and its answers;
- handoff_listener.py: takes handed-off sockets and serves them as WebSockets (websocket.py,
  wsframe.py);
- terminal.py (process, ring, screen, reader/writer, lifecycle), attachment.py (replay, flow
  control, roles), flow.py, timers.py, spec.py (create request -> TerminalSpec), revive.py and
  autosave.py (saving and reviving), jobs.py (the agent's commands, the `job_*` ops), ring.py,
  output_scan.py, and screen/ (the screen model, door: ScreenModel).

Both sides: protocol.py (the wires and PtyHostError), validation.py (the limits and parsers
both apply), hostfiles.py (where the daemon's files are). Bookkeeping shared with the
service manager (pid liveness, file locks, logs, registration records) is in desktop.process.
"""
