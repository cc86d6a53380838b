// A session's jobs (GET /api/session/{id}/jobs), the tool calls waiting for the person
// (GET /api/session/{id}/permission) and its permission mode, kept beside the chat store (its
// shapes stay its own) and fed by the same event stream:
//
// - `session.job.updated {job}` (ephemeral) replaces one job; it is lost while disconnected,
//   so every (re)connect re-reads the lists of the sessions loaded (`resync`).
// - `session.permission.asked` / `.replied` (durable, replayed after a reconnect) add and
//   remove a waiting call. A replied call never comes back: a page read that started before
//   the reply cannot show it again.
// - `session.permission.mode` is the mode; before one arrives the session's `permission_mode`.
//
// Merging rule for jobs (as the chat store's): a read never overwrites a job a live event
// changed after the read started.

import { batch, signal } from "@preact/signals"

const enc = encodeURIComponent
const SETTLED = new Set(["completed", "error", "cancelled"])

export class SessionJobs {
  constructor(sessionId) {
    this.sessionId = sessionId
    this.jobs = signal([]) // oldest first
    this.permissions = signal([]) // oldest first
    this.mode = signal(null) // null until an event or a write says it
    this.state = signal("idle") // idle | loading | ready | error
    this.error = signal(null)
    this.touched = new Map() // job id -> clock of the last live change
    this.replied = new Set() // call ids answered (they never wait again)
  }

  job(id) {
    return this.jobs.value.find((j) => j.id === id) ?? null
  }

  /** The job of tool call `callId`, if the registry knows it. */
  jobOfCall(callId) {
    return this.jobs.value.find((j) => j.call_id === callId) ?? null
  }

  upsert(job, clock) {
    if (!job?.id) return
    if (clock !== undefined) this.touched.set(job.id, clock)
    const list = this.jobs.value
    const index = list.findIndex((j) => j.id === job.id)
    if (index < 0) {
      this.jobs.value = [...list, job]
      return
    }
    // A settled job does not run again: an older "running" snapshot never undoes it.
    if (SETTLED.has(list[index].status) && job.status === "running") return
    const next = [...list]
    next[index] = { ...list[index], ...job }
    this.jobs.value = next
  }

  /** Jobs read when the clock was `started`: live changes made since then win. */
  mergeRead(rows, started) {
    const kept = this.jobs.value.filter((j) => (this.touched.get(j.id) ?? -1) > started)
    const keptIds = new Set(kept.map((j) => j.id))
    const merged = [...rows.filter((j) => !keptIds.has(j.id)), ...kept]
    this.jobs.value = merged.sort(
      (a, b) => (a.time?.started ?? Infinity) - (b.time?.started ?? Infinity),
    )
  }

  ask(request) {
    if (!request?.call_id || this.replied.has(request.call_id)) return
    if (this.permissions.value.some((p) => p.call_id === request.call_id)) return
    this.permissions.value = [...this.permissions.value, request]
  }

  answered(callId) {
    this.replied.add(callId)
    this.permissions.value = this.permissions.value.filter((p) => p.call_id !== callId)
  }

  mergePermissions(rows) {
    const read = rows.filter((p) => !this.replied.has(p.call_id))
    // Calls asked live while the read ran are kept; the read's come first (they are older).
    const live = this.permissions.value.filter((p) => !read.some((r) => r.call_id === p.call_id))
    this.permissions.value = [...read, ...live]
  }
}

