// The sessions sidebar: live status, titles, new/rename/delete; collapsible and resizable
// (a fixed width took half of a small window). Layout state lives in localStorage.

import { signal } from "@preact/signals"
import { useEffect, useRef, useState } from "preact/hooks"
import { html } from "./html.js"
import { SessionStatusIcon } from "./icons.js"
import { nativeFolderDialog, pickFolder, useResolvedFolder } from "./folder.js"
import { SettingsButton } from "./settings-dialog.js"
import { useLinks } from "./job-links.js"
import { SessionMark, useWaitingTitle } from "./waiting.js"
import { focusPrompt } from "./keyboard.js"

const LAYOUT_KEY = "desk.sidebar"
export const SIDEBAR_MIN = 160
export const SIDEBAR_MAX = 480

function loadLayout() {
  try {
    const saved = JSON.parse(localStorage.getItem(LAYOUT_KEY) ?? "null")
    if (saved && typeof saved.width === "number")
      return { width: saved.width, collapsed: Boolean(saved.collapsed) }
  } catch {
    // unreadable: defaults
  }
  // Small windows start with the sidebar folded away.
  return { width: 220, collapsed: window.innerWidth < 560 }
}

export const layout = signal(loadLayout())

export function setLayout(change) {
  layout.value = { ...layout.value, ...change }
  try {
    localStorage.setItem(LAYOUT_KEY, JSON.stringify(layout.value))
  } catch {
    // storage unavailable: the layout lasts for this page only
  }
}

/** Width limits for this window: never more than half of it. */
export function clampWidth(width) {
  const max = Math.max(SIDEBAR_MIN, Math.min(SIDEBAR_MAX, Math.floor(window.innerWidth / 2)))
  return Math.round(Math.min(max, Math.max(SIDEBAR_MIN, width)))
}

function Resizer({ nav }) {
  const onPointerDown = (event) => {
    if (event.button !== 0) return
    event.preventDefault()
    const handle = event.currentTarget
    handle.setPointerCapture(event.pointerId)
    const { left, right } = nav.getBoundingClientRect()
    const grab = right - event.clientX // where on the handle the pointer took it
    const move = (e) => setLayout({ width: clampWidth(e.clientX - left + grab) })
    const up = () => {
      handle.removeEventListener("pointermove", move)
      handle.removeEventListener("pointerup", up)
      handle.removeEventListener("pointercancel", up)
    }
    handle.addEventListener("pointermove", move)
    handle.addEventListener("pointerup", up)
    handle.addEventListener("pointercancel", up)
  }
  const onKeyDown = (event) => {
    const step = event.shiftKey ? 64 : 16
    if (event.key === "ArrowLeft") setLayout({ width: clampWidth(layout.value.width - step) })
    else if (event.key === "ArrowRight") setLayout({ width: clampWidth(layout.value.width + step) })
    else return
    event.preventDefault()
  }
  return html`<div
    class="sidebar-resizer"
    role="separator"
    aria-orientation="vertical"
    aria-label="Resize sessions sidebar"
    aria-valuemin=${SIDEBAR_MIN}
    aria-valuemax=${SIDEBAR_MAX}
    aria-valuenow=${clampWidth(layout.value.width)}
    tabindex="0"
    onPointerDown=${onPointerDown}
    onKeyDown=${onKeyDown}
  ></div>`
}

/** A modal <dialog> that is open while mounted. */
function Modal({ label, onClose, children, className }) {
  const ref = useRef(null)
  useEffect(() => {
    const dialog = ref.current
    if (!dialog.open) dialog.showModal()
    return () => dialog.open && dialog.close()
  }, [])
  return html`<dialog
    ref=${ref}
    class=${`chat-dialog ${className ?? ""}`}
    aria-label=${label}
    onCancel=${(e) => (e.preventDefault(), onClose())}
  >
    ${children}
  </dialog>`
}

