// @ts-check
// The chat's one signals store: sessions and their messages, fed by page reads and by the live
// event stream, without either losing what the other brought.
//
// Merging rule. Every message remembers the session `seq` its state is known at ("known"):
// a live event sets it to the event's seq, a page read to the seq the server read the page at
// (the response's `seq`). A read never overwrites a message a newer live event changed, and a
// live event the read already contained is not applied again (appends like `session.text`
// would otherwise show twice). A server that does not send `seq` gets the seq of the last live
// event applied when the read started: events that arrive during the read then win.

import { batch, computed, signal } from "@preact/signals"
import { CREATE, REMOVE, STATUS, TOUCH, UPDATE } from "./apply.js"
import { turnsOf } from "./usage.js"
import { applyCheckpointEvent } from "./changes.js"

/**
 * @template T
 * @typedef {import("@preact/signals").Signal<T>} Signal
 */
/** @typedef {{ id: string, type: string, time?: Record<string, number>, [key: string]: any }} Message */
/**
 * @typedef {{ id: string, title?: string, directory?: string, parent_id?: string | null,
 *   status?: string, time?: { created?: number, updated?: number }, [key: string]: any }} Session
 */
/** @typedef {{ key: string, ids: Signal<string[]> }} Chunk one page's message ids */
/** @typedef {{ cursor: number | null, loading: boolean, done: boolean }} Older */
/** @typedef {"idle" | "loading" | "ready" | "error"} ThreadState */

export const PAGE_SIZE = 50

/** A session's `context` after a step recorded {used, window?}: a session's own window stays. */
function contextOf(previous, recorded) {
  const next = { used: recorded.used }
  const window = recorded.window ?? previous?.window
  if (window) next.window = window
  return next
}

/** Durable events after which no retry is pending any more. */
const RETRY_ENDS = new Set([
  "session.step.started",
  "session.step.streamed",
  "session.step.ended",
  "session.step.failed",
  "session.execution.interrupted",
  "session.resume.exhausted",
  "session.compacted", // a compaction's summary request was retried and went through
])

const byCreatedDesc = (a, b) => (b.time?.created ?? 0) - (a.time?.created ?? 0)
const enc = encodeURIComponent

export class Thread {
  /** @param {string} sessionId */
  constructor(sessionId) {
    this.sessionId = sessionId
    this.ids = signal(/** @type {string[]} */ ([])) // message ids, oldest first
    // The same ids in chunks (one per page read, live messages join the newest chunk): the
    // view renders a chunk per component, so prepending a page costs a page, not the history.
    this.chunks = signal(/** @type {Chunk[]} */ ([])) // oldest first
    /** @type {Map<string, Signal<Message>>} */
    this.messages = new Map()
    /** @type {Map<string, number>} id -> session seq the message's state is known at */
    this.known = new Map()
    this.seq = 0 // the highest seq of this session's live events applied
    this.state = signal(/** @type {ThreadState} */ ("idle"))
    this.error = signal(/** @type {string | null} */ (null))
    this.older = signal(/** @type {Older} */ ({ cursor: null, loading: false, done: true }))
    // Slots for the agent issue: text streamed by ephemeral deltas, and the retry banner.
    /** @type {Map<string, Signal<string>>} message id -> text not yet in a durable part */
    this.streaming = new Map()
    this.retry = signal(/** @type {Record<string, any> | null} */ (null))
    // The last "Compact now" that failed ({type, message}), until a compaction or a step.
    this.compaction = signal(/** @type {{type: string, message: string} | null} */ (null))
    // The prompt UI's: reasoning streamed by deltas, tool arguments as they stream, the
    // prompts sent while a turn ran (queued until delivered), and each turn's token usage.
    /** @type {Map<string, Signal<string>>} message id -> reasoning not yet in a durable part */
    this.reasoning = new Map()
    /** @type {Map<string, Signal<string>>} call id -> arguments streamed so far */
    this.toolInput = new Map()
    // User message ids waiting for the running turn to end.
    this.queued = signal(/** @type {Set<string>} */ (new Set()))
    // Each turn by its last assistant message: its steps and summed tokens (usage.js).
    this.turns = computed(() => turnsOf(this.ids.value, (id) => this.messages.get(id)?.value))
    this.usage = computed(() => {
      const usage = new Map()
      for (const [last, turn] of this.turns.value) if (turn.tokens) usage.set(last, turn.tokens)
      return usage
    })
  }

