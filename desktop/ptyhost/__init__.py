"""The PTY host: the daemon that owns every terminal and outlives the service.

Two processes use this package. The daemon (`desk pty-host`, daemon.py) imports everything
here. The service (desktop.server) may import only its side of the boundary:

- client.py: PtyHostClient (control connection) and PtyAttachment (one per WebSocket);
- launcher.py: ensure_host (connect, or start the daemon first), stop_host, shutdown_pty_host
  (also used by desktop.app.service for `desk service stop --all` and the window's quit);
- protocol.py: frames, PtyHostError and PtyHostUnavailable (the one error type and shape);
- validation.py: the limits, patterns and parsers both sides apply (parse_attach_query,
  parse_client_text, MAX_DIMENSION, ...);
- hostfiles.py: where the daemon's socket, lock, log and registration are;
- handoff.py (`hand_off`): give an authenticated WebSocket's socket to the daemon;
- wsframe.py (`accept_key`): the server half of the WebSocket wire format.

Daemon side only: daemon.py (connections, requests), websocket.py (a handed-off
browser WebSocket as an attachment's sink; handoff.HandoffListener takes them),
terminal.py (process, ring, screen,
reader/writer, lifecycle), attachment.py (replay, flow control, roles), flow.py
(FlowLimits), timers.py, spec.py (create request -> TerminalSpec), revive.py (save and
revive policy), jobs.py (the agent's commands: terminals keyed by session and tool call,
reached through the `job_*` ops of daemon.py and the `job_*` methods of PtyHostClient),
ring.py, output_scan.py and screen/ (the screen model, door: ScreenModel).

Bookkeeping shared with the service manager (pid liveness, file locks, logs, registration
records) lives in desktop.process.
"""
