// The terminal area's keyboard: the page-wide shortcuts (shortcuts.js names them) and the tab
// strip's keys (arrows, Home/End, Enter/Escape back to the terminal, F2 rename, Delete close).

import { shortcutFor } from "./shortcuts.js"

/**
 * Wires the shortcuts to `area` (a TerminalManager: activeTab, newTerminal, closeTab, cycle,
 * moveBy, cycleGroup, activate, rename, notice, store), `search` (a SearchBar) and `rename`
 * (tab -> opens its rename field).
 */
export function wireKeys(area, { search, rename }) {
  document.addEventListener("keydown", (event) => onShortcut(area, search, rename, event), true)
  area.el.strip.addEventListener("keydown", (event) => onStripKey(area, rename, event))
}

function onShortcut(area, search, rename, event) {
  const action = shortcutFor(event)
  if (!action) return
  if (action === "paste") return // let the browser deliver the paste event to xterm
  event.preventDefault()
  event.stopPropagation()
  const tab = area.activeTab()
  switch (action) {
    case "new":
      area.newTerminal()
      break
    case "close":
      if (tab) area.closeTab(tab.id)
      break
    case "next":
      area.cycle(1)
      break
    case "previous":
      area.cycle(-1)
      break
    case "move-right":
      area.moveBy(1)
      break
    case "move-left":
      area.moveBy(-1)
      break
    case "next-group":
      area.cycleGroup(1)
      break
    case "search":
      search.show()
      break
    case "rename":
      if (tab) rename(tab)
      break
    case "focus-strip":
      tab?.tabEl.focus()
      break
    case "copy": {
      const text = tab?.term.getSelection()
      if (text)
        navigator.clipboard
          ?.writeText(text)
          .catch(() => area.notice("Copy was refused by the browser."))
      break
    }
    default:
      break
  }
}

function onStripKey(area, rename, event) {
  const tab = area.tabFrom(event.target)
  if (!tab || event.target.closest("input")) return
  const order = area.store.order.value
  if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
    event.preventDefault()
    area.cycle(event.key === "ArrowRight" ? 1 : -1)
    area.activeTab()?.tabEl.focus()
  } else if (event.key === "Home" || event.key === "End") {
    event.preventDefault()
    const id = event.key === "Home" ? order[0] : order[order.length - 1]
    if (id) area.activate(id)
    area.activeTab()?.tabEl.focus()
  } else if (event.key === "Enter" || event.key === "Escape") {
    // Back into the terminal (Ctrl+Shift+S led here from it).
    event.preventDefault()
    area.activate(tab.id)
  } else if (event.key === "F2") {
    event.preventDefault()
    rename(tab)
  } else if (event.key === "Delete") {
    event.preventDefault()
    area.closeTab(tab.id)
  }
}