  message(id) {
    return this.messages.get(id)?.value ?? null
  }

  /** Forget everything (after missed events); the same object, so views keep their reference. */
  reset() {
    batch(() => {
      this.messages.clear()
      this.known.clear()
      this.streaming.clear()
      this.reasoning.clear()
      this.toolInput.clear()
      this.queued.value = new Set()
      this.#settled.clear()
      this.seq = 0
      this.ids.value = []
      this.chunks.value = []
      this.older.value = { cursor: null, loading: false, done: true }
      this.retry.value = null
      this.compaction.value = null
      this.error.value = null
      this.state.value = "idle"
    })
  }

  /** @returns {Message[]} */
  list() {
    return this.ids.value.map((id) => /** @type {Signal<Message>} */ (this.messages.get(id)).value)
  }

  streamOf(id) {
    let text = this.streaming.get(id)
    if (!text) this.streaming.set(id, (text = signal("")))
    return text
  }

  reasoningOf(id) {
    let text = this.reasoning.get(id)
    if (!text) this.reasoning.set(id, (text = signal("")))
    return text
  }

  toolInputOf(callId) {
    let text = this.toolInput.get(callId)
    if (!text) this.toolInput.set(callId, (text = signal("")))
    return text
  }

  /** A prompt sent while a turn ran: shown as queued until the model receives it (unless its
   * delivery, or its cancel, came through the stream before the send's answer did). */
  markQueued(id) {
    if (this.#settled.has(id)) return
    if (!this.queued.value.has(id)) this.queued.value = new Set([...this.queued.value, id])
  }

  // Prompts delivered or cancelled: never queued again.
  #settled = new Set()

  /**
   * session.input.delivered: the model received the prompt, and the server moved the user
   * message (its seq) to that point; the list moves it to the end likewise, so a queued
   * prompt follows the steps of the turn it waited for.
   */
  #delivered(id) {
    this.#settled.add(id)
    if (this.queued.value.has(id)) {
      const rest = new Set(this.queued.value)
      rest.delete(id)
      this.queued.value = rest
    }
    const ids = this.ids.value
    if (!this.messages.has(id) || ids[ids.length - 1] === id) return
    this.ids.value = [...ids.filter((x) => x !== id), id]
    const chunks = this.chunks.value
    for (const chunk of chunks)
      if (chunk.ids.value.includes(id)) chunk.ids.value = chunk.ids.value.filter((x) => x !== id)
    const last = chunks[chunks.length - 1]
    if (last) last.ids.value = [...last.ids.value, id]
  }

