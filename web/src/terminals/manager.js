// The terminal area: the tabs (one per terminal the service knows, each a TerminalTab view,
// except the agent's commands, folded behind their session's "Agent jobs" chip until the person
// opens one), grouped by the terminals' `group`, in the store's order; opening, closing (with
// confirmation), restarting and renaming terminals; cycling and moving tabs; the strip, bars,
// the tab's part of the window title (web/src/title.js owns it) and pane sizing. Its state is in
// a TerminalStore (store.js); the service link, keyboard, search bar, rename field, drag and
// the jobs menu are their own modules.

import { effect } from "@preact/signals"
import { api } from "../api.js"
import { onThemeChange } from "../theme.js"
import { windowTitle } from "../title.js"
import { isAgentJob, isRunning } from "./agent-jobs.js"
import { confirmAsk, confirmClose } from "./confirm.js"
import { wireDrag } from "./drag.js"
import { groupFolder, groupInfo, groupKeyOf, groupLabel, groupOrder } from "./groups.js"
import { JobMenu } from "./job-menu.js"
import { wireKeys } from "./keys.js"
import { regroup } from "./reconcile.js"
import { startRename } from "./rename.js"
import { SearchBar } from "./search-bar.js"
import {
  forget,
  loadOpenedJobs,
  saveActive,
  saveKnownTerminals,
  saveOpenedJobs,
} from "./storage.js"
import { TerminalStore } from "./store.js"
import { GroupedStrip } from "./strip.js"
import { TerminalSync } from "./sync.js"
import { TerminalTab } from "./tab.js"

const RESIZE_DEBOUNCE_MS = 60
const NOTICE_MS = 8000

export class TerminalManager {
  /** `focusAtLoad`: whether the active terminal takes the keyboard as the page loads. */
  constructor({ connection, elements, focusAtLoad = true }) {
    this.el = elements
    this.focusAtLoad = focusAtLoad
    this.store = new TerminalStore()
    this.tabs = new Map() // terminal id -> TerminalTab
    this.resizeTimer = null
    this.strip = new GroupedStrip(elements.strip)
    this.lastInGroup = new Map() // group key -> the tab last active in it
    this.openedJobs = loadOpenedJobs() // agent jobs the person opened as tabs here
    this.scrolledTo = null // the active tab last scrolled into view
    this.stripScrolled = false // the person scrolled the strip since then
    // A group's label or chip that grows later (a session's title arriving after the list)
    // pushes the tabs after it along: the active one is brought back unless the person
    // scrolled the strip away from it.
    this.stripResize = new ResizeObserver(() => this.revealActive(false))
    this.jobMenu = new JobMenu({
      jobsOf: (key) => this.jobsOf(key),
      labelOf: (key) => groupLabel(key),
      hasTab: (id) => this.tabs.has(id),
      open: (id) => this.openTerminal(id),
      closeFinished: (key) => this.closeFinishedJobs(key),
    })
    this.search = new SearchBar(elements.search, () => this.activeTab())
    this.sync = new TerminalSync({ connection, store: this.store, area: this })
    // What only the area can act on, for every tab.
    this.tabActions = {
      gone: (tab) => this.remove(tab.id),
      resized: (tab) => {
        if (tab.id === this.store.activeId.value) this.#scheduleResize()
      },
      viewOnlyInput: (tab) => this.#viewOnlyInput(tab),
      exitAction: (tab, action) => {
        if (action === "restart") this.restart(tab.id)
        else if (action === "rerun") this.rerun(tab.id)
        else this.closeTab(tab.id)
      },
    }
  }

  // Read-only views of the store, for the page and its test hooks.
  get activeId() {
    return this.store.activeId.value
  }

  get order() {
    return this.store.order.value
  }

  get loaded() {
    return this.store.loaded.value
  }

  get syncs() {
    return this.store.syncs.value
  }

