// The working folder of a new session: typed (the service says where a typed path leads,
// `~` included, and which folder an empty one means), picked from recent ones, or (in the
// desktop window) chosen in the native folder dialog. The window answers through pywebview's
// shared state, not its js_api, which needs eval (see desktop/app/folder_bridge.py): the page
// writes a request {id, start} and waits for the reply {id, path} with the same id.

import { signal } from "@preact/signals"
import { useEffect, useState } from "preact/hooks"
import { api } from "../api.js"

/** How long typing pauses before the typed folder is resolved. */
const RESOLVE_DELAY_MS = 200

const OFFERED_KEY = "folder_dialog"
const REQUEST_KEY = "folder_request"
const REPLY_KEY = "folder_reply"

// pywebview injects its state before its bridge to Python is up: under QtWebEngine a write
// made before the QWebChannel connects is retried once, 100 ms later, and then lost
// (webview/js/api.js). A Browse… pressed in that window opened nothing, so the dialog is
// offered only once pywebview says the bridge is ready. `_QWebChannel` is pywebview's own
// field: the fallback for a page whose modules ran after the event (a late-loaded chunk).
const bridgeReady = signal(Boolean(window.pywebview?._QWebChannel))
window.addEventListener("pywebviewready", () => {
  bridgeReady.value = true
})

/** True when the window offers a native folder dialog and can be asked for one (a signal
 * read: a component re-renders when the bridge comes up). */
export function nativeFolderDialog() {
  return bridgeReady.value && window.pywebview?.state?.[OFFERED_KEY] === true
}

/** The chosen folder, or null when cancelled or unavailable. */
export function pickFolder(start) {
  if (!nativeFolderDialog()) return Promise.resolve(null)
  const state = window.pywebview.state
  const id = crypto.randomUUID()
  return new Promise((resolve) => {
    const onChange = (event) => {
      const { key, value } = event.detail ?? {}
      if (key !== REPLY_KEY || value?.id !== id) return
      state.removeEventListener("change", onChange)
      resolve(typeof value.path === "string" && value.path ? value.path : null)
    }
    state.addEventListener("change", onChange)
    state[REQUEST_KEY] = { id, start: start || null }
  })
}

/** GET /api/folder: `{default}` (the service's folder), and for a `path` `{path, exists}`. */
export function resolveFolder(path = "") {
  return api("GET", `/api/folder${path ? `?path=${encodeURIComponent(path)}` : ""}`)
}

/**
 * The line under the folder field for what the service answered about `typed`: where it leads
 * when that is not what was typed (`~`, a relative path, a link), or that nothing is there.
 */
export function folderHint(typed, answer) {
  const wanted = typed.trim()
  if (!wanted || !answer?.path || answer.typed !== wanted) return null
  if (!answer.exists) return { error: true, text: `Not an existing folder: ${answer.path}` }
  return answer.path === wanted ? null : { error: false, text: `Opens in ${answer.path}` }
}

/** The service's answer for `typed` (resolved once typing pauses) and its default folder. */
export function useResolvedFolder(typed) {
  const [fallback, setFallback] = useState(null)
  const [answer, setAnswer] = useState(null)
  useEffect(() => {
    let live = true
    resolveFolder().then(
      (data) => live && setFallback(data?.default ?? null),
      () => null, // the placeholder stays general
    )
    return () => (live = false)
  }, [])
  const wanted = typed.trim()
  useEffect(() => {
    if (!wanted) return setAnswer(null)
    let live = true
    const timer = setTimeout(
      () =>
        resolveFolder(wanted).then(
          (data) => live && setAnswer({ ...data, typed: wanted }),
          () => live && setAnswer(null), // the service's own error says it on submit
        ),
      RESOLVE_DELAY_MS,
    )
    return () => ((live = false), clearTimeout(timer))
  }, [wanted])
  return { fallback, hint: folderHint(typed, answer) }
}
