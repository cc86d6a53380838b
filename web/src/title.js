// The window's title, set here and nowhere else: it names what the person works in (the chat's
// session while they chat, the terminal tab in view while they use the terminals) and, while a
// call waits for them and the window is in the background, says "Waiting for you". The chat and
// the terminals only report their parts through `windowTitle`.

import { effect, signal } from "@preact/signals"

export const WAITING_PREFIX = "Waiting for you · "

/** The parts the title is made of, set by their owners. */
export const windowTitle = {
  /** The open chat session's title, or null when none is open. */
  session: signal(null),
  /** The terminal tab in view's title, or null. */
  terminal: signal(null),
  /** How many calls wait for the person. */
  waiting: signal(0),
}

/**
 * The title for these parts. `area` is where the person last worked: "chat", "terminals" or
 * null (not yet known: the session, when one is open); `background`: the window is not in front.
 */
export function composeTitle({ session, terminal, area, waiting, background }) {
  const name = area === "terminals" ? (terminal ?? session) : (session ?? terminal)
  const base = name ? `${name} — Desk` : "Desk"
  return waiting > 0 && background ? WAITING_PREFIX + base : base
}

/** Where an element is: "chat" (the chat or the sessions), "terminals", or null (elsewhere). */
function areaOf(target) {
  if (!target?.closest) return null
  if (target.closest("#terminal-area")) return "terminals"
  if (target.closest("#chat-area, #sessions-sidebar")) return "chat"
  return null
}

/** Keeps document.title composed from `windowTitle`, following the person's focus and clicks. */
export function installWindowTitle() {
  const area = signal(null)
  const background = signal(false)
  const follow = (event) => {
    const where = areaOf(event.target)
    if (where) area.value = where
  }
  document.addEventListener("focusin", follow, true)
  document.addEventListener("pointerdown", follow, true)
  const place = () => {
    background.value = document.hidden || !document.hasFocus()
  }
  place()
  addEventListener("focus", place)
  addEventListener("blur", place)
  document.addEventListener("visibilitychange", place)
  effect(() => {
    const title = composeTitle({
      session: windowTitle.session.value,
      terminal: windowTitle.terminal.value,
      area: area.value,
      waiting: windowTitle.waiting.value,
      background: background.value,
    })
    if (document.title !== title) document.title = title
  })
}

/** The chat's open session names the title while the person chats (`store`: the chat store). */
export function followChatSession(store) {
  effect(() => {
    const id = store.activeId.value
    const session = id ? store.sessions.value.find((s) => s.id === id) : null
    windowTitle.session.value = session ? session.title || "Untitled" : null
  })
}