  start() {
    this.#wireStrip()
    this.search.start()
    wireKeys(this, { search: this.search, rename: (tab) => this.#startRename(tab) })
    this.el.takeControl.addEventListener("click", () => {
      const tab = this.activeTab()
      if (!tab) return
      tab.link.takeControl()
      tab.focus()
    })
    new ResizeObserver(() => this.#scheduleResize()).observe(this.el.panes)
    // Marks set while the window was hidden clear once the active tab is seen again.
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.activeTab()?.markSeen()
      // Nobody types into a hidden page: its background tabs parse without waiting for idle.
      else for (const tab of this.tabs.values()) tab.writer.flush()
    })
    onThemeChange((theme) => {
      for (const tab of this.tabs.values()) tab.setTheme(theme)
    })
    // The bars and the window's title follow the tab in view and its changes.
    effect(() => {
      this.activeTab()?.revision.value
      this.#renderBars()
      this.#renderTitle()
    })
    this.#showNotices()
    // Groups are named after their sessions once the chat knows them.
    effect(() => {
      groupInfo.value
      this.renderStrip()
    })
    this.sync.start()
  }

  /** Asks the service for the list again, as a reconnect does. */
  resync() {
    return this.sync.sync()
  }

  activeTab() {
    return this.tabs.get(this.store.activeId.value)
  }

  /** The tab an event target is in. */
  tabFrom(target) {
    return this.tabs.get(target.closest?.(".tab")?.dataset.id)
  }

  // ---- the set of tabs ---------------------------------------------------------------------

  /** Opens a tab for `info` (once); `quiet` leaves the strip's render to the caller. */
  add(info, { quiet = false } = {}) {
    if (!info?.id) return null
    const existing = this.tabs.get(info.id)
    if (existing) return existing
    const store = this.store
    const tab = new TerminalTab(info, store, this.tabActions)
    this.tabs.set(info.id, tab)
    store.journal(info.id)
    if (!store.order.value.includes(info.id)) store.order.value = [...store.order.value, info.id]
    this.el.panes.append(tab.paneEl)
    if (!store.activeId.value)
      this.activate(info.id, { focus: store.loaded.value || this.focusAtLoad })
    tab.start()
    if (!quiet) this.renderStrip()
    return tab
  }

  /** A terminal the service announced: an agent job stays folded unless opened here. */
  arrived(info) {
    if (!info?.id) return
    if (isAgentJob(info) && !this.tabs.has(info.id) && !this.openedJobs.has(info.id)) {
      this.store.journal(info.id)
      this.#setFolded((folded) => folded.set(info.id, info))
    } else this.add(info)
  }

  /** A terminal's info changed (a tab's, or a folded job's). */
  updated(info) {
    if (!info?.id) return
    const tab = this.tabs.get(info.id)
    if (tab) return tab.updateInfo(info)
    const folded = this.store.folded.value.get(info.id)
    if (folded) this.#setFolded((map) => map.set(info.id, { ...folded, ...info }))
  }

  exited(id, exitCode) {
    const tab = this.tabs.get(id)
    if (tab) return tab.markExited(exitCode)
    const folded = this.store.folded.value.get(id)
    if (folded)
      this.#setFolded((map) => map.set(id, { ...folded, status: "exited", exit_code: exitCode }))
  }

  remove(id) {
    if (this.store.folded.value.has(id)) {
      this.store.journal(id)
      this.#setFolded((folded) => folded.delete(id))
    }
    this.#forgetOpened(id)
    const tab = this.tabs.get(id)
    if (!tab) return
    const store = this.store
    const index = store.order.value.indexOf(id)
    this.tabs.delete(id)
    store.journal(id)
    store.order.value = store.order.value.filter((other) => other !== id)
    tab.dispose()
    forget(id)
    if (store.activeId.value === id) {
      store.activeId.value = null
      const order = store.order.value
      this.activate(order[Math.min(index, order.length - 1)] ?? null)
    }
    this.renderStrip()
  }

  // ---- user actions -----------------------------------------------------------------------

  /** Opens a terminal in `group` (a key; null is the default group), by default the active one's. */
  async newTerminal(group = this.currentGroup()) {
    const body = {}
    const size = this.store.paneSize.value
    if (size) body.size = { ...size }
    if (group !== null && group !== undefined) body.group = group
    const folder = groupFolder(group) // a session's group: a new terminal opens in its folder
    if (folder) body.cwd = folder
    try {
      const info = await api("POST", "/api/pty", { body })
      const tab = this.add(info)
      if (tab) this.activate(tab.id)
      return info?.id ?? null
    } catch (error) {
      this.notice(`Could not open a terminal: ${error.message}`)
      return null
    }
  }

  /** Shows terminal `id` (a job's, from the chat or its chip), fetching its info when no tab
   * has it yet; an agent job opened so stays a tab here until it is closed. */
  async openTerminal(id) {
    const folded = this.store.folded.value.get(id)
    if (folded) {
      this.#setFolded((map) => map.delete(id))
      this.#rememberOpened(id)
      this.add(folded)
    } else if (!this.tabs.has(id)) {
      try {
        const info = await api("GET", `/api/pty/${encodeURIComponent(id)}`)
        if (isAgentJob(info)) {
          this.#rememberOpened(id)
          this.#setFolded((map) => map.delete(id))
        }
        this.add(info)
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
    // A running agent command is the agent's: closing its tab folds it back behind the chip,
    // and the command runs on (the jobs panel cancels it).
    if (tab.info.job && tab.running) {
      const group = groupLabel(this.groupKey(id)) // before the tab goes
      this.fold(id)
      this.notice(`“${tab.title}” still runs: it is under Agent jobs in ${group}.`)
      return true
    }
    const busy = tab.busyWith
    if (busy) {
      const ok = await confirmClose(
        this.el.confirm,
        `${busy} is still running in “${tab.title}”. Closing the tab ends it.`,
      )
      if (!ok) {
        tab.focus()
        return false
      }
    }
    tab.closing = true // the service's "deleted" for it is no news here
    try {
      await api("DELETE", `/api/pty/${encodeURIComponent(id)}`)
    } catch (error) {
      if (error.status !== 404) {
        tab.closing = false
        this.notice(`Could not close “${tab.title}”: ${error.message}`)
        return false
      }
    }
    this.remove(id)
    this.sync.saveOrder()
    return true
  }

  /** Takes agent job `id`'s tab out of the strip (back behind its chip); its terminal stays. */
  fold(id) {
    const tab = this.tabs.get(id)
    if (!tab?.info.job) return
    const info = { ...tab.info }
    if (!tab.running) info.status = "exited"
    this.remove(id)
    this.#setFolded((folded) => folded.set(id, info))
    this.sync.saveOrder()
  }

  /** Closes every finished agent job of group `key`: their tabs and the folded ones. */
  async closeFinishedJobs(key) {
    const finished = this.jobsOf(key).filter((info) => !isRunning(info))
    const results = await Promise.all(
      finished.map(async (info) => {
        if (this.tabs.has(info.id)) return this.closeTab(info.id)
        try {
          await api("DELETE", `/api/pty/${encodeURIComponent(info.id)}`)
        } catch (error) {
          if (error.status !== 404) return false
        }
        this.remove(info.id)
        return true
      }),
    )
    const closed = results.filter(Boolean).length
    const failed = finished.length - closed
    const label = groupLabel(key)
    this.notice(
      failed
        ? `Closed ${closed} finished agent command${closed === 1 ? "" : "s"} in ${label}; ${failed} could not be closed.`
        : `Closed ${closed} finished agent command${closed === 1 ? "" : "s"} in ${label}.`,
    )
    this.focusActive()
  }

  /** The agent jobs of group `key`: those with a tab here and the folded ones. */
  jobsOf(key) {
    const jobs = []
    for (const id of this.store.order.value) {
      const info = this.tabs.get(id)?.info
      if (isAgentJob(info) && groupKeyOf(info) === key) jobs.push(info)
    }
    for (const info of this.store.folded.value.values())
      if (groupKeyOf(info) === key) jobs.push(info)
    return jobs
  }

  #setFolded(change) {
    const next = new Map(this.store.folded.value)
    change(next)
    this.store.folded.value = next
    this.renderStrip()
  }

  #rememberOpened(id) {
    this.openedJobs.add(id)
    saveOpenedJobs(this.openedJobs)
  }

  #forgetOpened(id) {
    if (this.openedJobs.delete(id)) saveOpenedJobs(this.openedJobs)
  }

