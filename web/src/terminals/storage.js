// Per-tab browser state in sessionStorage: a stable attachment id per terminal (so a reload or a
// reconnect regains control), the last (epoch, cursor), written at most once a second, and the
// agent jobs opened as tabs.

const ATTACHMENT = "desk.attachment."
const CURSOR = "desk.cursor."
const ACTIVE = "desk.active-terminal"
const FLUSH_MS = 1000

const pendingCursors = new Map()
let flushTimer = null

function get(key) {
  try {
    return sessionStorage.getItem(key)
  } catch {
    return null
  }
}

function set(key, value) {
  try {
    if (value === null) sessionStorage.removeItem(key)
    else sessionStorage.setItem(key, value)
  } catch {
    // Storage full or disabled: the state stays in memory only.
  }
}

function randomId() {
  if (crypto.randomUUID) return crypto.randomUUID()
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

export function attachmentIdFor(ptyId) {
  const key = ATTACHMENT + ptyId
  let id = get(key)
  if (!id) {
    id = randomId()
    set(key, id)
  }
  return id
}

export function saveCursor(ptyId, epoch, cursor) {
  pendingCursors.set(ptyId, { epoch, cursor })
  if (!flushTimer) flushTimer = setTimeout(flushCursors, FLUSH_MS)
}

export function flushCursors() {
  clearTimeout(flushTimer)
  flushTimer = null
  for (const [ptyId, value] of pendingCursors) set(CURSOR + ptyId, JSON.stringify(value))
  pendingCursors.clear()
}

export function loadCursor(ptyId) {
  try {
    return JSON.parse(get(CURSOR + ptyId) ?? "null")
  } catch {
    return null
  }
}

export function forget(ptyId) {
  pendingCursors.delete(ptyId)
  set(ATTACHMENT + ptyId, null)
  set(CURSOR + ptyId, null)
}

const KNOWN = "desk.known-terminals"
const KNOWN_FIELDS = [
  "id",
  "title",
  "command",
  "args",
  "cwd",
  "group",
  "status",
  "exit_code",
  "size",
  "epoch",
  "created",
  "job",
]

/** The tab list as last seen, so a reload while the service is down still shows the tabs. */
export function saveKnownTerminals(infos) {
  const slim = infos.map((info) =>
    Object.fromEntries(KNOWN_FIELDS.map((key) => [key, info[key] ?? null])),
  )
  set(KNOWN, JSON.stringify(slim))
}

export function loadKnownTerminals() {
  try {
    const value = JSON.parse(get(KNOWN) ?? "[]")
    return Array.isArray(value) ? value.filter((info) => info && typeof info.id === "string") : []
  } catch {
    return []
  }
}

const OPENED_JOBS = "desk.opened-jobs"

/** The agent jobs the person opened as tabs in this window (the rest stay folded). */
export function loadOpenedJobs() {
  try {
    const value = JSON.parse(get(OPENED_JOBS) ?? "[]")
    return new Set(Array.isArray(value) ? value.filter((id) => typeof id === "string") : [])
  } catch {
    return new Set()
  }
}

export function saveOpenedJobs(ids) {
  set(OPENED_JOBS, ids.size ? JSON.stringify([...ids]) : null)
}

export function loadActive() {
  return get(ACTIVE)
}

export function saveActive(ptyId) {
  set(ACTIVE, ptyId)
}

addEventListener("pagehide", flushCursors)
