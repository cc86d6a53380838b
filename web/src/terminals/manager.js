// The terminal area: the set of tabs (one per terminal the service knows), grouped by the
// terminals' `group`, their order (persisted through /api/ui/prefs as one list, each group's
// terminals contiguous), the active tab, live updates from the event stream, shortcuts, rename,
// drag to reorder, close with confirmation, and pane sizing.

import { api } from "../api.js"
import { currentTheme, onThemeChange } from "../theme.js"
import { groupKeyOf, groupLabel, groupOrder } from "./groups.js"
import { shortcutFor } from "./shortcuts.js"
import { GroupedStrip } from "./strip.js"
import {
  forget,
  loadActive,
  loadKnownTerminals,
  saveActive,
  saveKnownTerminals,
} from "./storage.js"
import { TerminalTab } from "./tab.js"

const ORDER_KEY = "terminal-order"
// The tab the user last showed in any window: a new window opens on it.
const ACTIVE_KEY = "terminal-active"
const SHARE_ACTIVE_MS = 250
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
const RESIZE_DEBOUNCE_MS = 60
const NOTICE_MS = 8000

export class TerminalManager {
  constructor({ connection, elements }) {
    this.connection = connection
    this.el = elements
    this.tabs = new Map()
    this.order = []
    this.activeId = null
    this.paneSize = null
    this.loaded = false
    this.noticeTimer = null
    this.resizeTimer = null
    this.savingOrder = null
    this.strip = new GroupedStrip(elements.strip)
    this.lastInGroup = new Map() // group key -> the tab last active in it
    this.searchFrom = null // { tab, atBottom, line }: where the view was when search opened
    this.searchResults = null // the active tab's onDidChangeResults subscription
    this.runSearch = () => {}
    this.sharedActive = null // ACTIVE_KEY as last seen
    this.shareTimer = null
    // A list from the service is a snapshot of when it was asked for: a tab opened or closed
    // since (a click on "+" while the first list loads) must not be undone by it.
    this.changes = 0
    this.changedAt = new Map() // terminal id -> `changes` when a tab for it came or went
    this.syncs = 0 // lists applied, for tests
    this.lastInputAt = -Infinity // the user's last key in a terminal (background tabs yield)
    this.host = {
      theme: () => currentTheme(),
      size: () => this.paneSize,
      isActive: (tab) => tab.id === this.activeId && document.visibilityState === "visible",
      changed: (tab) => this.#tabChanged(tab),
      gone: (tab) => this.#remove(tab.id),
      notice: (tab, text) => this.notice(`${tab.title}: ${text}`),
      keyHandler: (event) => !shortcutFor(event),
      userInput: () => {
        this.lastInputAt = performance.now()
      },
      typingAgo: () => performance.now() - this.lastInputAt,
      resized: (tab) => {
        if (tab.id === this.activeId) this.#scheduleResize()
      },
      viewOnlyInput: (tab) => this.#viewOnlyInput(tab),
      exitAction: (tab, action) =>
        action === "restart" ? this.restart(tab.id) : this.closeTab(tab.id),
    }
  }