/** `request(method, path, body)` resolves with the response payload or throws an ApiError. */
export function createJobsStore({ request }) {
  const sessions = new Map()
  let clock = 0

  function of(sessionId) {
    let s = sessions.get(sessionId)
    if (!s) sessions.set(sessionId, (s = new SessionJobs(sessionId)))
    return s
  }

  /** Reads the jobs and the waiting calls of a session (again: after a reconnect). */
  async function load(sessionId) {
    const s = of(sessionId)
    const started = clock
    if (s.state.value !== "ready") s.state.value = "loading"
    try {
      const [jobs, waiting] = await Promise.all([
        request("GET", `/api/session/${enc(sessionId)}/jobs`),
        request("GET", `/api/session/${enc(sessionId)}/permission`),
      ])
      batch(() => {
        s.mergeRead(jobs?.data ?? [], started)
        s.mergePermissions(waiting?.data ?? [])
        s.error.value = null
        s.state.value = "ready"
      })
    } catch (error) {
      s.error.value = error.message
      s.state.value = "error"
    }
    return s
  }

  /** Loads a session the first time it is shown. */
  function open(sessionId) {
    const s = of(sessionId)
    if (s.state.value === "idle" || s.state.value === "error") load(sessionId)
    return s
  }

  function resync() {
    return Promise.all(
      [...sessions.values()].filter((s) => s.state.value !== "idle").map((s) => load(s.sessionId)),
    )
  }

  /** One event from the stream (as the chat store's `handle` gets it). */
  function handle(type, properties) {
    if (!properties || typeof properties !== "object") return
    const durable = typeof properties.seq === "number"
    const kind = durable ? (properties.type ?? type) : type
    const sid = properties.session_id ?? properties.aggregate_id
    const data = properties.data
    if (!sid || !data || typeof data !== "object") return
    if (kind === "session.deleted") {
      sessions.delete(sid)
      return
    }
    // Not shown yet: its first read brings everything, but a question asked now is kept, so
    // the sidebar and the window title can say the session waits for the person.
    const s = sessions.get(sid) ?? (kind === "session.permission.asked" ? of(sid) : null)
    if (!s) return
    if (kind === "session.job.updated") s.upsert(data.job, ++clock)
    else if (kind === "session.permission.asked")
      s.ask({ ...data, time: { created: properties.created ?? Date.now() } })
    else if (kind === "session.permission.replied") s.answered(data.call_id)
    else if (kind === "session.permission.mode") s.mode.value = data.mode
  }

  async function cancel(sessionId, jobId) {
    const { data } = await request(
      "POST",
      `/api/session/${enc(sessionId)}/jobs/${enc(jobId)}/cancel`,
      {},
    )
    if (data) of(sessionId).upsert(data, ++clock)
    return data
  }

  /** Moves the session's foreground shell calls to the background. */
  async function background(sessionId) {
    const { data } = await request("POST", `/api/session/${enc(sessionId)}/background`, {})
    for (const job of data ?? []) of(sessionId).upsert(job, ++clock)
    return data ?? []
  }

  async function reply(sessionId, callId, answer) {
    try {
      await request("POST", `/api/session/${enc(sessionId)}/permission/${enc(callId)}`, {
        reply: answer,
      })
    } catch (error) {
      // Answered elsewhere (another window) or no longer waiting: it is not waiting here either.
      if (error.status !== 404) throw error
    }
    of(sessionId).answered(callId)
  }

  async function setMode(sessionId, mode) {
    const { data } = await request("PATCH", `/api/session/${enc(sessionId)}`, {
      permission_mode: mode,
    })
    of(sessionId).mode.value = data?.permission_mode ?? mode
    return data
  }

  return { of, open, load, resync, handle, cancel, background, reply, setMode, sessions }
}

/** The command or description a notice names, and its output, from the notice's text:
 * `<shell id="…" state="…" command="…">\n…\n</shell>` (attributes HTML-escaped). */
export function parseNotice(text) {
  const match = /^<(shell|subagent)\b([^>]*)>\n?([\s\S]*?)\n?<\/\1>\s*$/.exec(text ?? "")
  if (!match) return null
  const attrs = {}
  for (const [, name, value] of match[2].matchAll(/([A-Za-z_][\w-]*)="([^"]*)"/g))
    attrs[name] = unescapeHtml(value)
  return { kind: match[1], attrs, body: match[3] }
}

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }

function unescapeHtml(value) {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name) => {
    if (name[0] === "#") {
      const code =
        name[1] === "x" || name[1] === "X"
          ? parseInt(name.slice(2), 16)
          : parseInt(name.slice(1), 10)
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return ENTITIES[name.toLowerCase()] ?? whole
  })
}

/** Elapsed time as the panel shows it: 4s, 2m 05s, 1h 02m. */
export function elapsed(ms) {
  const total = Math.max(0, Math.floor(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  if (h) return `${h}h ${String(m).padStart(2, "0")}m`
  if (m) return `${m}m ${String(s).padStart(2, "0")}s`
  return `${s}s`
}