function NewSessionDialog({ store, onClose }) {
  const [directory, setDirectory] = useState(store.recentFolders.value[0] ?? "")
  const [title, setTitle] = useState("")
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const native = nativeFolderDialog()
  const { fallback, hint } = useResolvedFolder(directory)
  const submit = async (event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const wanted = { title: title.trim(), directory: directory.trim() }
      let session
      try {
        session = await store.createSession(wanted)
      } catch (e) {
        // A whole home folder (or /): the service asks the person to confirm it first.
        if (e.type !== "session.confirm_folder" || !window.confirm(e.message)) throw e
        session = await store.createSession({ ...wanted, confirm: true })
      }
      store.select(session.id)
      onClose()
      focusPrompt()
    } catch (e) {
      setError(e.message)
      setBusy(false)
    }
  }
  const browse = async () => {
    const chosen = await pickFolder(directory)
    if (chosen) setDirectory(chosen)
  }
  return html`<${Modal} label="New session" onClose=${onClose} className="new-session-dialog">
    <form onSubmit=${submit}>
      <h2>New session</h2>
      <label for="new-session-folder">Working folder</label>
      <div class="folder-row">
        <input
          id="new-session-folder"
          name="directory"
          list="recent-folders"
          value=${directory}
          autocomplete="off"
          spellcheck="false"
          placeholder=${fallback ? `The service's folder: ${fallback}` : "The service's folder"}
          aria-describedby="new-session-folder-hint"
          onInput=${(e) => setDirectory(e.currentTarget.value)}
        />
        ${native && html`<button type="button" onClick=${browse}>Browse…</button>`}
      </div>
      <p
        id="new-session-folder-hint"
        class=${`hint folder-hint${hint?.error ? " folder-hint-missing" : ""}`}
        aria-live="polite"
      >
        ${hint && html`<bdi>${hint.text}</bdi>`}
      </p>
      <datalist id="recent-folders">
        ${store.recentFolders.value.map((folder) => html`<option key=${folder} value=${folder} />`)}
      </datalist>
      ${
        store.recentFolders.value.length > 0 &&
        html`<ul class="recent-folders" aria-label="Recent folders">
          ${store.recentFolders.value.map(
            (folder) =>
              html`<li key=${folder}>
                <button type="button" class="link-button" onClick=${() => setDirectory(folder)}>
                  ${folder}
                </button>
              </li>`,
          )}
        </ul>`
      }
      <label for="new-session-title">Title <span class="optional">(optional)</span></label>
      <input
        id="new-session-title"
        name="title"
        value=${title}
        onInput=${(e) => setTitle(e.currentTarget.value)}
      />
      ${error && html`<p class="form-error" role="alert">${error}</p>`}
      <div class="dialog-buttons">
        <button type="button" onClick=${onClose}>Cancel</button>
        <button type="submit" class="primary" disabled=${busy}>Create session</button>
      </div>
    </form>
  <//>`
}

function DeleteDialog({ store, session, onClose }) {
  const [error, setError] = useState(null)
  const confirm = async (event) => {
    event.preventDefault()
    try {
      const wasActive = store.activeId.value === session.id
      await store.deleteSession(session.id)
      // The person continues in the next session (or creates one).
      const next = store.sessions.value.find((s) => !s.parent_id && s.id !== session.id)
      if (wasActive && next) store.select(next.id)
      onClose()
      focusPrompt()
    } catch (e) {
      setError(e.message)
    }
  }
  return html`<${Modal} label="Delete session" onClose=${onClose} className="delete-session-dialog">
    <form onSubmit=${confirm}>
      <h2>Delete session?</h2>
      <p>
        “${session.title || "Untitled"}” and all its messages will be deleted. This cannot be
        undone.
      </p>
      ${error && html`<p class="form-error" role="alert">${error}</p>`}
      <div class="dialog-buttons">
        <button type="button" onClick=${onClose}>Cancel</button>
        <button type="submit" class="danger">Delete session</button>
      </div>
    </form>
  <//>`
}

