// The terminal area's link to the service: the terminal list (read at start and after every
// reconnect, reconciled with the tabs open here by reconcile.js, its agent jobs folded out of the
// strip by agent-jobs.js), the live pty.* events, and the two preferences shared by every
// window: the tab order and the tab last shown.

import { api } from "../api.js"
import { foldList } from "./agent-jobs.js"
import { firstShown, followSaved, reconcile } from "./reconcile.js"
import { loadActive, loadKnownTerminals } from "./storage.js"

export const ORDER_KEY = "terminal-order"
// The tab the user last showed in any window: a new window opens on it.
export const ACTIVE_KEY = "terminal-active"
const SHARE_ACTIVE_MS = 250

export class TerminalSync {
  /**
   * area: the TerminalManager (tabs, openedJobs, add, arrived, updated, exited, remove,
   * keepOpened, activate, revealActive, renderStrip, groupKey, notice);
   * store: its TerminalStore.
   */
  constructor({ connection, store, area }) {
    this.connection = connection
    this.store = store
    this.area = area
    this.shareTimer = null
    this.savingOrder = null
  }

  start() {
    const { area, connection, store } = this
    connection.on("pty.created", ({ info }) => area.arrived(info))
    connection.on("pty.updated", ({ info }) => area.updated(info))
    connection.on("pty.exited", ({ id, exit_code }) => area.exited(id, exit_code))
    connection.on("pty.deleted", ({ id }) => area.remove(id))
    connection.on("server.connected", () => this.sync())
    // Another window reordered its tabs: follow.
    connection.on("ui.preference.updated", ({ key, value }) => {
      if (key === ORDER_KEY && Array.isArray(value)) this.#applyOrder(value)
      if (key === ACTIVE_KEY && typeof value === "string") store.sharedActive.value = value
    })
    connection.onState((state) => {
      if (state === "connected") for (const tab of area.tabs.values()) tab.link.retryNow()
    })
    return this.sync()
  }

  /** Reads the terminal list (and, before the first, the saved order and shared tab). */
  async sync() {
    const { area, store } = this
    const asked = store.changes
    const loaded = store.loaded.value
    let list
    let order
    let shared
    try {
      ;[list, order, shared] = await Promise.all([
        api("GET", "/api/pty"),
        loaded ? null : api("GET", `/api/ui/prefs/${ORDER_KEY}`).catch(() => null),
        loaded ? null : api("GET", `/api/ui/prefs/${ACTIVE_KEY}`).catch(() => null),
      ])
    } catch (error) {
      // Service down before anything loaded: show the tabs we knew, reconnecting.
      if (error.status === 0 && !store.loaded.value && !area.tabs.size) this.#restoreKnown()
      return // offline or signed out: server.connected triggers another sync
    }
    if (!Array.isArray(list)) return
    if (!store.loaded.value && Array.isArray(order?.value))
      store.order.value = order.value.filter((id) => typeof id === "string")
    const { folded, shown } = foldList({
      list: list.filter((info) => typeof info?.id === "string"),
      tabs: new Set(area.tabs.keys()),
      opened: area.openedJobs,
      folded: store.folded.value,
      changedAt: store.changedAt,
      asked,
    })
    store.folded.value = folded
    area.keepOpened(new Set(list.map((info) => info?.id)), asked)
    const plan = reconcile({
      list: shown,
      open: [...area.tabs.keys()],
      order: store.order.value,
      changedAt: store.changedAt,
      asked,
    })
    for (const id of plan.remove) area.remove(id)
    store.order.value = plan.order
    // This window's own choice (a reload), else the tab another window shows.
    if (typeof shared?.value === "string") store.sharedActive.value = shared.value
    const wanted = store.loaded.value
      ? store.activeId.value
      : (loadActive() ?? store.sharedActive.value)
    // Create the tab the user will see first, so its size is measured before the others attach.
    const first = firstShown(plan.listed, wanted)
    if (first) area.add(first, { quiet: true })
    for (const info of plan.listed) {
      if (area.tabs.has(info.id)) area.tabs.get(info.id).updateInfo(info)
      else area.add(info, { quiet: true })
    }
    store.loaded.value = true
    store.syncs.value += 1
    area.renderStrip()
    const active = store.activeId.value
    if (!active || !area.tabs.has(active))
      area.activate(first?.id ?? null, { focus: loaded || area.focusAtLoad })
    // Tabs added around the active one may have pushed it out of the strip's view.
    else area.revealActive()
  }

  /** Tells the other windows which tab this one shows (after the user stays on it a moment). */
  shareActive(id) {
    const store = this.store
    clearTimeout(this.shareTimer)
    if (!store.loaded.value) return // the first sync picks the tab; it is not a choice yet
    this.shareTimer = setTimeout(() => {
      if (id === store.sharedActive.value) return
      store.sharedActive.value = id
      api("PUT", `/api/ui/prefs/${ACTIVE_KEY}`, { body: { value: id } }).catch(() => {})
    }, SHARE_ACTIVE_MS)
  }

  saveOrder() {
    const value = [...this.store.order.value]
    // Serialise the writes so the last order wins.
    this.savingOrder = (this.savingOrder ?? Promise.resolve())
      .then(() => api("PUT", `/api/ui/prefs/${ORDER_KEY}`, { body: { value } }))
      .catch((error) => this.area.notice(`Could not save the tab order: ${error.message}`))
  }

  #restoreKnown() {
    const { area } = this
    const known = loadKnownTerminals()
    for (const info of known) {
      const tab = area.add(info, { quiet: true })
      if (tab) {
        tab.restored = true // it was attached before this reload
        tab.render()
      }
    }
    const wanted = area.tabs.has(loadActive()) ? loadActive() : known[0]?.id
    if (wanted) area.activate(wanted, { focus: area.focusAtLoad })
    area.renderStrip()
  }

  #applyOrder(saved) {
    const current = this.store.order.value
    const order = followSaved(current, saved, (id) => this.area.groupKey(id))
    if (order.every((id, i) => id === current[i])) return
    this.store.order.value = order
    this.area.renderStrip()
  }
}
