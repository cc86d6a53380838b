// One terminal's attachment to the service (API.md "Attachment protocol"): ticket, WebSocket,
// replay/live bytes with a byte cursor, acks after the sink has processed the bytes, roles,
// reconnect with back-off, and input typed while disconnected.

import { api, ApiError } from "../api.js"

const BACKOFF_MS = [100, 300, 700, 1500, 3000, 5000]
const ACK_BATCH_BYTES = 64 * 1024
const ACK_DELAY_MS = 8
// Each xterm.js write has a fixed cost: 64 KiB slices render a flood ~1.8x faster than 16 KiB
// ones (bench/ui_terminal.py). A hidden tab's sink cuts them finer for the page's sake
// (paced-writer.js), so this is the only slicing rule here: it bounds the ack unit.
const WRITE_SLICE_BYTES = 64 * 1024
const encoder = new TextEncoder()

/**
 * sink: { write(bytes: Uint8Array, done: () => void), reset(done: () => void) }: both processed
 *   in order; `done` runs once the bytes have been parsed.
 * handlers: { changed(), event(message), gone(), notice(text), liveOutput(byteCount) }
 */
export class PtyLink {
  constructor({ id, attachmentId, sink, handlers, observe = false }) {
    this.id = id
    // Attach as an observer (an agent's job terminal: view-only) until takeControl().
    this.observe = observe
    this.attachmentId = attachmentId
    this.sink = sink
    this.handlers = handlers
    // Where the sink's content ends in the terminal's byte stream: (epoch, cursor).
    // cursor null = unknown (a fresh sink, or inside a checkpoint): the next attach replaces
    // the screen with a full replay or a checkpoint.
    this.epoch = null
    this.cursor = null
    this.phase = "idle" // idle | connecting | replaying | live | waiting | closed
    this.role = null
    this.controllerId = null
    this.generation = null
    this.info = null
    this.exitCode = null
    this.exited = false
    this.attempt = 0
    this.conn = null
    this.retryTimer = null
    this.queue = [] // input typed while no controller connection was open
    this.everAttached = false
    this.wantTakeover = false
    this.connectAttempt = 0
    // True until the sink has parsed the replay: reports the terminal emulator generates for
    // queries found in old output (cursor position, device attributes) must not reach the PTY.
    this.replayParsing = false
  }

  get connected() {
    return this.phase === "replaying" || this.phase === "live"
  }

  get isController() {
    return this.connected && this.role === "controller"
  }

  start() {
    if (this.phase === "idle") this.#connect()
  }

  /** Reconnect now if we are waiting to (the service is back). */
  retryNow() {
    if (this.phase !== "waiting") return
    clearTimeout(this.retryTimer)
    this.#connect()
  }

  takeControl() {
    if (this.phase === "closed" || this.isController) return
    this.wantTakeover = true
    if (this.conn) this.#drop(this.conn, false)
    clearTimeout(this.retryTimer)
    this.#connect()
  }

  close() {
    this.phase = "closed"
    clearTimeout(this.retryTimer)
    if (this.conn) this.#drop(this.conn, false)
    this.queue = []
  }

  /** Input from the user (string from xterm's onData or raw bytes from onBinary). */
  input(data) {
    const bytes = typeof data === "string" ? encoder.encode(data) : data
    if (this.phase === "closed" || this.exited) return "ignored"
    if (this.isController && this.conn.ws.readyState === WebSocket.OPEN) {
      this.conn.ws.send(bytes)
      return "sent"
    }
    if (this.connected && this.role === "observer") return "view-only"
    this.queue.push(bytes)
    return "queued"
  }

  resize(cols, rows) {
    if (!this.isController || this.conn.ws.readyState !== WebSocket.OPEN) return false
    this.conn.ws.send(JSON.stringify({ type: "resize", cols, rows }))
    return true
  }

