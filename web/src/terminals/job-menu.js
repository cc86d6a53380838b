// A session group's "Agent jobs (N)" chip and the menu it opens: every agent command of the
// session (running first, then the newest), each shown as a tab on a click, and one item that
// closes the session's finished ones. The menu lives outside the strip (the strip scrolls and
// would clip it) and is navigated with the arrow keys; Escape gives the keyboard back to the chip.

import { isRunning, jobCommand, jobCounts, jobState, jobsInMenuOrder } from "./agent-jobs.js"
import { renderStatusIcon } from "./status.js"

/** The chip's button, for a strip section. */
export function createJobChip() {
  const chip = document.createElement("button")
  chip.type = "button"
  chip.className = "tab-jobs"
  chip.setAttribute("aria-haspopup", "menu")
  chip.setAttribute("aria-expanded", "false")
  chip.hidden = true
  const mark = document.createElement("span")
  mark.className = "tab-jobs-mark"
  mark.setAttribute("aria-hidden", "true")
  const text = document.createElement("span")
  text.className = "tab-jobs-text"
  chip.append(mark, text)
  return chip
}

/** Shows `infos` (a session's agent jobs) on `chip`; `label` names the session. */
export function renderJobChip(chip, infos, label) {
  const { total, running } = jobCounts(infos)
  chip.hidden = total === 0
  if (!total) return
  const text = running ? `Agent jobs (${total}) · ${running} running` : `Agent jobs (${total})`
  const textEl = chip.querySelector(".tab-jobs-text")
  if (textEl.textContent !== text) textEl.textContent = text
  chip.dataset.running = String(running)
  chip.title = `The agent's commands in ${label}: show one as a tab, or close the finished ones`
}

function statusOfJob(info) {
  if (isRunning(info)) return "running"
  return info.exit_code === 0 ? "exited-ok" : "exited-error"
}