  /** After a terminal list asked for at journal clock `asked`: opened jobs it no longer lists
   * are forgotten, unless opened since it was asked for. */
  keepOpened(ids, asked) {
    for (const id of [...this.openedJobs])
      if (!ids.has(id) && (this.store.changedAt.get(id) ?? -1) <= asked) this.#forgetOpened(id)
  }

  /** Replaces an exited terminal with a new one running the same command in the same place
   * (folder, group, title, position in the strip). */
  async restart(id) {
    const tab = this.tabs.get(id)
    if (!tab || tab.running || tab.info.job) return null // an agent's command is never re-run
    const info = tab.info
    const body = { command: info.command, args: info.args ?? [], title: tab.title }
    if (info.cwd) body.cwd = info.cwd
    if (info.group !== null && info.group !== undefined) body.group = info.group
    const size = this.store.paneSize.value
    if (size) body.size = { ...size }
    let created
    try {
      created = await api("POST", "/api/pty", { body })
    } catch (error) {
      this.notice(`Could not restart “${tab.title}”: ${error.message}`)
      return null
    }
    const fresh = this.add(created)
    if (!fresh) return null
    const order = this.store.order.value.filter((other) => other !== created.id)
    order.splice(order.indexOf(id), 0, created.id)
    this.store.order.value = order
    this.activate(created.id)
    await this.closeTab(id)
    return created.id
  }

