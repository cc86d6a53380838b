// The live link to the service: an EventSource on /api/event plus /api/health probes that tell
// "service down" (offline) from "not signed in" (401) from "coming back" (reconnecting).
//
// Resume: every durable event carries its global position as the SSE `id`. A new EventSource
// (we open one after every failure, to probe first) does not send Last-Event-ID, so it asks
// for `?after=<last position>` instead and the service replays what was missed. Listeners of
// `server.connected` learn whether the stream continued (`event.resumed`) or started afresh
// (first connect, after `server.resync`), when state must be re-read.

const BACKOFF_MS = [250, 500, 1000, 2000, 3000]
const UNAUTHORIZED_POLL_MS = 3000

export const STATES = {
  connecting: "Connecting…",
  connected: "Connected",
  reconnecting: "Reconnecting…",
  offline: "Offline",
  unauthorized: "Not signed in",
}

export class ServiceConnection {
  constructor() {
    this.state = "connecting"
    this.attempt = 0
    this.source = null
    this.timer = null
    this.stateListeners = new Set()
    this.eventListeners = new Map() // event type -> Set(listener); "*" gets every event
    this.position = null // the last durable event's position, once known
  }

  start() {
    this.#open()
  }

  onState(listener) {
    this.stateListeners.add(listener)
    return () => this.stateListeners.delete(listener)
  }

  on(type, listener) {
    if (!this.eventListeners.has(type)) this.eventListeners.set(type, new Set())
    this.eventListeners.get(type).add(listener)
    return () => this.eventListeners.get(type).delete(listener)
  }

  /** Try again now (e.g. a terminal noticed the service is back). */
  retrySoon() {
    if (this.state === "connected" || this.source) return
    this.#schedule(() => this.#probe(), 0)
  }

  #setState(state) {
    if (state === this.state) return
    const previous = this.state
    this.state = state
    for (const listener of this.stateListeners) listener(state, previous)
  }

  #emit(event) {
    for (const key of [event.type, "*"]) {
      const set = this.eventListeners.get(key)
      if (!set) continue
      for (const listener of set) {
        try {
          listener(event.properties ?? {}, event)
        } catch (error) {
          console.error("Desk: event listener failed", event.type, error)
        }
      }
    }
  }

  #schedule(fn, delay) {
    clearTimeout(this.timer)
    this.timer = setTimeout(fn, delay)
  }

  #open() {
    clearTimeout(this.timer)
    const resumed = this.position !== null
    const source = new EventSource(resumed ? `/api/event?after=${this.position}` : "/api/event")
    this.source = source
    source.onmessage = (message) => {
      let event
      try {
        event = JSON.parse(message.data)
      } catch {
        return
      }
      if (!event || typeof event.type !== "string") return
      // A durable event's `properties.position` is its SSE id. (MessageEvent.lastEventId
      // cannot tell: it keeps the last id for the ephemeral events that follow it.)
      const position = event.properties?.position
      if (
        event.type !== "server.connected" &&
        typeof event.properties?.seq === "number" &&
        Number.isSafeInteger(position)
      ) {
        if (this.position !== null && position <= this.position) return // seen already
        this.position = position
      }
      if (event.type === "server.connected") {
        // A fresh stream starts at the head it reports: later reconnects resume from there.
        if (!resumed && Number.isSafeInteger(event.properties?.position))
          this.position = event.properties.position
        event.resumed = resumed
        this.attempt = 0
        this.#setState("connected")
      } else if (event.type === "server.resync") {
        // Events were dropped: the next stream starts afresh and listeners re-read state.
        this.position = null
      }
      this.#emit(event)
    }
    source.onerror = () => {
      // Take over reconnection ourselves: the probe tells offline from signed-out.
      source.close()
      if (this.source === source) this.source = null
      if (this.state === "connected") this.#setState("reconnecting")
      this.#probe()
    }
  }

  async #probe() {
    let status
    try {
      const response = await fetch("/api/health", { cache: "no-store", credentials: "same-origin" })
      status = response.status
    } catch {
      status = 0
    }
    if (this.source) return // reopened meanwhile
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)]
    this.attempt++
    if (status === 401) {
      this.#setState("unauthorized")
      this.#schedule(() => this.#probe(), UNAUTHORIZED_POLL_MS)
    } else if (status === 0) {
      this.#setState("offline")
      this.#schedule(() => this.#probe(), delay)
    } else {
      this.#setState("reconnecting")
      this.#schedule(() => this.#open(), delay)
    }
  }
}
