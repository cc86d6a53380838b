// window.__desk: read-only views of the UI state for browser tests and benchmarks. It exposes
// no tickets, tokens or attachment ids.

import { listedIds } from "./chat/chat-view.js"
import { nativeFolderDialog } from "./chat/folder.js"
import { isOfflineReady, wasControlledAtLoad } from "./service-worker.js"
import { groupKeyOf, groupLabel } from "./terminals/groups.js"

export function installTestHooks({ connection, terminals, chat }) {
  const tabOf = (id) => terminals.tabs.get(id ?? terminals.activeId)

  const describe = (tab) => ({
    id: tab.id,
    title: tab.title,
    foreground: tab.foreground,
    busy: tab.busyWith, // what closing it would end, as the PTY host says ("" when nothing)
    status: tab.status,
    role: tab.link.role,
    phase: tab.link.phase,
    exitCode: tab.link.exitCode,
    epoch: tab.link.epoch,
    cursor: tab.link.cursor,
    unparsed: tab.writer.pending, // output pieces waiting for idle time (paced-writer.js)
    cols: tab.term.cols,
    rows: tab.term.rows,
    renderer: tab.renderer?.name ?? null,
    active: tab.id === terminals.activeId,
    group: groupKeyOf(tab.info),
  })

  /**
   * Resolves with milliseconds from the next keydown (of `key`, or any) to the first xterm
   * render after `text` appeared on the cursor's line, or up to `above` lines over it, of
   * terminal `id`: keystroke-to-paint as the page sees it. A tab that is not visible resolves
   * when the text has been parsed (nothing is painted).
   */
  const echoLatency = (id, text, { key = null, above = 0, timeoutMs = 10000 } = {}) =>
    new Promise((resolve, reject) => {
      const tab = tabOf(id)
      if (!tab) return reject(new Error(`no terminal ${id}`))
      let start = null
      let parsed = false
      const cleanup = []
      const finish = (value, error) => {
        for (const dispose of cleanup) dispose()
        if (error) reject(error)
        else resolve(value)
      }
      const onKey = (event) => {
        if (start === null && (key === null || event.key === key)) start = performance.now()
      }
      document.addEventListener("keydown", onKey, true)
      cleanup.push(() => document.removeEventListener("keydown", onKey, true))
      const hasText = () => {
        const buffer = tab.term.buffer.active
        const bottom = buffer.baseY + buffer.cursorY
        for (let y = Math.max(0, bottom - above); y <= bottom; y++) {
          if ((buffer.getLine(y)?.translateToString(true) ?? "").includes(text)) return true
        }
        return false
      }
      const parsedSub = tab.term.onWriteParsed(() => {
        if (start === null || parsed || !hasText()) return
        parsed = true
        if (!tab.opened || tab.paneEl.hidden) finish(performance.now() - start)
      })
      cleanup.push(() => parsedSub.dispose())
      const renderSub = tab.term.onRender(() => {
        if (parsed) finish(performance.now() - start)
      })
      cleanup.push(() => renderSub.dispose())
      const timer = setTimeout(
        () => finish(null, new Error(`"${text}" not shown within ${timeoutMs} ms`)),
        timeoutMs,
      )
      cleanup.push(() => clearTimeout(timer))
    })

  window.__desk = Object.freeze({
    state: () => ({
      connection: connection.state,
      connected: connection.state === "connected",
      offlineReady: isOfflineReady(),
      controlled: Boolean(navigator.serviceWorker?.controller),
      controlledAtLoad: wasControlledAtLoad(),
      activeTerminal: terminals.activeId,
      loaded: terminals.loaded,
      synced: terminals.syncs,
      order: [...terminals.order],
      // Groups in display order (key null: the default group) and each tab's status, so a
      // report of the state alone (the window probe's) shows what the strip shows.
      groups: terminals
        .groups()
        .map(({ key, ids }) => ({ group: key, label: groupLabel(key), terminals: ids })),
      tabs: terminals.order.map((id) => {
        const tab = terminals.tabs.get(id)
        return { id, title: tab.title, status: tab.status, group: groupKeyOf(tab.info) }
      }),
      // Agent job terminals folded behind their session's chip (no tab here).
      foldedJobs: [...terminals.store.folded.value.keys()],
      viewOnlyBar: !document.getElementById("view-only-bar").hidden,
      // The window's native folder dialog can be asked for (web/src/chat/folder.js).
      folderDialog: nativeFolderDialog(),
    }),
    terminals: () => terminals.order.map((id) => describe(terminals.tabs.get(id))),
    bufferText: (id) => tabOf(id)?.bufferText() ?? null,
    selection: (id) => tabOf(id)?.term.getSelection() ?? null,
    fontFamily: (id) => tabOf(id)?.term.options.fontFamily ?? null,
    // Where the view is: the top visible line and the top line when at the bottom.
    viewport: (id) => {
      const buffer = tabOf(id)?.term.buffer.active
      return buffer ? { top: buffer.viewportY, bottom: buffer.baseY } : null
    },
    // Without an argument: in the active tab's group, as the "+" button does.
    newTerminal: (...group) => terminals.newTerminal(...group),
    activate: (id) => terminals.activate(id),
    resync: () => terminals.resync(),
    echoLatency,
    // The chat store's view: sessions, the open one, and its loaded messages.
    chat: () => {
      const id = chat.activeId.value
      const thread = id ? chat.thread(id) : null
      return {
        sessions: chat.sessions.value.map((s) => ({ ...s })),
        active: id,
        state: thread?.state.value ?? null,
        messages: thread ? thread.list() : [],
        olderDone: thread?.older.value.done ?? null,
        listed: listedIds(), // the message list's order; only those near the viewport are in the DOM
        position: connection.position,
      }
    },
    selectSession: (id) => chat.select(id),
  })
}
