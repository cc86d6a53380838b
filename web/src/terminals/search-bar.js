// The search bar (Ctrl+Shift+F): the query runs in the tab in view, "n of m" or "No matches",
// highlights that follow the query while typing, and closing returns the view to where it was
// and the keyboard to the terminal. An open search moves to the tab shown next.

import { currentTheme } from "../theme.js"

// Search highlights (#RRGGBB, as the search addon wants): every match, and the current one.
const SEARCH_COLOURS = {
  light: { match: "#fff0a0", active: "#ffb454", ruler: "#c99a00", activeRuler: "#e07000" },
  dark: { match: "#5a4a00", active: "#b86a00", ruler: "#a88a20", activeRuler: "#ff9d2e" },
}

function searchDecorations(theme) {
  const c = SEARCH_COLOURS[theme] ?? SEARCH_COLOURS.light
  return {
    matchBackground: c.match,
    activeMatchBackground: c.active,
    matchOverviewRuler: c.ruler,
    activeMatchColorOverviewRuler: c.activeRuler,
  }
}

export class SearchBar {
  /**
   * elements: { bar, input, next, prev, close }; activeTab() -> the tab in view, or undefined.
   */
  constructor(elements, activeTab) {
    this.el = elements
    this.activeTab = activeTab
    this.from = null // { tab, atBottom, line }: where the view was when search opened
    this.results = null // the searched tab's onDidChangeResults subscription
    // "3 of 12" / "No matches", made here so the bar's markup stays static.
    this.count = document.createElement("span")
    this.count.className = "search-count"
    this.count.setAttribute("role", "status")
    this.count.setAttribute("aria-live", "polite")
  }

  get open() {
    return !this.el.bar.hidden
  }

  start() {
    const { input, next, prev, close } = this.el
    input.after(this.count)
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault()
        this.run(event.shiftKey)
      } else if (event.key === "Escape") {
        event.preventDefault()
        this.close()
      }
    })
    // The highlight follows the query as it is typed (and erased).
    input.addEventListener("input", () => this.run(false, true))
    next.addEventListener("click", () => this.run(false))
    prev.addEventListener("click", () => this.run(true))
    close.addEventListener("click", () => this.close())
  }

  run(backwards, incremental = false) {
    const tab = this.activeTab()
    const query = this.el.input.value
    if (!tab) return
    if (!query) {
      tab.search.clearDecorations()
      tab.term.clearSelection()
      this.#showCount(null)
      return
    }
    const options = {
      caseSensitive: false,
      incremental,
      decorations: searchDecorations(currentTheme()),
    }
    const found = backwards
      ? tab.search.findPrevious(query, options)
      : tab.search.findNext(query, options)
    // Without a match the addon reports nothing: say so here.
    if (!found) this.#showCount({ resultIndex: -1, resultCount: 0 })
  }

  /** The tab in view changed: an open search moves to it. */
  follow(tab) {
    if (!tab || !this.open || this.from?.tab === tab) return
    this.from?.tab.search.clearDecorations()
    this.#bind(tab)
    this.run(false, true)
  }

  show() {
    const tab = this.activeTab()
    if (!this.open || this.from?.tab !== tab) this.#bind(tab)
    this.el.bar.hidden = false
    this.el.input.focus()
    this.el.input.select()
    if (this.el.input.value) this.run(false, true)
  }

  close() {
    this.el.bar.hidden = true
    const tab = this.activeTab()
    tab?.search.clearDecorations()
    tab?.term.clearSelection()
    // Back to where the view was when the search opened (usually the bottom).
    const from = this.from
    if (from && from.tab === tab) {
      if (from.atBottom) tab.term.scrollToBottom()
      else tab.term.scrollToLine(from.line)
    }
    this.#bind(null)
    this.from = null
    this.#showCount(null)
    tab?.focus()
  }

  #showCount(results) {
    const none = results !== null && results.resultCount === 0
    const count = this.count
    if (results === null) count.textContent = ""
    else if (none) count.textContent = "No matches"
    else if (results.resultIndex < 0) count.textContent = `${results.resultCount}+ matches`
    else count.textContent = `${results.resultIndex + 1} of ${results.resultCount}`
    count.classList.toggle("none", none)
    this.el.input.setAttribute("aria-invalid", String(none))
  }

  /** Follows `tab`'s search results; remembers where its view was. */
  #bind(tab) {
    this.results?.dispose()
    this.results = null
    if (!tab) return
    const buffer = tab.term.buffer.active
    this.from = { tab, atBottom: buffer.viewportY >= buffer.baseY, line: buffer.viewportY }
    this.results = tab.search.onDidChangeResults((results) => this.#showCount(results))
  }
}