export class JobMenu {
  /**
   * jobsOf(key) -> the group's agent job infos; labelOf(key) -> its name; hasTab(id) -> bool;
   * open(id): show the job as a tab; closeFinished(key): close the group's finished jobs.
   */
  constructor({ jobsOf, labelOf, hasTab, open, closeFinished }) {
    this.jobsOf = jobsOf
    this.labelOf = labelOf
    this.hasTab = hasTab
    this.actions = { open, closeFinished }
    this.key = undefined
    this.chip = null
    const el = document.createElement("div")
    el.className = "tab-jobs-menu"
    el.setAttribute("role", "menu")
    el.hidden = true
    el.addEventListener("click", (event) => this.#onClick(event))
    el.addEventListener("keydown", (event) => this.#onKey(event))
    this.el = el
    document.body.append(el)
    document.addEventListener("pointerdown", (event) => {
      if (this.isOpen && !el.contains(event.target) && !this.chip?.contains(event.target))
        this.close()
    })
    addEventListener("resize", () => this.close())
  }

  get isOpen() {
    return !this.el.hidden
  }

  /** Opens the menu of group `key` under `chip`, or closes it when it is that one's. */
  toggle(key, chip, { keyboard = false } = {}) {
    if (this.isOpen && this.key === key) return this.close({ focusChip: keyboard })
    this.close()
    this.key = key
    this.chip = chip
    chip.setAttribute("aria-expanded", "true")
    this.el.hidden = false
    this.refresh()
    this.#place()
    this.#items()[0]?.focus()
  }

  close({ focusChip = false } = {}) {
    if (!this.isOpen) return
    this.el.hidden = true
    this.chip?.setAttribute("aria-expanded", "false")
    if (focusChip && this.chip?.isConnected) this.chip.focus()
    this.key = undefined
    this.chip = null
  }

  /** Rebuilds the open menu from the group's jobs (they change while it is open). */
  refresh() {
    if (!this.isOpen) return
    const infos = jobsInMenuOrder(this.jobsOf(this.key))
    if (!infos.length) return this.close()
    const focused = this.el.contains(document.activeElement) ? document.activeElement : null
    const focusKey = focused?.dataset.id ?? focused?.dataset.action ?? null
    const label = this.labelOf(this.key)
    this.el.setAttribute("aria-label", `Agent jobs in ${label}`)
    const rows = infos.map((info) => this.#item(info))
    const { finished } = jobCounts(infos)
    const close = document.createElement("button")
    close.type = "button"
    close.className = "tab-jobs-close"
    close.setAttribute("role", "menuitem")
    close.dataset.action = "close-finished"
    close.tabIndex = -1
    close.textContent = `Close finished (${finished})`
    close.title = "Close the tabs of this session's finished agent commands"
    if (!finished) close.setAttribute("aria-disabled", "true")
    this.el.replaceChildren(...rows, close)
    const again = focusKey
      ? this.#items().find((el) => (el.dataset.id ?? el.dataset.action) === focusKey)
      : null
    again?.focus()
    if (this.chip?.isConnected) this.#place()
  }

  #item(info) {
    const item = document.createElement("button")
    item.type = "button"
    item.className = "tab-jobs-item"
    item.setAttribute("role", "menuitem")
    item.tabIndex = -1
    item.dataset.id = info.id
    const status = statusOfJob(info)
    const state = jobState(info)
    const icon = document.createElement("span")
    icon.className = "status-icon"
    renderStatusIcon(icon, status, state)
    icon.removeAttribute("title")
    icon.setAttribute("aria-hidden", "true")
    const command = document.createElement("span")
    command.className = "tab-jobs-command"
    command.textContent = jobCommand(info)
    // No aria-label: the name is the visible text, "<command> <state>".
    const shown = this.hasTab(info.id)
    const stateEl = document.createElement("span")
    stateEl.className = "tab-jobs-state"
    stateEl.textContent = shown ? `${state} · in a tab` : state
    item.append(icon, command, stateEl)
    item.dataset.status = status
    if (shown) item.dataset.shown = "true"
    item.title = jobCommand(info)
    return item
  }

  #items() {
    return [...this.el.querySelectorAll('[role="menuitem"]')]
  }

  /** Under the chip, or over it when there is more room there (a short terminal area). */
  #place() {
    const box = this.chip.getBoundingClientRect()
    const style = this.el.style
    style.maxHeight = ""
    const width = this.el.offsetWidth
    const height = this.el.offsetHeight
    style.left = `${Math.max(8, Math.min(box.left, innerWidth - width - 8))}px`
    const below = innerHeight - box.bottom - 12
    const above = box.top - 12
    if (height <= below || below >= above) {
      style.top = `${box.bottom + 4}px`
      style.maxHeight = `${below}px`
    } else {
      style.top = `${Math.max(8, box.top - 4 - Math.min(height, above))}px`
      style.maxHeight = `${above}px`
    }
  }

  #onClick(event) {
    const item = event.target.closest?.('[role="menuitem"]')
    if (!item || item.getAttribute("aria-disabled") === "true") return
    const key = this.key
    this.close()
    if (item.dataset.action === "close-finished") this.actions.closeFinished(key)
    else this.actions.open(item.dataset.id)
  }

  #onKey(event) {
    const items = this.#items()
    const index = items.indexOf(document.activeElement)
    let next = null
    if (event.key === "ArrowDown") next = items[(index + 1) % items.length]
    else if (event.key === "ArrowUp") next = items[(index - 1 + items.length) % items.length]
    else if (event.key === "Home") next = items[0]
    else if (event.key === "End") next = items[items.length - 1]
    else if (event.key === "Escape") {
      event.preventDefault()
      event.stopPropagation()
      this.close({ focusChip: true })
      return
    } else if (event.key === "Tab") {
      this.close({ focusChip: true })
      return
    }
    if (next) {
      event.preventDefault()
      next.focus()
    }
  }
}
