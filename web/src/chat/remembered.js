// Where the person was, remembered across loads in localStorage: the chat session open and
// whether the keyboard was last in the chat (the sidebar or the chat area) or the terminals;
// from both, where the keyboard goes when the page opens.

const SESSION_KEY = "desk.chat.active"
const KEYBOARD_KEY = "desk.keyboard"

export function rememberedSession() {
  return localStorage.getItem(SESSION_KEY)
}

export function rememberSession(id) {
  if (id) localStorage.setItem(SESSION_KEY, id)
  else localStorage.removeItem(SESSION_KEY)
}

/**
 * Where the keyboard goes when the page opens: the prompt box ("chat") when the page opens on
 * a remembered chat session, unless the person was last in the terminals; the terminal
 * otherwise ("terminals").
 */
export function keyboardAtLoad() {
  if (!rememberedSession()) return "terminals"
  return localStorage.getItem(KEYBOARD_KEY) === "terminals" ? "terminals" : "chat"
}

/** Remembers which part the focus was last in: inside `terminals` or inside one of `chat`. */
export function trackKeyboard({ terminals, chat }) {
  let last = localStorage.getItem(KEYBOARD_KEY)
  const onFocus = (event) => {
    const target = event.target
    const area = terminals?.contains(target)
      ? "terminals"
      : chat.some((part) => part?.contains(target))
        ? "chat"
        : null
    if (!area || area === last) return
    last = area
    localStorage.setItem(KEYBOARD_KEY, area)
  }
  document.addEventListener("focusin", onFocus)
  return () => document.removeEventListener("focusin", onFocus)
}
