// Mounts the chat: one store, fed by the app's one event stream, rendered into two roots (the
// sidebar and the chat area). The terminals keep their own imperative root.

import { effect, signal } from "@preact/signals"
import { render } from "preact"
import { apiPayload } from "../api.js"
import { ChatView } from "./chat-view.js"
import { html } from "./html.js"
import { SettingsDialog } from "./settings-dialog.js"
import { Welcome } from "./welcome.js"
import { clampWidth, layout, setLayout, Sidebar } from "./sidebar.js"
import { createChatStore } from "./store.js"
import { createJobsStore } from "./jobs-store.js"
import { ChatLinks } from "./job-links.js"
import { installChatKeys, KeyboardHelp } from "./keyboard.js"
import { mountSplitter } from "./splitter.js"
import { groupInfo } from "../terminals/groups.js"
import "./chat.css"

const ACTIVE_KEY = "desk.chat.active"

export function mountChat({ connection, sidebar, chat, toggle, openTerminal = async () => false }) {
  const terminalArea = document.getElementById("terminal-area")
  if (terminalArea && chat.parentElement === terminalArea.parentElement)
    mountSplitter({
      body: chat.parentElement,
      chat,
      terminals: terminalArea,
      header: document.querySelector(".app-header"),
    })
  const request = (method, path, body) =>
    apiPayload(method, path, body === undefined ? {} : { body })
  const store = createChatStore({ request })
  const jobs = createJobsStore({ request })
  const links = {
    jobs,
    openTerminal,
    select: (id) => store.select(id),
    activeId: () => store.activeId.value,
  }
  connection.on("*", (properties, event) => {
    store.handle(event.type, properties)
    jobs.handle(event.type, properties)
  })
  // Job changes are ephemeral: after any (re)connect the shown sessions' jobs are re-read.
  connection.on("server.connected", () => jobs.resync())
  // A stream that did not resume (first connect, after server.resync) may have missed
  // events: re-read what is shown. A resumed stream replays what it missed.
  connection.on("server.connected", (_properties, event) => {
    if (!event.resumed) store.resync().then(restoreActive)
  })

  let restored = false
  const restoreActive = () => {
    if (restored) return
    restored = true
    const saved = localStorage.getItem(ACTIVE_KEY)
    if (saved && store.sessions.value.some((s) => s.id === saved)) store.select(saved)
  }
  effect(() => {
    const id = store.activeId.value
    chat.hidden = !id
    if (!restored) return
    if (id) localStorage.setItem(ACTIVE_KEY, id)
    else localStorage.removeItem(ACTIVE_KEY)
  })

  const viewport = signal(innerWidth)
  addEventListener("resize", () => (viewport.value = innerWidth))
  effect(() => {
    viewport.value // the clamp depends on the window's width
    const { width, collapsed } = layout.value
    sidebar.hidden = collapsed
    sidebar.style.setProperty("--sidebar-width", `${clampWidth(width)}px`)
    toggle.setAttribute("aria-expanded", String(!collapsed))
    toggle.setAttribute("aria-label", collapsed ? "Show sessions" : "Hide sessions")
    toggle.title = collapsed ? "Show sessions" : "Hide sessions"
  })
  toggle.addEventListener("click", () => setLayout({ collapsed: !layout.value.collapsed }))

  render(
    html`<${ChatLinks.Provider} value=${links}><${Sidebar} store=${store} nav=${sidebar} /><//>`,
    sidebar,
  )
  render(html`<${ChatLinks.Provider} value=${links}><${ChatView} store=${store} /><//>`, chat)
  const welcome = document.getElementById("chat-welcome")
  if (welcome) render(html`<${Welcome} store=${store} />`, welcome)
  // The settings dialog has a root of its own: a modal inside a hidden (folded) sidebar or
  // chat area would not show.
  const settings = document.body.appendChild(document.createElement("div"))
  settings.className = "settings-root"
  render(html`<${SettingsDialog} store=${store} />`, settings)
  // The terminal strip names a session's group after it and opens its terminals in its folder.
  effect(() => {
    groupInfo.value = new Map(
      store.sessions.value.map((s) => [s.id, { name: s.title || "Untitled", folder: s.directory }]),
    )
  })
  const help = document.body.appendChild(document.createElement("div"))
  help.className = "keyboard-help-root"
  render(html`<${KeyboardHelp} />`, help)
  installChatKeys({ store, newSession: () => dispatchEvent(new CustomEvent("desk:new-session")) })
  return store
}
