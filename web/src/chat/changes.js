// Checkpoints in the chat: each turn's "N files changed +a −d" (from its steps' `checkpoint`
// records), the session's total changes in the header, and the per-message actions: "Revert to
// here" (with a confirmation listing the files and any conflicts), "Undo revert" on reverted
// messages, "Fork from here". The diff view itself is diff-view.js. A turn older than the
// checkpoints kept (409 checkpoint.expired) says so on the turn and offers no revert, nor do
// the turns before it (retention keeps a session's latest turns).

import { computed, signal } from "@preact/signals"
import { useEffect, useRef, useState } from "preact/hooks"
import { api } from "../api.js"
import { html } from "./html.js"
import { openDiff } from "./diff-view.js"
import { checkpointError, keptTurns } from "./error-words.js"
import "./checkpoints.css"

const enc = encodeURIComponent

/** The revert being confirmed: {sessionId, messageId, thread} or null. */
const confirming = signal(null)

const expiries = new WeakMap() // thread -> signal({user, turns} | null): the latest turn refused

function expiry(thread) {
  let found = expiries.get(thread)
  if (!found) expiries.set(thread, (found = signal(null)))
  return found
}

/** Whether the turn of user message `user` is known to be older than the snapshots kept. */
export function isExpired(thread, user) {
  const latest = expiry(thread).value
  if (!latest) return false
  const ids = thread.ids.value
  const at = ids.indexOf(user)
  return at >= 0 && at <= ids.indexOf(latest.user)
}

/** Learns from a 409 `checkpoint.expired` for the turn of `user` (and so every earlier one). */
export function noteExpired(thread, user, error) {
  if (!thread || !user || error?.type !== "checkpoint.expired" || isExpired(thread, user)) return
  expiry(thread).value = { user, turns: keptTurns(error) }
}

/**
 * `ids` in list order, `message(id)` the message: a Map from the id of each turn's last
 * assistant message to the turn's changes {user, files, additions, deletions} (turns that
 * changed nothing are left out). A file changed by two steps counts once; lines add up.
 */
export function turnChanges(ids, message) {
  const out = new Map()
  let user = null
  let turn = null
  let last = null
  const close = () => {
    if (last && turn && turn.files.size) out.set(last, turn)
    turn = null
    last = null
  }
  for (const id of ids) {
    const m = message(id)
    if (!m) continue
    if (m.type === "user") {
      close()
      user = id
    }
    if (m.type !== "assistant") continue
    last = id
    const files = m.checkpoint?.files
    if (!Array.isArray(files)) continue
    turn ??= { user, files: new Set(), additions: 0, deletions: 0 }
    for (const f of files) {
      turn.files.add(f.path)
      turn.additions += f.additions ?? 0
      turn.deletions += f.deletions ?? 0
    }
  }
  close()
  return out
}

/** Whether the thread's reverts can still be undone: reverted messages, no prompt after them. */
export function revertPending(ids, message) {
  let reverted = false
  for (const id of ids) {
    const m = message(id)
    if (!m) continue
    if (m.reverted) reverted = true
    else if (reverted && m.type === "user") return false
  }
  return reverted
}

const derived = new WeakMap()
function of(thread) {
  let found = derived.get(thread)
  if (!found) {
    const read = (id) => thread.messages.get(id)?.value
    found = {
      turns: computed(() => turnChanges(thread.ids.value, read)),
      pending: computed(() => revertPending(thread.ids.value, read)),
      version: computed(() => {
        let n = 0
        for (const id of thread.ids.value) {
          const m = read(id)
          if (m?.checkpoint) n += 1
          if (m?.reverted) n += 1000
        }
        return n
      }),
    }
    derived.set(thread, found)
  }
  return found
}

export const summary = (files, additions, deletions) =>
  `${files} file${files === 1 ? "" : "s"} changed +${additions} −${deletions}`

