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
import { focusPrompt, installChatKeys, KeyboardHelp } from "./keyboard.js"
import { keyboardAtLoad, rememberedSession, rememberSession, trackKeyboard } from "./remembered.js"
import { mountSplitter } from "./splitter.js"
import { groupInfo } from "../terminals/groups.js"
import "./chat.css"

export function mountChat({
  connection,
  sidebar,
  chat,
  toggle,
  openTerminal = async () => false,
  focusTerminals = () => {},
}) {
  const terminalArea = document.getElementById("terminal-area")
  // Decided once, as the page opens (the terminals are told the same in main.js).
  const keyboard = keyboardAtLoad()
  trackKeyboard({ terminals: terminalArea, chat: [sidebar, chat] })
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
    const saved = rememberedSession()
    const found = Boolean(saved) && store.sessions.value.some((s) => s.id === saved)
    if (found) store.select(saved)
    // The keyboard goes where the person continues: the remembered session's prompt box,
    // unless they were last in the terminals (the terminals took it as they loaded). Never
    // away from something the person focused while the page loaded.
    const untouched = !document.activeElement || document.activeElement === document.body
    if (keyboard !== "chat" || !untouched) return
    if (found) focusPrompt()
    else focusTerminals() // the remembered session is gone
  }
  effect(() => {
    const id = store.activeId.value
    chat.hidden = !id
    if (!restored) return
    rememberSession(id)
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