  /** A message leaves the thread (a prompt cancelled before delivery); a page read before
   * `seq` does not bring it back. */
  #remove(id, seq) {
    this.#settled.add(id)
    if (this.queued.value.has(id)) {
      const rest = new Set(this.queued.value)
      rest.delete(id)
      this.queued.value = rest
    }
    this.known.set(id, seq)
    if (!this.messages.delete(id)) return
    this.ids.value = this.ids.value.filter((x) => x !== id)
    for (const chunk of this.chunks.value)
      if (chunk.ids.value.includes(id)) chunk.ids.value = chunk.ids.value.filter((x) => x !== id)
  }

  /** A "Compact now" failed after its summary request's retries: no retry waits now (no
   * durable event ends the banner), and the failure shows until the next compaction or step. */
  compactionFailed(error) {
    batch(() => {
      this.retry.value = null
      this.compaction.value = error
    })
  }

  /** Ends the retry banner and the live parts a durable event supersedes. */
  #settleLive(event) {
    const { type, data } = event
    if (RETRY_ENDS.has(type)) this.retry.value = null
    if (
      type === "session.reasoning" ||
      type === "session.step.ended" ||
      type === "session.step.failed"
    ) {
      const streamed = this.reasoning.get(data?.message_id)
      if (streamed) streamed.value = ""
    }
    if (type === "session.step.failed") {
      const streamed = this.streaming.get(data?.message_id)
      if (streamed) streamed.value = ""
    }
    if (type === "session.step.streamed" && typeof data?.text === "string") {
      const live = data.part === "reasoning" ? this.reasoning : this.streaming
      dropSaved(live.get(data.message_id), data.text)
    }
    if (
      (type === "session.tool.called" ||
        type === "session.tool.success" ||
        type === "session.tool.failed") &&
      data?.call_id
    ) {
      this.toolInput.delete(data.call_id)
    }
    if (type === "session.input.delivered" && data?.message_id) this.#delivered(data.message_id)
  }

  /**
   * Page rows read at session seq `readSeq` join the thread. Rows the thread lacks go before
   * the ones it has: a page is older than every message that arrived live while it was read.
   */
  merge(rows, readSeq) {
    const added = []
    for (let row of rows) {
      if (row.queued) {
        // A prompt the server still holds for delivery: shown queued (the flag is the
        // read's, not the message's).
        row = { ...row }
        delete row.queued
        if ((this.known.get(row.id) ?? -1) <= readSeq) this.markQueued(row.id)
      }
      const current = this.messages.get(row.id)
      if (!current) {
        if ((this.known.get(row.id) ?? -1) > readSeq) continue // removed after this read
        this.messages.set(row.id, signal(row))
        added.push(row.id)
      } else if ((this.known.get(row.id) ?? -1) > readSeq) {
        continue // a newer live event changed it
      } else {
        current.value = row
      }
      this.known.set(row.id, readSeq)
    }
    if (added.length) {
      this.ids.value = [...added, ...this.ids.value]
      this.chunks.value = [{ key: added[0], ids: signal(added) }, ...this.chunks.value]
    }
  }

  /** Applies one durable event of this session; returns true when a message changed. */
  apply(event) {
    if (event.seq <= this.seq) return false // replayed or duplicated: already applied
    this.seq = event.seq
    const id = event.data?.message_id
    if (event.type === "session.compacted" || event.type === "session.step.started")
      this.compaction.value = null
    if (event.type === "session.retry.scheduled")
      this.retry.value = { ...event.data, created: event.created }
    else if (event.type === "session.step.ended" || event.type === "session.step.started")
      this.retry.value = null
    if (this.state.value !== "idle") batch(() => this.#settleLive(event))
    else if (RETRY_ENDS.has(event.type)) this.retry.value = null
    if (!id || this.state.value === "idle") return false // not loaded: a later read brings it
    if (REMOVE.has(event.type)) {
      const had = this.messages.has(id)
      batch(() => this.#remove(id, event.seq))
      return had
    }
    const current = this.messages.get(id)
    if (!current) {
      const create = CREATE[event.type]
      if (!create) return false // a message on a page not loaded yet
      this.messages.set(id, signal(create(event)))
      this.known.set(id, event.seq)
      this.ids.value = [...this.ids.value, id]
      const chunks = this.chunks.value
      const last = chunks[chunks.length - 1]
      if (last) last.ids.value = [...last.ids.value, id]
      else this.chunks.value = [{ key: id, ids: signal([id]) }]
      return true
    }
    const update = UPDATE[event.type]
    if (!update || (this.known.get(id) ?? -1) >= event.seq) return false
    const draft = structuredClone(current.value)
    if (!update(draft, event)) return false
    batch(() => {
      current.value = draft
      this.known.set(id, event.seq)
      // The durable text part now holds what the deltas streamed.
      const streamed = this.streaming.get(id)
      if (streamed && (event.type === "session.text" || event.type === "session.step.ended"))
        streamed.value = ""
    })
    return true
  }
}

// Text a save made durable leaves the deltas' signal: the deltas it holds came before it, so
// they are the signal's start (all of the save, or its end when the page joined mid-save).
export function dropSaved(signal, saved) {
  if (!signal) return
  const text = signal.value
  for (let k = Math.min(text.length, saved.length); k > 0; k--)
    if (saved.endsWith(text.slice(0, k))) {
      signal.value = text.slice(k)
      return
    }
}

/**
 * `request(method, path, body)` resolves with the whole response payload (`{data, ...}`) or
 * throws an ApiError; the store never touches the network otherwise.
 */
export function createChatStore({ request }) {
  const sessions = signal(/** @type {Session[]} */ ([])) // newest first
  const activeId = signal(/** @type {string | null} */ (null))
  const listState = signal(/** @type {ThreadState} */ ("idle"))
  // GET /api/config/provider (never the key), null until read.
  const provider = signal(/** @type {Record<string, any> | null} */ (null))
  const online = signal(0) // counts the event stream's (re)connections
  /** @type {Map<string, Thread>} */
  const threads = new Map()
  // Session list merging: a list read never undoes a live change made after it started.
  let sessionClock = 0
  const sessionTouched = new Map() // id -> clock of the last live change
  const deleted = new Set()

  const active = computed(() => sessions.value.find((s) => s.id === activeId.value) ?? null)
  const recentFolders = computed(() => {
    const seen = new Set()
    const sorted = [...sessions.value].sort(
      (a, b) => (b.time?.updated ?? 0) - (a.time?.updated ?? 0),
    )
    for (const s of sorted) if (s.directory) seen.add(s.directory)
    return [...seen].slice(0, 10)
  })

  function thread(id) {
    let t = threads.get(id)
    if (!t) threads.set(id, (t = new Thread(id)))
    return t
  }

  function upsertSession(session, { live = true } = {}) {
    if (live) sessionTouched.set(session.id, ++sessionClock)
    const list = sessions.value.filter((s) => s.id !== session.id)
    const previous = sessions.value.find((s) => s.id === session.id)
    list.push(
      previous ? { ...previous, ...session, time: { ...previous.time, ...session.time } } : session,
    )
    sessions.value = list.sort(byCreatedDesc)
  }

  function changeSession(id, change) {
    const previous = sessions.value.find((s) => s.id === id)
    if (!previous) return
    sessionTouched.set(id, ++sessionClock)
    sessions.value = sessions.value.map((s) =>
      s.id === id ? change({ ...s, time: { ...s.time } }) : s,
    )
  }

  function removeSession(id) {
    deleted.add(id)
    sessionTouched.set(id, ++sessionClock)
    sessions.value = sessions.value.filter((s) => s.id !== id)
    threads.delete(id)
    if (activeId.value === id) activeId.value = null
  }

  async function loadSessions() {
    const started = sessionClock
    listState.value = "loading"
    try {
      const { data } = await request("GET", "/api/session")
      batch(() => {
        const fresh = new Map(data.map((s) => [s.id, s]))
        const kept = sessions.value.filter(
          (s) => (sessionTouched.get(s.id) ?? 0) > started || fresh.has(s.id),
        )
        const merged = kept.map((s) =>
          (sessionTouched.get(s.id) ?? 0) > started ? s : fresh.get(s.id),
        )
        for (const s of data) {
          if (deleted.has(s.id) && (sessionTouched.get(s.id) ?? 0) > started) continue
          if (!merged.some((m) => m.id === s.id)) merged.push(s)
        }
        sessions.value = merged.sort(byCreatedDesc)
        listState.value = "ready"
      })
    } catch (error) {
      listState.value = "error"
      throw error
    }
  }

  async function readPage(t, where) {
    const before = where === "older" ? t.older.value.cursor : null
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) })
    if (before !== null && before !== undefined) query.set("before", String(before))
    const startSeq = t.seq
    const payload = await request("GET", `/api/session/${enc(t.sessionId)}/message?${query}`)
    const readSeq = typeof payload.seq === "number" ? payload.seq : startSeq
    batch(() => {
      t.merge(payload.data ?? [], readSeq)
      const cursor = payload.cursor?.previous ?? null
      // The first read decides where older pages start; a later latest-page read (a resync)
      // must not move the cursor of pages already loaded.
      if (where === "older" || t.older.value.cursor === null || t.state.value !== "ready") {
        t.older.value = {
          cursor,
          loading: false,
          done: cursor === null || (payload.data ?? []).length === 0,
        }
      }
    })
  }

  /** Loads the latest page unless the thread is loaded (or loading); `force` reloads it. */
  async function openThread(id, { force = false } = {}) {
    const t = thread(id)
    if (!force && t.state.value !== "idle" && t.state.value !== "error") return t
    t.state.value = "loading"
    t.error.value = null
    try {
      await readPage(t, "latest")
      t.state.value = "ready"
    } catch (error) {
      t.error.value = error.message
      t.state.value = "error"
    }
    return t
  }

  async function loadOlder(id) {
    const t = thread(id)
    const older = t.older.value
    if (older.loading || older.done || t.state.value !== "ready") return false
    t.older.value = { ...older, loading: true }
    try {
      await readPage(t, "older")
      return true
    } catch (error) {
      t.older.value = { ...older, loading: false }
      t.error.value = error.message
      return false
    }
  }

  function select(id) {
    activeId.value = id
    if (id) openThread(id)
  }

  // ---- live events -------------------------------------------------------------------------

  function applyDurable(event) {
    const sid = event.session_id ?? event.aggregate_id
    if (!sid) return
    const { type, data = {}, created } = event
    batch(() => {
      if (type === "session.created") {
        deleted.delete(sid)
        upsertSession({
          id: sid,
          title: data.title,
          directory: data.directory,
          parent_id: data.parent_id ?? null,
          status: "idle",
          time: { created, updated: created },
        })
      } else if (type === "session.deleted") {
        removeSession(sid)
        return
      } else if (type === "session.updated") {
        changeSession(sid, (s) => ((s.title = data.title), s))
      }
      // A step's start or end leaves a running turn busy (the claim holds; session.status
      // says when the turn ends); only a failure changes a busy session's status here.
      if (STATUS[type])
        changeSession(
          sid,
          (s) => (
            (s.status = s.status === "busy" && STATUS[type] === "idle" ? "busy" : STATUS[type]),
            s
          ),
        )
      if (TOUCH.has(type))
        changeSession(sid, (s) => ((s.time.updated = Math.max(s.time.updated ?? 0, created)), s))
      if (type === "session.step.ended" && data.context)
        changeSession(sid, (s) => ((s.context = contextOf(s.context, data.context)), s))
      else if (type === "session.context.window")
        changeSession(
          sid,
          (s) => (
            (s.context = {
              ...s.context,
              used: s.context?.used ?? 0,
              window: data.window ?? undefined,
            }),
            s
          ),
        )
      applyCheckpointEvent(threads.get(sid), event)
      threads.get(sid)?.apply(event)
    })
  }

  function applyEphemeral(type, properties) {
    const data = properties.data ?? properties
    const sid = properties.session_id ?? data.session_id
    if (!sid) return
    if (type === "session.status" && data.status) {
      changeSession(sid, (s) => ((s.status = data.status), s))
    } else if (type === "session.compaction.failed" && data.error) {
      // "Compact now" failed, retries and all (in this window or another).
      threads.get(sid)?.compactionFailed(data.error)
    } else if (type === "session.text.delta" && data.message_id) {
      const text = thread(sid).streamOf(data.message_id)
      text.value += data.delta ?? ""
    } else if (type === "session.reasoning.delta" && data.message_id) {
      const text = thread(sid).reasoningOf(data.message_id)
      text.value += data.delta ?? ""
    } else if (type === "session.tool.input.delta" && data.call_id) {
      const text = thread(sid).toolInputOf(data.call_id)
      text.value += data.delta ?? ""
    }
  }

  /** One event from the stream: durable ones carry `seq` and `data` (Event.to_json()). */
  function handle(type, properties) {
    if (!properties || typeof properties !== "object") return
    if (type === "server.connected") online.value += 1
    if (type === "provider.config.updated") {
      loadProvider().catch(() => null) // the event says little; the route says all but the key
      return
    }
    if (
      typeof properties.seq === "number" &&
      properties.data &&
      typeof properties.data === "object"
    ) {
      applyDurable({ ...properties, type: properties.type ?? type })
    } else {
      applyEphemeral(type, properties)
    }
  }

  /** After missed events (a resync): re-read the list and every loaded thread. */
  async function resync() {
    const open = [...threads.values()].filter((t) => t.state.value !== "idle")
    for (const t of threads.values()) t.reset()
    loadProvider().catch(() => null)
    await loadSessions().catch(() => null)
    await Promise.all(open.map((t) => openThread(t.sessionId)))
  }

  // ---- actions -----------------------------------------------------------------------------

  /** @param {{ title?: string, directory?: string, confirm?: boolean }} [options] */
  async function createSession({ title, directory, confirm } = {}) {
    const body = {}
    if (title) body.title = title
    if (directory) body.directory = directory
    if (confirm) body.confirm = true // the person agreed to a whole home folder (or /)
    const { data } = await request("POST", "/api/session", body)
    upsertSession(data, { live: false })
    return data
  }

  async function renameSession(id, title) {
    const { data } = await request("PATCH", `/api/session/${enc(id)}`, { title })
    if (data) changeSession(id, (s) => ({ ...s, title: data.title ?? title }))
    return data
  }

  /** Sets the session's own settings (model, reasoning_effort, context_window); the session
   * comes back with them. */
  async function patchSession(id, body) {
    const { data } = await request("PATCH", `/api/session/${enc(id)}`, body)
    if (data) changeSession(id, (s) => ({ ...s, model: data.model, context: data.context }))
    return data
  }

  async function deleteSession(id) {
    await request("DELETE", `/api/session/${enc(id)}`)
    removeSession(id)
  }

  async function editMessage(sessionId, messageId, content) {
    const t = thread(sessionId)
    const startSeq = t.seq
    const payload = await request(
      "PATCH",
      `/api/session/${enc(sessionId)}/message/${enc(messageId)}`,
      { content },
    )
    if (payload?.data?.id === messageId && t.messages.has(messageId)) {
      t.merge([payload.data], typeof payload.seq === "number" ? payload.seq : startSeq)
    }
    return payload?.data ?? null
  }

  // ---- the agent: prompts, interrupts, the provider's settings ------------------------------

  /** Sends a prompt (202 {message_id}); while a turn runs it is queued behind it (`queue`) or
   * read at the turn's next step (`steer`). */
  async function sendPrompt(sessionId, text, mode = "queue") {
    const busy = sessions.value.find((s) => s.id === sessionId)?.status === "busy"
    const { data } = await request("POST", `/api/session/${enc(sessionId)}/prompt`, {
      text,
      mode,
    })
    const messageId = data?.message_id
    if (busy && messageId) thread(sessionId).markQueued(messageId)
    return messageId ?? null
  }

  /** Compacts the session's history for the model now; the session comes back. */
  async function compactNow(sessionId) {
    let data
    try {
      ;({ data } = await request("POST", `/api/session/${enc(sessionId)}/compact`, {}))
    } catch (error) {
      // It failed, retries and all (a 409 leaves a running turn's banner alone).
      if (error?.type === "context.compaction_failed")
        thread(sessionId).compactionFailed({ type: error.type, message: error.message })
      throw error
    }
    if (data?.id) upsertSession(data)
    return data ?? null
  }

  /** Withdraws a queued prompt before the model gets it (409 once it was delivered). */
  async function cancelPrompt(sessionId, messageId) {
    await request("DELETE", `/api/session/${enc(sessionId)}/prompt/${enc(messageId)}`)
  }

  async function interrupt(sessionId) {
    const { data } = await request("POST", `/api/session/${enc(sessionId)}/interrupt`, {})
    return Boolean(data?.interrupted)
  }

  async function loadProvider() {
    const { data } = await request("GET", "/api/config/provider")
    provider.value = data
    return data
  }

  async function saveProvider(body) {
    const { data } = await request("PUT", "/api/config/provider", body)
    provider.value = data
    return data
  }

  return {
    provider,
    online,
    sendPrompt,
    cancelPrompt,
    compactNow,
    interrupt,
    loadProvider,
    saveProvider,
    sessions,
    activeId,
    active,
    listState,
    recentFolders,
    thread,
    threads,
    select,
    loadSessions,
    openThread,
    loadOlder,
    handle,
    resync,
    createSession,
    renameSession,
    patchSession,
    deleteSession,
    editMessage,
  }
}