  async #connect() {
    if (this.phase === "closed") return
    // Only the latest attempt may open a socket (takeControl can start one mid-connect).
    const attempt = ++this.connectAttempt
    this.phase = "connecting"
    this.handlers.changed()
    let ticket
    try {
      const data = await api("POST", `/api/pty/${encodeURIComponent(this.id)}/connect-token`, {
        headers: { "X-Desk-Ticket": "1" },
      })
      ticket = data?.ticket
      if (!ticket) throw new ApiError(500, "ticket.missing", "No ticket in the response")
    } catch (error) {
      if (this.phase === "closed" || attempt !== this.connectAttempt) return
      if (error instanceof ApiError && error.status === 404) {
        this.close()
        this.handlers.gone()
        return
      }
      this.#scheduleRetry()
      return
    }
    if (this.phase !== "connecting" || attempt !== this.connectAttempt) return
    const requested = this.cursor ?? 0
    const takeover = this.wantTakeover
    const url = new URL(`/api/pty/${encodeURIComponent(this.id)}/connect`, location.href)
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:"
    url.searchParams.set("ticket", ticket)
    url.searchParams.set("cursor", String(requested))
    // Lets the host answer with a checkpoint when the cursor belongs to another epoch.
    if (this.cursor !== null && this.epoch !== null)
      url.searchParams.set("epoch", String(this.epoch))
    url.searchParams.set("attachment_id", this.attachmentId)
    url.searchParams.set("role", this.observe && !takeover ? "observer" : "controller")
    url.searchParams.set("takeover", String(takeover))
    const ws = new WebSocket(url)
    ws.binaryType = "arraybuffer"
    const conn = {
      ws,
      requested,
      // The screen already holds bytes up to `requested`, unless the cursor was unknown.
      replaceScreen: this.cursor === null,
      assumedEpoch: this.epoch,
      attached: false,
      replaying: true,
      truncated: false,
      unacked: 0,
      ackTimer: null,
    }
    this.conn = conn
    ws.onmessage = (message) => {
      if (this.conn !== conn) return
      if (typeof message.data === "string") this.#onText(conn, message.data)
      else this.#onBytes(conn, new Uint8Array(message.data))
    }
    ws.onclose = () => {
      if (this.conn === conn) this.#drop(conn, true)
    }
  }

  #scheduleRetry() {
    if (this.phase === "closed") return
    this.phase = "waiting"
    this.handlers.changed()
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)]
    this.attempt++
    clearTimeout(this.retryTimer)
    this.retryTimer = setTimeout(() => this.#connect(), base + Math.random() * base * 0.3)
  }

  #drop(conn, retry) {
    clearTimeout(conn.ackTimer)
    conn.ws.onmessage = null
    conn.ws.onclose = null
    if (conn.ws.readyState <= WebSocket.OPEN) conn.ws.close()
    if (this.conn === conn) this.conn = null
    // Inside a checkpoint the screen is partial: the next attach must replace it.
    if (conn.attached && conn.replaying && conn.truncated) this.cursor = null
    if (!retry) return
    // The server closes an exited terminal's attachment once everything was sent.
    if (this.exited) {
      this.phase = "idle"
      this.handlers.changed()
      return
    }
    this.#scheduleRetry()
  }

  #onText(conn, raw) {
    let message
    try {
      message = JSON.parse(raw)
    } catch {
      return
    }
    switch (message.type) {
      case "attached":
        this.#onAttached(conn, message)
        break
      case "replay_complete":
        conn.replaying = false
        if (Number.isInteger(message.end)) this.cursor = message.end
        this.#afterReplayParsed(conn)
        this.phase = "live"
        this.handlers.changed()
        break
      case "resync":
        // An observer that fell too far behind: a checkpoint of the current screen follows.
        conn.replaying = true
        conn.truncated = true
        this.cursor = null
        this.#reset()
        this.phase = "replaying"
        this.handlers.changed()
        break
      case "exited":
        this.exited = true
        this.exitCode = message.exit_code ?? null
        this.queue = []
        this.handlers.changed()
        break
      case "controller_changed":
        this.controllerId = message.attachment_id ?? null
        this.generation = message.generation ?? this.generation
        this.role = this.controllerId === this.attachmentId ? "controller" : "observer"
        this.handlers.changed()
        break
      default:
        break
    }
    this.handlers.event(message)
  }

  #onAttached(conn, message) {
    const info = message.info ?? {}
    const replay = message.replay ?? {}
    if (
      conn.assumedEpoch !== null &&
      info.epoch !== conn.assumedEpoch &&
      !replay.truncated &&
      !conn.replaceScreen
    ) {
      // Our cursor counted bytes of another PTY host instance: the replay would not line up
      // with the screen. Start over from the new epoch's beginning.
      this.epoch = info.epoch
      this.cursor = null
      this.#drop(conn, false)
      this.#connect()
      return
    }
    conn.attached = true
    conn.truncated = Boolean(replay.truncated)
    this.info = info
    this.epoch = info.epoch ?? null
    this.role = message.role
    this.generation = message.generation ?? null
    this.controllerId = message.role === "controller" ? message.attachment_id : null
    this.exited = info.status === "exited"
    this.exitCode = this.exited ? (info.exit_code ?? null) : null
    this.attempt = 0
    this.everAttached = true
    this.wantTakeover = false
    // Control taken on purpose is kept across reconnects (the same attachment id regains it).
    if (message.role === "controller") this.observe = false
    if (conn.truncated || conn.replaceScreen) {
      this.#reset()
      this.cursor = conn.truncated ? null : 0
    } else {
      this.cursor = conn.requested
    }
    this.phase = "replaying"
    this.replayParsing = true
    this.#flushQueue(message)
    this.handlers.changed()
  }

  #flushQueue(message) {
    if (!this.queue.length) return
    const queued = this.queue
    this.queue = []
    if (
      message.role === "controller" &&
      message.attachment_id === this.attachmentId &&
      !this.exited
    ) {
      for (const bytes of queued) this.conn.ws.send(bytes)
    } else {
      const count = queued.reduce((sum, bytes) => sum + bytes.length, 0)
      this.handlers.notice(
        `Discarded ${count} byte${count === 1 ? "" : "s"} typed while disconnected: another window is in control.`,
      )
    }
  }

  #onBytes(conn, bytes) {
    if (!conn.attached) return
    const counted = !(conn.replaying && conn.truncated) && this.cursor !== null
    for (let start = 0; start < bytes.length; start += WRITE_SLICE_BYTES) {
      const piece = bytes.subarray(start, Math.min(start + WRITE_SLICE_BYTES, bytes.length))
      if (counted) this.cursor += piece.length
      this.sink.write(piece, () => this.#ack(conn, piece.length))
    }
    if (!conn.replaying) this.handlers.liveOutput(bytes.length)
  }

  #reset() {
    this.sink.reset(() => {})
  }

  #afterReplayParsed(conn) {
    this.sink.write(new Uint8Array(0), () => {
      if (this.conn === conn) this.replayParsing = false
    })
  }

  #ack(conn, count) {
    if (this.conn !== conn) return
    conn.unacked += count
    if (conn.unacked >= ACK_BATCH_BYTES) this.#sendAck(conn)
    else if (!conn.ackTimer) conn.ackTimer = setTimeout(() => this.#sendAck(conn), ACK_DELAY_MS)
  }

  #sendAck(conn) {
    clearTimeout(conn.ackTimer)
    conn.ackTimer = null
    if (!conn.unacked || conn.ws.readyState !== WebSocket.OPEN) return
    conn.ws.send(JSON.stringify({ type: "ack", bytes: conn.unacked }))
    conn.unacked = 0
  }
}
