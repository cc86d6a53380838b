// The chat's keyboard: where focus lands after an action (the prompt box, where the person
// continues), the shortcuts for the common actions, and the help overlay that lists them with
// the terminals' own. Alt+letter reaches no terminal program as a distinct key that matters
// here only while the chat or sidebar has the focus; F1 opens the help anywhere.

import { signal } from "@preact/signals"
import { useLayoutEffect, useRef } from "preact/hooks"
import { html } from "./html.js"

/** Moves the focus to the open session's prompt box once it is rendered (or to `fallback`). */
export function focusPrompt(fallback = null) {
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      const box = document.querySelector(".chat-area:not([hidden]) .composer-input")
      if (box) box.focus()
      else document.querySelector(fallback ?? "#new-session")?.focus()
    }),
  )
}

export const SHORTCUTS = [
  ["Alt+N", "New session"],
  ["Alt+P", "Focus the prompt box"],
  ["Alt+↑ / Alt+↓", "Previous / next session"],
  ["End", "In the messages: jump to the latest"],
  ["Enter / Shift+Enter", "Send / new line"],
  ["Escape", "In an empty prompt box: stop the agent"],
  ["Ctrl+Shift+T / Ctrl+Shift+W", "New / close terminal"],
  ["Ctrl+PageUp / Ctrl+PageDown", "Previous / next terminal"],
  ["Ctrl+Shift+F", "Search the terminal"],
  ["F1", "This help"],
]

export const helpOpen = signal(false)

/** The chat's shortcut for a keydown, or null. */
export function chatShortcut(event) {
  if (event.type !== "keydown" || event.ctrlKey || event.metaKey) return null
  if (event.key === "F1" && !event.altKey && !event.shiftKey) return "help"
  if (!event.altKey || event.shiftKey) return null
  if (event.code === "KeyN") return "new-session"
  if (event.code === "KeyP") return "focus-prompt"
  if (event.key === "ArrowUp") return "previous-session"
  if (event.key === "ArrowDown") return "next-session"
  return null
}

/**
 * Installs the shortcuts; `store` switches sessions, `newSession()` opens the new-session
 * dialog. Returns the function that removes them.
 */
export function installChatKeys({ store, newSession }) {
  const sessions = () => store.sessions.value.filter((s) => !s.parent_id)
  const step = (by) => {
    const list = sessions()
    if (list.length === 0) return
    const at = list.findIndex((s) => s.id === store.activeId.value)
    const next = list[(at + by + list.length) % list.length] ?? list[0]
    store.select(next.id)
    focusPrompt()
  }
  const onKey = (event) => {
    const action = chatShortcut(event)
    if (!action) return
    event.preventDefault()
    event.stopPropagation()
    if (action === "help") helpOpen.value = !helpOpen.value
    else if (action === "new-session") newSession()
    else if (action === "focus-prompt") focusPrompt()
    else if (action === "previous-session") step(-1)
    else if (action === "next-session") step(1)
  }
  addEventListener("keydown", onKey, true)
  return () => removeEventListener("keydown", onKey, true)
}

/** The help overlay: every shortcut, in a modal dialog. */
export function KeyboardHelp() {
  const ref = useRef(null)
  const open = helpOpen.value
  // A layout effect: the page behind stops being inert as the overlay closes, not a frame later.
  useLayoutEffect(() => {
    const dialog = ref.current
    if (open && !dialog.open) dialog.showModal()
    if (!open && dialog.open) dialog.close()
  }, [open])
  const close = () => (helpOpen.value = false)
  return html`<dialog
    ref=${ref}
    class="chat-dialog keyboard-help"
    aria-labelledby="keyboard-help-title"
    onCancel=${(e) => (e.preventDefault(), close())}
  >
    <h2 id="keyboard-help-title">Keyboard shortcuts</h2>
    <table>
      <tbody>
        ${SHORTCUTS.map(
          ([keys, what]) =>
            html`<tr key=${keys}>
              <th scope="row"><kbd>${keys}</kbd></th>
              <td>${what}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <div class="dialog-buttons">
      <button type="button" class="primary" onClick=${close}>Close</button>
    </div>
  </dialog>`
}