  /** Runs an ended agent command again, once the person confirmed the exact command, as a
   * terminal of their own beside it (same folder and session; the agent is not told). */
  async rerun(id) {
    const tab = this.tabs.get(id)
    const job = tab?.info.job
    if (!tab || tab.running || !job) return null
    const info = tab.info
    const where = info.cwd ? ` in ${info.cwd}` : ""
    const ok = await confirmAsk(this.el.confirm, {
      title: "Run the agent's command again?",
      message: `It runs again${where} as your own terminal; the agent is not told.`,
      accept: "Run again",
      command: job.command ?? "",
    })
    if (!ok) {
      tab.focus()
      return null
    }
    const body = { command: info.command, args: info.args ?? [], title: tab.title }
    if (info.cwd) body.cwd = info.cwd
    if (info.group !== null && info.group !== undefined) body.group = info.group
    const size = this.store.paneSize.value
    if (size) body.size = { ...size }
    try {
      const created = await api("POST", "/api/pty", { body })
      const fresh = this.add(created)
      if (fresh) this.activate(fresh.id)
      return created?.id ?? null
    } catch (error) {
      this.notice(`Could not run “${tab.title}” again: ${error.message}`)
      return null
    }
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

  /** Shows tab `id`; it takes the keyboard unless `focus` is false (as the page loads). */
  activate(id, { focus = true } = {}) {
    const previous = this.activeTab()
    const tab = this.tabs.get(id)
    if (previous && previous !== tab) previous.hide()
    this.store.activeId.value = tab ? id : null
    if (tab) {
      saveActive(id)
      this.sync.shareActive(id)
      this.lastInGroup.set(groupKeyOf(tab.info), id)
      tab.show()
      this.#measure()
      if (focus) tab.focus()
    }
    this.search.follow(tab)
    this.renderStrip()
    this.#renderBars()
  }

  /** Gives the keyboard back to the active terminal (after a click on a header button). */
  focusActive() {
    this.activeTab()?.focus()
  }

  cycle(step) {
    const order = this.store.order.value
    if (order.length < 2) return
    const index = order.indexOf(this.store.activeId.value)
    this.activate(order[(index + step + order.length) % order.length])
  }

  /** Moves tab `id` next to `targetId` (within its own group: a terminal's group is fixed). */
  move(id, targetId, after) {
    if (id === targetId || !this.tabs.has(id) || !this.tabs.has(targetId)) return
    if (this.groupKey(id) !== this.groupKey(targetId)) return
    const order = this.store.order.value.filter((other) => other !== id)
    order.splice(order.indexOf(targetId) + (after ? 1 : 0), 0, id)
    this.store.order.value = order
    this.renderStrip()
    this.sync.saveOrder()
  }

  moveBy(step) {
    const active = this.store.activeId.value
    const order = this.store.order.value
    const index = order.indexOf(active)
    const target = order[index + step]
    if (index < 0 || !target || this.groupKey(target) !== this.groupKey(active)) return
    this.move(active, target, step > 0)
    this.revealActive(true)
  }

  /** Shows the next (step 1) or previous (-1) group: its last active tab, else its first. */
  cycleGroup(step) {
    const groups = this.groups()
    if (groups.length < 2) return
    const active = this.store.activeId.value
    const index = groups.findIndex((group) => group.ids.includes(active))
    const group = groups[(index + step + groups.length) % groups.length]
    const remembered = this.lastInGroup.get(group.key)
    this.activate(group.ids.includes(remembered) ? remembered : group.ids[0])
  }

  /** The group key of tab `id`. */
  groupKey(id) {
    return groupKeyOf(this.tabs.get(id)?.info)
  }

  /** The group new tabs open in: the active tab's. */
  currentGroup() {
    const active = this.store.activeId.value
    return active ? this.groupKey(active) : null
  }

  /** [{ key, ids }] of the tabs, in display order. */
  groups() {
    return groupOrder(
      this.store.order.value.filter((id) => this.tabs.has(id)),
      (id) => this.groupKey(id),
    )
  }

  notice(text) {
    this.store.say(text)
  }

  // ---- rendering --------------------------------------------------------------------------

  renderStrip() {
    const store = this.store
    // A terminal's group can arrive after its tab (an update): keep each group contiguous.
    // Ids without a tab yet (a sync in progress) keep their place: their group is not known.
    const order = regroup(store.order.value, (id) =>
      this.tabs.has(id) ? this.groupKey(id) : { pending: id },
    )
    if (order.some((id, i) => id !== store.order.value[i])) store.order.value = order
    const groups = this.groups()
    // A session whose terminals are all folded agent jobs still shows: its label and chip.
    const shown = new Set(groups.map((group) => group.key))
    for (const info of this.store.folded.value.values()) {
      const key = groupKeyOf(info)
      if (!shown.has(key)) {
        shown.add(key)
        groups.push({ key, ids: [] })
      }
    }
    const activeGroup = this.currentGroup()
    this.strip.render(groups, {
      tabEl: (id) => this.tabs.get(id)?.tabEl,
      activeGroup,
      jobsOf: (key) => this.jobsOf(key),
    })
    this.stripResize.disconnect()
    for (const section of this.el.strip.children) this.stripResize.observe(section)
    this.jobMenu.refresh()
    const grouped = groups.some((group) => group.key !== null)
    this.el.newTab.classList.toggle("apart", grouped)
    // Grouped, the bar's "+" is the one for a terminal of no session (each group has its own).
    this.el.newTab.setAttribute(
      "aria-label",
      grouped ? "New terminal, in no session" : "New terminal",
    )
    this.el.newTab.title = grouped
      ? "New terminal, in no session (opens in your home folder)"
      : "New terminal (Ctrl+Shift+T)"
    for (const tab of this.tabs.values()) {
      const active = tab.id === store.activeId.value
      tab.tabEl.setAttribute("aria-selected", String(active))
      tab.tabEl.tabIndex = active ? 0 : -1
    }
    this.el.empty.hidden = this.tabs.size > 0 || !store.loaded.value
    this.revealActive(false)
    this.#renderTitle()
    if (store.loaded.value)
      saveKnownTerminals(store.order.value.map((id) => this.tabs.get(id)?.info).filter(Boolean))
  }

  /** The tab in view, for the window title (which names it while the person uses the
   * terminals, so window lists and task bars tell them apart). */
  #renderTitle() {
    windowTitle.terminal.value = this.activeTab()?.title ?? null
  }