/** Under a turn's last assistant message: its changes; a click opens the diff view. */
export function TurnChanges({ thread, messageId }) {
  const turn = of(thread).turns.value.get(messageId)
  if (!turn) return null
  const label = summary(turn.files.size, turn.additions, turn.deletions)
  if (turn.user && isExpired(thread, turn.user))
    return html`<span class="turn-changes turn-expired" data-expired="true"
      >${label} · too old to show: Desk keeps the last ${expiry(thread).value.turns} turns'
      snapshots</span
    >`
  return html`<button
    type="button"
    class="link-button turn-changes"
    title="Show the diff of this turn"
    onClick=${() =>
      openDiff(thread.sessionId, turn.user, label, (e) => noteExpired(thread, turn.user, e))}
  >
    ${label}
  </button>`
}

/** The session's total changes, for the chat header (read again when a turn or revert lands). */
export function SessionChanges({ thread }) {
  const version = of(thread).version.value
  const [total, setTotal] = useState(null)
  useEffect(() => {
    let live = true
    api("GET", `/api/session/${enc(thread.sessionId)}/changes`).then(
      (data) => live && setTotal(data?.files ?? []),
      () => live && setTotal(null),
    )
    return () => (live = false)
  }, [thread.sessionId, version])
  if (!total?.length) return null
  const add = total.reduce((n, f) => n + f.additions, 0)
  const del = total.reduce((n, f) => n + f.deletions, 0)
  const label = summary(total.length, add, del)
  return html`<button
    type="button"
    class="link-button session-changes"
    title="Show every change of this session"
    onClick=${() => openDiff(thread.sessionId, null, label)}
  >
    ${label}
  </button>`
}

/** A message's checkpoint actions: revert (user messages), undo a revert, fork. */
export function MessageActions({ thread, store, message, busy }) {
  const pending = of(thread).pending.value
  const [error, setError] = useState(null)
  const act = async (work) => {
    setError(null)
    try {
      await work()
    } catch (e) {
      setError(e.message)
    }
  }
  const sid = thread.sessionId
  const expired = message.type === "user" && isExpired(thread, message.id)
  const latest = expired && expiry(thread).value
  return html`<div
    class="message-actions"
    data-for=${message.id}
    data-reverted=${message.reverted ? "true" : undefined}
  >
    ${
      message.type === "user" &&
      !message.reverted &&
      !expired &&
      html`<button
        type="button"
        class="link-button revert-here"
        disabled=${busy}
        onClick=${() => (confirming.value = { sessionId: sid, messageId: message.id, thread })}
      >
        Revert to here
      </button>`
    }
    ${
      latest?.user === message.id &&
      html`<span class="turn-expired" role="status"
        >This turn is too old to undo: Desk keeps the last ${latest.turns} turns' snapshots.</span
      >`
    }
    ${
      message.reverted &&
      pending &&
      message.type === "user" &&
      html`<button
        type="button"
        class="link-button undo-revert"
        disabled=${busy}
        onClick=${() => act(() => api("POST", `/api/session/${enc(sid)}/unrevert`, { body: {} }))}
      >
        Undo revert
      </button>`
    }
    <button
      type="button"
      class="link-button fork-here"
      disabled=${busy}
      onClick=${() => act(() => fork(thread, store, message.id))}
    >
      Fork from here
    </button>
    ${error && html`<span class="form-error" role="alert">${error}</span>`}
  </div>`
}

async function fork(thread, store, messageId) {
  const session = await api("POST", `/api/session/${enc(thread.sessionId)}/fork`, {
    body: { message_id: messageId },
  })
  if (session?.id) store.select(session.id)
}

function FileList({ title, paths, kind }) {
  if (!paths.length) return null
  return html`<h3>${title}</h3>
    <ul class=${`revert-files ${kind}`}>
      ${paths.map((p) => html`<li key=${p}><bdi>${p}</bdi></li>`)}
    </ul>`
}