  start() {
    this.#wireStrip()
    this.#wireBars()
    document.addEventListener("keydown", (event) => this.#onKeydown(event), true)
    new ResizeObserver(() => this.#scheduleResize()).observe(this.el.panes)
    // Marks set while the window was hidden clear once the active tab is seen again.
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.tabs.get(this.activeId)?.markSeen()
      // Nobody types into a hidden page: its background tabs parse without waiting for idle.
      else for (const tab of this.tabs.values()) tab.writer.flush()
    })
    onThemeChange((theme) => {
      for (const tab of this.tabs.values()) tab.setTheme(theme)
    })
    this.connection.on("pty.created", ({ info }) => info && this.#add(info))
    this.connection.on(
      "pty.updated",
      ({ info }) => info && this.tabs.get(info.id)?.updateInfo(info),
    )
    this.connection.on("pty.exited", ({ id, exit_code }) =>
      this.tabs.get(id)?.markExited(exit_code),
    )
    this.connection.on("pty.deleted", ({ id }) => this.#remove(id))
    this.connection.on("server.connected", () => this.#sync())
    // Another window reordered its tabs: follow.
    this.connection.on("ui.preference.updated", ({ key, value }) => {
      if (key === ORDER_KEY && Array.isArray(value)) this.#applyOrder(value)
      if (key === ACTIVE_KEY && typeof value === "string") this.sharedActive = value
    })
    this.connection.onState((state) => {
      if (state === "connected") for (const tab of this.tabs.values()) tab.link.retryNow()
    })
    this.#sync()
  }

  // ---- state from the service -------------------------------------------------------------

  /** Asks the service for the list again, as a reconnect does. */
  resync() {
    return this.#sync()
  }

  async #sync() {
    const asked = this.changes
    let list
    let order
    let shared
    try {
      ;[list, order, shared] = await Promise.all([
        api("GET", "/api/pty"),
        this.loaded
          ? Promise.resolve(null)
          : api("GET", `/api/ui/prefs/${ORDER_KEY}`).catch(() => null),
        this.loaded
          ? Promise.resolve(null)
          : api("GET", `/api/ui/prefs/${ACTIVE_KEY}`).catch(() => null),
      ])
    } catch (error) {
      // Service down before anything loaded: show the tabs we knew, reconnecting.
      if (error.status === 0 && !this.loaded && !this.tabs.size) this.#restoreKnown()
      return // offline or signed out: server.connected triggers another sync
    }
    if (!Array.isArray(list)) return
    if (!this.loaded && Array.isArray(order?.value))
      this.order = order.value.filter((id) => typeof id === "string")
    const newer = (id) => (this.changedAt.get(id) ?? -1) > asked
    // Closed here since the list was taken: not brought back.
    list = list.filter((info) => this.tabs.has(info.id) || !newer(info.id))
    const known = new Set(list.map((info) => info.id))
    for (const id of [...this.tabs.keys()]) if (!known.has(id) && !newer(id)) this.#remove(id)
    // Opened here since the list was taken: kept, after the listed ones.
    const opened = [...this.tabs.keys()].filter((id) => !known.has(id))
    // Tabs appear in the saved order; terminals it does not name follow, oldest first.
    const rank = new Map(this.order.map((id, index) => [id, index]))
    const sorted = [...list].sort((a, b) => {
      const ra = rank.get(a.id) ?? Infinity
      const rb = rank.get(b.id) ?? Infinity
      if (ra !== rb) return ra - rb
      return String(a.created ?? "").localeCompare(String(b.created ?? ""))
    })
    this.order = [...sorted.map((info) => info.id), ...opened]
    // This window's own choice (a reload), else the tab another window shows.
    if (typeof shared?.value === "string") this.sharedActive = shared.value
    const wanted = this.loaded ? this.activeId : (loadActive() ?? this.sharedActive)
    // Create the tab the user will see first, so its size is measured before the others attach.
    const first = sorted.find((info) => info.id === wanted) ?? sorted[0]
    if (first) this.#add(first, { quiet: true })
    for (const info of sorted) {
      if (this.tabs.has(info.id)) this.tabs.get(info.id).updateInfo(info)
      else this.#add(info, { quiet: true })
    }
    this.loaded = true
    this.syncs += 1
    this.#renderStrip()
    if (!this.activeId || !this.tabs.has(this.activeId)) this.activate(first?.id ?? null)
  }

  #restoreKnown() {
    const known = loadKnownTerminals()
    for (const info of known) {
      const tab = this.#add(info, { quiet: true })
      if (tab) {
        tab.restored = true // it was attached before this reload
        tab.render()
      }
    }
    const wanted = this.tabs.has(loadActive()) ? loadActive() : known[0]?.id
    if (wanted) this.activate(wanted)
    this.#renderStrip()
  }

  #applyOrder(saved) {
    const rank = new Map(saved.map((id, index) => [id, index]))
    const sorted = [...this.order].sort(
      (a, b) => (rank.get(a) ?? Infinity) - (rank.get(b) ?? Infinity),
    )
    const order = this.#regroup(sorted)
    if (order.every((id, i) => id === this.order[i])) return
    this.order = order
    this.#renderStrip()
  }