  /** Scrolls the strip to a newly active tab (or, `again`, to the active one after a move). */
  revealActive(again = true) {
    const tab = this.activeTab()
    if (!tab || !tab.tabEl.isConnected) return
    if (!again && this.scrolledTo === tab.id && this.stripScrolled) return
    this.scrolledTo = tab.id
    this.stripScrolled = false
    const strip = this.el.strip
    const box = tab.tabEl.getBoundingClientRect()
    const view = strip.getBoundingClientRect()
    // Only the strip scrolls (scrollIntoView would scroll the page's panes too).
    if (box.left < view.left) strip.scrollLeft -= view.left - box.left + 8
    else if (box.right > view.right) strip.scrollLeft += box.right - view.right + 8
  }

  #renderBars() {
    const tab = this.activeTab()
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

  /** The store's notices, each shown for a while under the strip. */
  #showNotices() {
    const el = this.el.notice
    let timer = null
    effect(() => {
      const notice = this.store.notice.value
      if (!notice) return
      el.textContent = notice.text
      el.hidden = false
      clearTimeout(timer)
      timer = setTimeout(() => {
        el.hidden = true
      }, NOTICE_MS)
    })
  }

  /** Typing into an observer: the view-only bar says it already, so it is nudged instead of
   * stacking a notice under it. */
  #viewOnlyInput(tab) {
    const bar = this.el.viewOnlyBar
    if (tab.id !== this.store.activeId.value || bar.hidden) {
      this.notice(`${tab.title}: View only: take control to type in this terminal.`)
      return
    }
    bar.classList.remove("nudge")
    void bar.offsetWidth // restart the animation
    bar.classList.add("nudge")
  }

  // ---- sizing -----------------------------------------------------------------------------

  #scheduleResize() {
    clearTimeout(this.resizeTimer)
    this.resizeTimer = setTimeout(() => this.#measure(), RESIZE_DEBOUNCE_MS)
  }

  #measure() {
    const active = this.activeTab()
    // An exited tab's box is smaller by its exit line: it fits itself, and the running
    // terminals keep the size measured on a running one.
    if (active && !active.running) return active.fitExited()
    const size = active?.proposeSize()
    if (!size) return
    this.store.paneSize.value = size
    for (const tab of this.tabs.values()) tab.applySize(size)
  }

  // ---- pointer wiring ---------------------------------------------------------------------

  #wireStrip() {
    const strip = this.el.strip
    const scrolled = () => (this.stripScrolled = true)
    strip.addEventListener("wheel", scrolled, { passive: true })
    strip.addEventListener("touchmove", scrolled, { passive: true })
    strip.addEventListener("click", (event) => {
      const chip = event.target.closest?.(".tab-jobs")
      if (chip) {
        const group = this.strip.groupAt(chip)
        if (group !== undefined) this.jobMenu.toggle(group, chip, { keyboard: event.detail === 0 })
        return
      }
      if (event.target.closest?.(".tab-group-add")) {
        const group = this.strip.groupAt(event.target)
        if (group !== undefined) this.newTerminal(group)
        return
      }
      const tab = this.tabFrom(event.target)
      if (!tab) return
      if (event.target.closest(".tab-close")) this.closeTab(tab.id)
      else if (!event.target.closest("input")) this.activate(tab.id)
    })
    strip.addEventListener("auxclick", (event) => {
      const tab = this.tabFrom(event.target)
      if (tab && event.button === 1) this.closeTab(tab.id)
    })
    strip.addEventListener("dblclick", (event) => {
      const tab = this.tabFrom(event.target)
      if (tab && !event.target.closest(".tab-close")) this.#startRename(tab)
    })
    wireDrag(strip, {
      tabFrom: (target) => this.tabFrom(target),
      groupOf: (id) => this.groupKey(id),
      move: (id, targetId, after) => this.move(id, targetId, after),
    })
    // Grouped, the bar's "+" opens a terminal of no session; ungrouped, it is the only group.
    this.el.newTab.addEventListener("click", () => this.newTerminal(null))
  }

  #startRename(tab) {
    startRename(tab, (id, title) => this.rename(id, title))
  }
}