function SessionItem({ store, session, active, onDelete }) {
  const [renaming, setRenaming] = useState(false)
  const [error, setError] = useState(null)
  const settled = useRef(false) // Enter/Escape and the blur that follows end one rename once
  const title = session.title || "Untitled"
  const start = () => {
    settled.current = false
    setRenaming(true)
  }
  const finish = async (value, save) => {
    if (settled.current) return
    settled.current = true
    setRenaming(false)
    const next = value.trim()
    if (!save || !next || next === session.title) return
    try {
      setError(null)
      await store.renameSession(session.id, next)
    } catch (e) {
      setError(e.message)
    }
  }
  return html`<li
    class="session-item"
    data-id=${session.id}
    data-status=${session.status}
    aria-current=${active ? "true" : undefined}
  >
    ${
      renaming
        ? html`<input
            class="session-rename"
            aria-label="Session title"
            value=${session.title}
            ref=${(el) => el && el.focus()}
            onKeyDown=${(e) => {
              if (e.key === "Enter") finish(e.currentTarget.value, true).then(() => focusPrompt())
              else if (e.key === "Escape") finish("", false).then(() => focusPrompt())
            }}
            onBlur=${(e) => finish(e.currentTarget.value, true)}
          />`
        : html`<button
              type="button"
              class="session-open"
              onClick=${() => store.select(session.id)}
              onDblClick=${start}
              title=${session.directory ? `${title} — ${session.directory}` : title}
            >
              <${SessionMark} session=${session} Icon=${SessionStatusIcon} />
              <span class="session-title">${title}</span>
            </button>
            <span class="session-actions">
              <button
                type="button"
                class="icon-button small"
                aria-label=${`Rename ${title}`}
                title="Rename"
                onClick=${start}
              >
                ✎
              </button>
              <button
                type="button"
                class="icon-button small"
                aria-label=${`Delete ${title}`}
                title="Delete"
                onClick=${() => onDelete(session)}
              >
                ×
              </button>
            </span>`
    }
    ${error && html`<p class="form-error" role="alert">${error}</p>`}
  </li>`
}

export function Sidebar({ store, nav }) {
  const [dialog, setDialog] = useState(null) // null | {kind: "new"} | {kind: "delete", session}
  const links = useLinks()
  const waitingCount = links
    ? store.sessions.value.filter((s) => links.jobs.of(s.id).permissions.value.length > 0).length
    : 0
  useWaitingTitle(waitingCount)
  // Alt+N (keyboard.js) asks for the new-session dialog, with the sidebar shown.
  useEffect(() => {
    const open = () => {
      if (layout.value.collapsed) setLayout({ collapsed: false })
      setDialog({ kind: "new" })
    }
    addEventListener("desk:new-session", open)
    return () => removeEventListener("desk:new-session", open)
  }, [])
  const sessions = store.sessions.value.filter((s) => !s.parent_id)
  const children = new Map()
  for (const s of store.sessions.value)
    if (s.parent_id) children.set(s.parent_id, [...(children.get(s.parent_id) ?? []), s])
  const item = (s, depth) =>
    html` <${SessionItem}
        key=${s.id}
        store=${store}
        session=${s}
        active=${store.activeId.value === s.id}
        onDelete=${(session) => setDialog({ kind: "delete", session })}
      />
      ${
        (children.get(s.id) ?? []).length > 0 &&
        html`<li class="session-children" key=${`${s.id}-children`}>
          <ul role="list">
            ${children.get(s.id).map((c) => item(c, depth + 1))}
          </ul>
        </li>`
      }`
  return html`
    <div class="sessions-head">
      <h2 class="sidebar-title">Sessions</h2>
      <span class="header-spacer"></span>
      <${SettingsButton} />
      <button
        type="button"
        class="icon-button"
        id="new-session"
        aria-label="New session"
        title="New session"
        onClick=${() => setDialog({ kind: "new" })}
      >
        +
      </button>
    </div>
    ${store.listState.value === "error" && html`<p class="form-error" role="alert">Could not load sessions.</p>`}
    ${
      sessions.length === 0 &&
      store.listState.value === "ready" &&
      html`<div class="placeholder sessions-empty">
        <p>No sessions yet. A session is a conversation with the agent about one folder.</p>
        <button type="button" class="primary" onClick=${() => setDialog({ kind: "new" })}>
          Start a session
        </button>
      </div>`
    }
    <ul class="session-list" role="list">
      ${sessions.map((s) => item(s, 0))}
    </ul>
    <${Resizer} nav=${nav} />
    ${dialog?.kind === "new" && html`<${NewSessionDialog} store=${store} onClose=${() => setDialog(null)} />`}
    ${dialog?.kind === "delete" && html`<${DeleteDialog} store=${store} session=${dialog.session} onClose=${() => setDialog(null)} />`}
  `
}