  #add(info, { quiet = false } = {}) {
    if (!info?.id) return null
    const existing = this.tabs.get(info.id)
    if (existing) return existing
    const tab = new TerminalTab(info, this.host)
    this.tabs.set(info.id, tab)
    this.changedAt.set(info.id, ++this.changes)
    if (!this.order.includes(info.id)) this.order.push(info.id)
    this.el.panes.append(tab.paneEl)
    if (!this.activeId) this.activate(info.id)
    tab.start()
    if (!quiet) this.#renderStrip()
    return tab
  }

  #remove(id) {
    const tab = this.tabs.get(id)
    if (!tab) return
    const index = this.order.indexOf(id)
    this.tabs.delete(id)
    this.changedAt.set(id, ++this.changes)
    this.order = this.order.filter((other) => other !== id)
    tab.dispose()
    forget(id)
    if (this.activeId === id) {
      this.activeId = null
      const next = this.order[Math.min(index, this.order.length - 1)] ?? null
      this.activate(next)
    }
    this.#renderStrip()
  }

  // ---- user actions -----------------------------------------------------------------------

  /** Opens a terminal in `group` (a key; null is the default group), by default the active one's. */
  async newTerminal(group = this.currentGroup()) {
    const body = {}
    if (this.paneSize) body.size = { ...this.paneSize }
    if (group !== null && group !== undefined) body.group = group
    try {
      const info = await api("POST", "/api/pty", { body })
      const tab = this.#add(info)
      if (tab) this.activate(tab.id)
      return info?.id ?? null
    } catch (error) {
      this.notice(`Could not open a terminal: ${error.message}`)
      return null
    }
  }

  /** Shows terminal `id` (a job's, from the chat), fetching its info when no tab has it yet. */
  async openTerminal(id) {
    if (!this.tabs.has(id)) {
      try {
        this.#add(await api("GET", `/api/pty/${encodeURIComponent(id)}`))
      } catch (error) {
        this.notice(
          error.status === 404
            ? "That terminal is gone."
            : `Could not open the terminal: ${error.message}`,
        )
        return false
      }
    }
    this.activate(id)
    return true
  }

  async closeTab(id) {
    const tab = this.tabs.get(id)
    if (!tab) return false
    const busy = tab.busyWith
    if (busy) {
      const ok = await this.#confirm(
        `${busy} is still running in “${tab.title}”. Closing the tab ends it.`,
      )
      if (!ok) {
        tab.focus()
        return false
      }
    }
    try {
      await api("DELETE", `/api/pty/${encodeURIComponent(id)}`)
    } catch (error) {
      if (error.status !== 404) {
        this.notice(`Could not close “${tab.title}”: ${error.message}`)
        return false
      }
    }
    this.#remove(id)
    this.#saveOrder()
    return true
  }

  /** Replaces an exited terminal with a new one running the same command in the same place
   * (folder, group, title, position in the strip). */
  async restart(id) {
    const tab = this.tabs.get(id)
    if (!tab || tab.running) return null
    const info = tab.info
    const body = { command: info.command, args: info.args ?? [], title: tab.title }
    if (info.cwd) body.cwd = info.cwd
    if (info.group !== null && info.group !== undefined) body.group = info.group
    if (this.paneSize) body.size = { ...this.paneSize }
    let created
    try {
      created = await api("POST", "/api/pty", { body })
    } catch (error) {
      this.notice(`Could not restart “${tab.title}”: ${error.message}`)
      return null
    }
    const fresh = this.#add(created)
    if (!fresh) return null
    const order = this.order.filter((other) => other !== created.id)
    order.splice(order.indexOf(id), 0, created.id)
    this.order = order
    this.activate(created.id)
    await this.closeTab(id)
    return created.id
  }

  async rename(id, title) {
    const tab = this.tabs.get(id)
    const clean = title.trim()
    if (!tab || !clean || clean === tab.title) return
    const previous = tab.info.title
    tab.updateInfo({ title: clean })
    try {
      const info = await api("PATCH", `/api/pty/${encodeURIComponent(id)}`, {
        body: { title: clean },
      })
      if (info?.id === id) tab.updateInfo(info)
    } catch (error) {
      tab.updateInfo({ title: previous })
      this.notice(`Could not rename the terminal: ${error.message}`)
    }
  }

  activate(id) {
    const previous = this.tabs.get(this.activeId)
    const tab = this.tabs.get(id)
    if (previous && previous !== tab) previous.hide()
    this.activeId = tab ? id : null
    if (tab) {
      saveActive(id)
      this.#shareActive(id)
      this.lastInGroup.set(groupKeyOf(tab.info), id)
      tab.show()
      this.#measure()
      tab.focus()
    }
    // An open search moves to the tab now shown.
    if (tab && !this.el.search.bar.hidden && this.searchFrom?.tab !== tab) {
      this.searchFrom?.tab.search.clearDecorations()
      this.#bindSearch(tab)
      this.runSearch(false, true)
    }
    this.#renderStrip()
    this.#renderBars()
  }

  #shareActive(id) {
    clearTimeout(this.shareTimer)
    if (!this.loaded) return // the first sync picks the tab; it is not a choice yet
    this.shareTimer = setTimeout(() => {
      if (id === this.sharedActive) return
      this.sharedActive = id
      api("PUT", `/api/ui/prefs/${ACTIVE_KEY}`, { body: { value: id } }).catch(() => {})
    }, SHARE_ACTIVE_MS)
  }

  /** Typing into an observer: the view-only bar says it already, so it is nudged instead of
   * stacking a notice under it. */
  #viewOnlyInput(tab) {
    const bar = this.el.viewOnlyBar
    if (tab.id !== this.activeId || bar.hidden) {
      this.notice(`${tab.title}: View only: take control to type in this terminal.`)
      return
    }
    bar.classList.remove("nudge")
    void bar.offsetWidth // restart the animation
    bar.classList.add("nudge")
  }

  /** Gives the keyboard back to the active terminal (after a click on a header button). */
  focusActive() {
    this.tabs.get(this.activeId)?.focus()
  }

  cycle(step) {
    if (this.order.length < 2) return
    const index = this.order.indexOf(this.activeId)
    const next = this.order[(index + step + this.order.length) % this.order.length]
    this.activate(next)
  }

  /** Moves tab `id` next to `targetId` (within its own group: a terminal's group is fixed). */
  move(id, targetId, after) {
    if (id === targetId || !this.tabs.has(id) || !this.tabs.has(targetId)) return
    if (this.groupOf(id) !== this.groupOf(targetId)) return
    const order = this.order.filter((other) => other !== id)
    const at = order.indexOf(targetId) + (after ? 1 : 0)
    order.splice(at, 0, id)
    this.order = order
    this.#renderStrip()
    this.#saveOrder()
  }

  moveBy(step) {
    const index = this.order.indexOf(this.activeId)
    const target = this.order[index + step]
    if (index < 0 || !target || this.groupOf(target) !== this.groupOf(this.activeId)) return
    this.move(this.activeId, target, step > 0)
    this.tabs.get(this.activeId)?.tabEl.scrollIntoView({ block: "nearest", inline: "nearest" })
  }

  /** Shows the next (step 1) or previous (-1) group: its last active tab, else its first. */
  cycleGroup(step) {
    const groups = this.groups()
    if (groups.length < 2) return
    const index = groups.findIndex((group) => group.ids.includes(this.activeId))
    const group = groups[(index + step + groups.length) % groups.length]
    const remembered = this.lastInGroup.get(group.key)
    this.activate(group.ids.includes(remembered) ? remembered : group.ids[0])
  }

  groupOf(id) {
    return groupKeyOf(this.tabs.get(id)?.info)
  }

  /** The group new tabs open in: the active tab's. */
  currentGroup() {
    return this.activeId ? this.groupOf(this.activeId) : null
  }

  /** [{ key, ids }] of the tabs, in display order. */
  groups() {
    return groupOrder(
      this.order.filter((id) => this.tabs.has(id)),
      (id) => this.groupOf(id),
    )
  }

  /** `order` with each group's tabs contiguous. Ids without a tab yet (a sync in progress)
   * keep their place: their group is not known. */
  #regroup(order) {
    const keyOf = (id) => (this.tabs.has(id) ? this.groupOf(id) : { pending: id })
    return groupOrder(order, keyOf).flatMap((group) => group.ids)
  }

  notice(text) {
    const el = this.el.notice
    el.textContent = text
    el.hidden = false
    clearTimeout(this.noticeTimer)
    this.noticeTimer = setTimeout(() => {
      el.hidden = true
    }, NOTICE_MS)
  }

  #saveOrder() {
    const value = [...this.order]
    // Serialise the writes so the last order wins.
    this.savingOrder = (this.savingOrder ?? Promise.resolve())
      .then(() => api("PUT", `/api/ui/prefs/${ORDER_KEY}`, { body: { value } }))
      .catch((error) => this.notice(`Could not save the tab order: ${error.message}`))
  }

  // ---- rendering --------------------------------------------------------------------------

  #renderStrip() {
    // A terminal's group can arrive after its tab (an update): keep each group contiguous.
    this.order = this.#regroup(this.order)
    const groups = this.groups()
    const activeGroup = this.currentGroup()
    this.strip.render(groups, { tabEl: (id) => this.tabs.get(id)?.tabEl, activeGroup })
    const grouped = groups.some((group) => group.key !== null)
    this.el.newTab.classList.toggle("apart", grouped)
    this.el.newTab.title = grouped
      ? `New terminal in ${groupLabel(activeGroup)} (Ctrl+Shift+T)`
      : "New terminal (Ctrl+Shift+T)"
    for (const tab of this.tabs.values()) {
      const active = tab.id === this.activeId
      tab.tabEl.setAttribute("aria-selected", String(active))
      tab.tabEl.tabIndex = active ? 0 : -1
    }
    this.el.empty.hidden = this.tabs.size > 0 || !this.loaded
    this.#renderTitle()
    if (this.loaded)
      saveKnownTerminals(this.order.map((id) => this.tabs.get(id)?.info).filter(Boolean))
  }

  /** The window's title names the tab in view, so window lists and task bars tell them apart. */
  #renderTitle() {
    const tab = this.tabs.get(this.activeId)
    const title = tab ? `${tab.title} — Desk` : "Desk"
    if (document.title !== title) document.title = title
  }

  #renderBars() {
    const tab = this.tabs.get(this.activeId)
    const link = tab?.link
    this.el.viewOnlyBar.hidden = !(
      link &&
      link.connected &&
      link.role === "observer" &&
      !link.exited
    )
    const why = this.el.viewOnlyBar.querySelector("span")
    if (why)
      why.textContent = tab?.info.job
        ? "View only — the agent's command."
        : "View only — another window is in control."
  }

  #tabChanged(tab) {
    if (tab.id === this.activeId) {
      this.#renderBars()
      this.#renderTitle()
    }
  }

  // ---- sizing -----------------------------------------------------------------------------

  #scheduleResize() {
    clearTimeout(this.resizeTimer)
    this.resizeTimer = setTimeout(() => this.#measure(), RESIZE_DEBOUNCE_MS)
  }

  #measure() {
    const active = this.tabs.get(this.activeId)
    // An exited tab's box is smaller by its exit line: it fits itself, and the running
    // terminals keep the size measured on a running one.
    if (active && !active.running) return active.fitExited()
    const size = active?.proposeSize()
    if (!size) return
    this.paneSize = size
    for (const tab of this.tabs.values()) tab.applySize(size)
  }

  // ---- wiring -----------------------------------------------------------------------------

  #onKeydown(event) {
    const action = shortcutFor(event)
    if (!action) return
    if (action === "paste") return // let the browser deliver the paste event to xterm
    event.preventDefault()
    event.stopPropagation()
    const tab = this.tabs.get(this.activeId)
    switch (action) {
      case "new":
        this.newTerminal()
        break
      case "close":
        if (tab) this.closeTab(tab.id)
        break
      case "next":
        this.cycle(1)
        break
      case "previous":
        this.cycle(-1)
        break
      case "move-right":
        this.moveBy(1)
        break
      case "move-left":
        this.moveBy(-1)
        break
      case "next-group":
        this.cycleGroup(1)
        break
      case "search":
        this.#openSearch()
        break
      case "rename":
        if (tab) this.#startRename(tab)
        break
      case "focus-strip":
        tab?.tabEl.focus()
        break
      case "copy": {
        const text = tab?.term.getSelection()
        if (text)
          navigator.clipboard
            ?.writeText(text)
            .catch(() => this.notice("Copy was refused by the browser."))
        break
      }
      default:
        break
    }
  }

  #wireStrip() {
    const strip = this.el.strip
    const tabFrom = (target) => this.tabs.get(target.closest?.(".tab")?.dataset.id)
    strip.addEventListener("click", (event) => {
      if (event.target.closest?.(".tab-group-add")) {
        const group = this.strip.groupAt(event.target)
        if (group !== undefined) this.newTerminal(group)
        return
      }
      const tab = tabFrom(event.target)
      if (!tab) return
      if (event.target.closest(".tab-close")) this.closeTab(tab.id)
      else if (!event.target.closest("input")) this.activate(tab.id)
    })
    strip.addEventListener("auxclick", (event) => {
      const tab = tabFrom(event.target)
      if (tab && event.button === 1) this.closeTab(tab.id)
    })
    strip.addEventListener("dblclick", (event) => {
      const tab = tabFrom(event.target)
      if (tab && !event.target.closest(".tab-close")) this.#startRename(tab)
    })
    strip.addEventListener("keydown", (event) => {
      const tab = tabFrom(event.target)
      if (!tab || event.target.closest("input")) return
      if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
        event.preventDefault()
        this.cycle(event.key === "ArrowRight" ? 1 : -1)
        this.tabs.get(this.activeId)?.tabEl.focus()
      } else if (event.key === "Home" || event.key === "End") {
        event.preventDefault()
        const id = event.key === "Home" ? this.order[0] : this.order[this.order.length - 1]
        if (id) this.activate(id)
        this.tabs.get(this.activeId)?.tabEl.focus()
      } else if (event.key === "Enter" || event.key === "Escape") {
        // Back into the terminal (Ctrl+Shift+S led here from it).
        event.preventDefault()
        this.activate(tab.id)
      } else if (event.key === "F2") {
        event.preventDefault()
        this.#startRename(tab)
      } else if (event.key === "Delete") {
        event.preventDefault()
        this.closeTab(tab.id)
      }
    })
    // Drag to reorder (HTML5 drag and drop; the drop side of the target tab decides before/after).
    let dragged = null
    const clearMarks = () => {
      for (const el of strip.querySelectorAll(".drop-before, .drop-after"))
        el.classList.remove("drop-before", "drop-after")
    }
    const sideOf = (event, el) => {
      const rect = el.getBoundingClientRect()
      return event.clientX > rect.left + rect.width / 2
    }
    strip.addEventListener("dragstart", (event) => {
      const tab = tabFrom(event.target)
      if (!tab) return
      dragged = tab.id
      event.dataTransfer.effectAllowed = "move"
      event.dataTransfer.setData("text/plain", tab.title)
    })
    strip.addEventListener("dragover", (event) => {
      const tab = tabFrom(event.target)
      // Tabs move within their group only: elsewhere the drop is refused.
      if (!dragged || !tab || this.groupOf(tab.id) !== this.groupOf(dragged)) return
      event.preventDefault()
      event.dataTransfer.dropEffect = "move"
      clearMarks()
      if (tab.id !== dragged)
        tab.tabEl.classList.add(sideOf(event, tab.tabEl) ? "drop-after" : "drop-before")
    })
    strip.addEventListener("dragleave", (event) => {
      if (!strip.contains(event.relatedTarget)) clearMarks()
    })
    strip.addEventListener("drop", (event) => {
      const tab = tabFrom(event.target)
      event.preventDefault()
      clearMarks()
      if (dragged && tab) this.move(dragged, tab.id, sideOf(event, tab.tabEl))
      dragged = null
    })
    strip.addEventListener("dragend", () => {
      clearMarks()
      dragged = null
    })
    this.el.newTab.addEventListener("click", () => this.newTerminal())
  }

  #startRename(tab) {
    if (tab.tabEl.querySelector("input")) return
    const input = document.createElement("input")
    input.className = "tab-title-input"
    input.value = tab.title
    input.setAttribute("aria-label", "Terminal name")
    tab.tabEl.draggable = false
    tab.titleEl.hidden = true
    tab.titleEl.after(input)
    input.focus()
    input.select()
    let done = false
    const finish = (commit) => {
      if (done) return
      done = true
      input.remove()
      tab.titleEl.hidden = false
      tab.tabEl.draggable = true
      if (commit) this.rename(tab.id, input.value)
      tab.focus()
    }
    input.addEventListener("keydown", (event) => {
      event.stopPropagation()
      if (event.key !== "Enter" && event.key !== "Escape") return
      // Focus moves to the terminal inside this handler: without preventDefault the key's
      // keypress would follow it there and the Enter would reach the shell.
      event.preventDefault()
      finish(event.key === "Enter")
    })
    input.addEventListener("blur", () => finish(true))
  }

  #wireBars() {
    this.el.takeControl.addEventListener("click", () => {
      const tab = this.tabs.get(this.activeId)
      if (!tab) return
      tab.link.takeControl()
      tab.focus()
    })
    const search = this.el.search
    // "3 of 12" / "No matches", made here so the bar's markup stays static.
    search.count = document.createElement("span")
    search.count.className = "search-count"
    search.count.setAttribute("role", "status")
    search.count.setAttribute("aria-live", "polite")
    search.input.after(search.count)
    const run = (backwards, incremental = false) => {
      const tab = this.tabs.get(this.activeId)
      const query = search.input.value
      if (!tab) return
      if (!query) {
        tab.search.clearDecorations()
        tab.term.clearSelection()
        this.#showSearchCount(null)
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
      if (!found) this.#showSearchCount({ resultIndex: -1, resultCount: 0 })
    }
    search.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault()
        run(event.shiftKey)
      } else if (event.key === "Escape") {
        event.preventDefault()
        this.#closeSearch()
      }
    })
    // The highlight follows the query as it is typed (and erased).
    search.input.addEventListener("input", () => run(false, true))
    search.next.addEventListener("click", () => run(false))
    search.prev.addEventListener("click", () => run(true))
    search.close.addEventListener("click", () => this.#closeSearch())
    this.runSearch = run
  }

  #showSearchCount(results) {
    const { count, input } = this.el.search
    const none = results !== null && results.resultCount === 0
    if (results === null) count.textContent = ""
    else if (none) count.textContent = "No matches"
    else if (results.resultIndex < 0) count.textContent = `${results.resultCount}+ matches`
    else count.textContent = `${results.resultIndex + 1} of ${results.resultCount}`
    count.classList.toggle("none", none)
    input.setAttribute("aria-invalid", String(none))
  }

  /** Follows the active tab's search results; remembers where its view was. */
  #bindSearch(tab) {
    this.searchResults?.dispose()
    this.searchResults = null
    if (!tab) return
    const buffer = tab.term.buffer.active
    this.searchFrom = { tab, atBottom: buffer.viewportY >= buffer.baseY, line: buffer.viewportY }
    this.searchResults = tab.search.onDidChangeResults((results) => this.#showSearchCount(results))
  }

  #openSearch() {
    const bar = this.el.search.bar
    if (bar.hidden || this.searchFrom?.tab.id !== this.activeId)
      this.#bindSearch(this.tabs.get(this.activeId))
    bar.hidden = false
    this.el.search.input.focus()
    this.el.search.input.select()
    if (this.el.search.input.value) this.runSearch(false, true)
  }

  #closeSearch() {
    this.el.search.bar.hidden = true
    const tab = this.tabs.get(this.activeId)
    tab?.search.clearDecorations()
    tab?.term.clearSelection()
    // Back to where the view was when the search opened (usually the bottom).
    const from = this.searchFrom
    if (from && from.tab === tab) {
      if (from.atBottom) tab.term.scrollToBottom()
      else tab.term.scrollToLine(from.line)
    }
    this.#bindSearch(null)
    this.searchFrom = null
    this.#showSearchCount(null)
    tab?.focus()
  }

  #confirm(message) {
    const dialog = this.el.confirm
    if (dialog.open) return Promise.resolve(false) // one question at a time
    dialog.querySelector("#confirm-message").textContent = message
    return new Promise((resolve) => {
      const onClose = () => {
        // A close event queued by an earlier opening can arrive after this one began.
        if (dialog.open) return
        dialog.removeEventListener("close", onClose)
        resolve(dialog.returnValue === "confirm")
      }
      dialog.returnValue = ""
      dialog.showModal()
      dialog.addEventListener("close", onClose)
      // Cancel is the default: Enter keeps the terminal.
      dialog.querySelector('button[value="cancel"]').focus()
    })
  }
}