/** The confirmation of a revert: what it restores, the conflicts it leaves, what it cannot. */
function RevertConfirm({ target, onClose }) {
  const [plan, setPlan] = useState(null)
  const [error, setError] = useState(null)
  const [working, setWorking] = useState(false)
  const path = `/api/session/${enc(target.sessionId)}/revert`
  const failed = (e) => {
    noteExpired(target.thread, target.messageId, e)
    setError(checkpointError(e, "undo"))
  }
  useEffect(() => {
    api("POST", path, { body: { message_id: target.messageId, preview: true } }).then(
      setPlan,
      failed,
    )
  }, [target])
  const run = async (force) => {
    setWorking(true)
    try {
      await api("POST", path, { body: { message_id: target.messageId, force } })
      onClose()
    } catch (e) {
      failed(e)
      setWorking(false)
    }
  }
  return html`<div class="revert-confirm">
    <h2>Revert to this message?</h2>
    <p class="hint">
      The files the agent changed from here on go back to how they were, and this message and every
      later one are hidden from the model (you still see them). Undo is possible until the next
      prompt. Files the project's .gitignore ignores, and files over 10 MiB, are not restored.
    </p>
    ${error && html`<p class="form-error" role="alert">${error}</p>`}
    ${!plan && !error && html`<p class="placeholder">Reading the changes…</p>`}
    ${
      plan &&
      html`<${FileList} title="Files restored" paths=${plan.restored} kind="restored" />
        <${FileList}
          title="Conflicts: changed since by someone else, left as they are"
          paths=${plan.conflicts}
          kind="conflicts"
        />
        ${!plan.restored.length && !plan.conflicts.length && html`<p class="hint">No file changes to restore.</p>`}
        ${plan.ignored?.length > 0 && html`<p class="hint revert-ignored">Not restored (ignored): ${plan.ignored.slice(0, 10).join(", ")}${plan.ignored.length > 10 ? "…" : ""}</p>`}`
    }
    <div class="dialog-buttons">
      <button type="button" onClick=${onClose}>Cancel</button>
      ${
        plan?.conflicts.length > 0 &&
        html`<button
          type="button"
          class="revert-force"
          disabled=${working}
          onClick=${() => run(true)}
        >
          Revert and overwrite conflicts
        </button>`
      }
      <button
        type="button"
        class="primary revert-confirm-button"
        disabled=${!plan || working}
        onClick=${() => run(false)}
      >
        Revert
      </button>
    </div>
  </div>`
}

/** Mounted once in the chat view: the revert confirmation dialog. */
export function RevertDialog() {
  const ref = useRef(null)
  const target = confirming.value
  useEffect(() => {
    const dialog = ref.current
    if (target && !dialog.open) dialog.showModal()
    if (!target && dialog.open) dialog.close()
  }, [target])
  const close = () => (confirming.value = null)
  return html`<dialog
    ref=${ref}
    class="chat-dialog revert-dialog"
    aria-label="Revert to this message"
    onCancel=${(e) => (e.preventDefault(), close())}
  >
    ${target && html`<${RevertConfirm} key=${target.messageId} target=${target} onClose=${close} />`}
  </dialog>`
}

const hiddenBy = new WeakMap() // thread -> ids the reverts since the last prompt hid

/**
 * The projection's revert rules for the loaded messages (desktop/events/projector.py): a
 * revert marks its message and every later one not yet marked, an unrevert unmarks what the
 * reverts since the last prompt marked, a prompt makes them final. Call before the thread
 * applies the event (its seq decides whether it is new).
 */
export function applyCheckpointEvent(thread, event) {
  if (!thread || event.seq <= thread.seq || thread.state.peek() === "idle") return
  const hidden = hiddenBy.get(thread) ?? []
  const mark = (id, reverted) => {
    const sig = thread.messages.get(id)
    if (!sig) return
    const next = { ...sig.peek() }
    if (reverted) next.reverted = true
    else delete next.reverted
    sig.value = next
    thread.known.set(id, event.seq)
  }
  if (event.type === "session.reverted") {
    const ids = thread.ids.peek()
    const at = ids.indexOf(event.data.message_id)
    if (at < 0) return
    for (const id of ids.slice(at)) {
      if (thread.messages.get(id)?.peek().reverted) continue
      mark(id, true)
      hidden.push(id)
    }
    hiddenBy.set(thread, hidden)
  } else if (event.type === "session.unreverted") {
    for (const id of hidden) mark(id, false)
    hiddenBy.delete(thread)
  } else if (event.type === "session.prompted") {
    hiddenBy.delete(thread)
  }
}
