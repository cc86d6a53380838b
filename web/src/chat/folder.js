// The working folder of a new session: typed, picked from recent ones, or (in the desktop
// window) chosen in the native folder dialog. The window answers through pywebview's shared
// state, not its js_api, which needs eval (see desktop/app/folder_bridge.py): the page writes
// a request {id, start} and waits for the reply {id, path} with the same id.

import { signal } from "@preact/signals"

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
