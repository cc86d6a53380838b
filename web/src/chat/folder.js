// The working folder of a new session: typed, picked from recent ones, or (in the desktop
// window) chosen in the native folder dialog. The window answers through pywebview's shared
// state, not its js_api, which needs eval (see desktop/shell/folder_bridge.py): the page writes
// a request {id, start} and waits for the reply {id, path} with the same id.

const OFFERED_KEY = "folder_dialog"
const REQUEST_KEY = "folder_request"
const REPLY_KEY = "folder_reply"

/** True when the window offers a native folder dialog. */
export function nativeFolderDialog() {
  return window.pywebview?.state?.[OFFERED_KEY] === true
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
