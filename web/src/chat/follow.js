// Scroll that follows the person: where the message list's bottom really is (rows measured
// late grow it, so one jump falls short), whether the reader is there, and the "↓ Latest"
// button with the count of messages that arrived while they read above.

import { html } from "./html.js"

/** Within this many pixels of the bottom the reader is at the bottom (and is followed). */
export const BOTTOM_MARGIN = 40

export const atBottom = (el) => el.scrollHeight - el.scrollTop - el.clientHeight <= BOTTOM_MARGIN

/**
 * Scrolls `el` to its bottom and keeps it there while rows measured late grow the list, until
 * the height held for a few frames (or a second passed), or the person scrolled meanwhile
 * (wheel, touch, a key): then they lead. Returns a function that stops it.
 */
export function settleAtBottom(el) {
  let frame = 0
  let stable = 0
  let height = -1
  let stopped = false
  const stop = () => {
    stopped = true
    for (const type of PERSON) el.removeEventListener(type, stop)
  }
  for (const type of PERSON) el.addEventListener(type, stop, { passive: true })
  const step = () => {
    if (stopped) return
    el.scrollTop = el.scrollHeight
    stable = el.scrollHeight === height ? stable + 1 : 0
    height = el.scrollHeight
    if (stable >= 4 || ++frame > 60) return stop()
    requestAnimationFrame(step)
  }
  step()
  return stop
}

const PERSON = ["wheel", "touchstart", "keydown", "mousedown"]

/**
 * How many messages of `ids` came after `seenId` (the newest the reader had at the bottom);
 * 0 when it is the newest or unknown.
 */
export function unreadAfter(ids, seenId) {
  const at = seenId ? ids.lastIndexOf(seenId) : -1
  return at < 0 ? 0 : ids.length - 1 - at
}

/** The "↓ Latest" button, shown while the reader is above the bottom. */
export function LatestButton({ unread, onClick }) {
  const label = unread > 0 ? `Latest, ${unread} new` : "Latest"
  return html`<button
    type="button"
    class="chat-latest"
    aria-label=${label}
    title="Scroll to the latest message (End)"
    onClick=${onClick}
  >
    ↓ Latest${unread > 0 && html` <span class="chat-latest-count">${unread}</span>`}
  </button>`
}
