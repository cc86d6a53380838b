// @ts-check
// The terminal area's state, in signals: the strip's order, the tab in view, whether the first
// list has loaded, the size of the panes, the latest notice, the user's last keystroke, the
// journal of tabs opened or closed here (what a terminal list from the service must not undo),
// and the agent jobs folded out of the strip.

import { signal } from "@preact/signals"

/**
 * @template T
 * @typedef {import("@preact/signals").Signal<T>} Signal
 */

/** @typedef {{ cols: number, rows: number }} Size */

export class TerminalStore {
  constructor() {
    /** Terminal ids in strip order (each group's contiguous). @type {Signal<string[]>} */
    this.order = signal([])
    /** Agent job terminals without a tab here (behind their session's chip), by id.
     * @type {Signal<Map<string, import("./agent-jobs.js").JobInfo>>} */
    this.folded = signal(new Map())
    /** The tab in view. @type {Signal<string | null>} */
    this.activeId = signal(null)
    /** The first terminal list (or the known tabs, offline) has been applied. */
    this.loaded = signal(false)
    /** Terminal lists applied (tests wait on it). */
    this.syncs = signal(0)
    /** Columns and rows the panes fit, measured on the tab in view. @type {Signal<Size | null>} */
    this.paneSize = signal(null)
    /** The latest notice for the user (a new object each time). @type {Signal<{ text: string } | null>} */
    this.notice = signal(null)
    /** The tab the user last showed in any window, as last seen. @type {Signal<string | null>} */
    this.sharedActive = signal(null)
    /** Journal clock: counts tabs opened or closed here. */
    this.changes = 0
    /** Terminal id -> the journal clock when a tab for it came or went. @type {Map<string, number>} */
    this.changedAt = new Map()
    // The user's last key in a terminal (background tabs yield to typing): read per write, so
    // a plain number rather than a signal.
    this.lastInputAt = -Infinity
  }

  /** Notes that a tab for `id` came or went here. @param {string} id */
  journal(id) {
    this.changedAt.set(id, ++this.changes)
  }

  /** Tab `id` is the one in view and the page is visible. @param {string} id */
  shown(id) {
    return id === this.activeId.value && document.visibilityState === "visible"
  }

  /** The user typed into a terminal. */
  typed() {
    this.lastInputAt = performance.now()
  }

  /** Milliseconds since the user last typed into a terminal. */
  typingAgo() {
    return performance.now() - this.lastInputAt
  }

  /** Shows `text` to the user. @param {string} text */
  say(text) {
    this.notice.value = { text }
  }
}
