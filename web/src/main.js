import "./styles.css"
import { ServiceConnection, STATES } from "./connection.js"
import { registerServiceWorker } from "./service-worker.js"
import { setupThemeToggle } from "./theme.js"
import { followChatSession, installWindowTitle } from "./title.js"
import { TerminalManager } from "./terminals/manager.js"
import { mountChat } from "./chat/index.js"
import { keyboardAtLoad } from "./chat/remembered.js"

const $ = (id) => document.getElementById(id)

setupThemeToggle($("theme-toggle"))
installWindowTitle()

const connection = new ServiceConnection()
const indicator = $("connection")
connection.onState((state) => {
  indicator.dataset.state = state
  indicator.querySelector(".connection-label").textContent = STATES[state]
  indicator.title = `Desk service: ${STATES[state]}`
  $("offline-banner").hidden = state !== "offline"
  $("signin-banner").hidden = state !== "unauthorized"
})

const terminals = new TerminalManager({
  connection,
  // The terminal takes the keyboard as it loads only when the page does not open on a chat
  // session, or the person was last in the terminals (chat/remembered.js).
  focusAtLoad: keyboardAtLoad() === "terminals",
  elements: {
    strip: $("tab-strip"),
    newTab: $("new-tab"),
    panes: $("panes"),
    empty: $("empty-terminals"),
    notice: $("terminal-notice"),
    viewOnlyBar: $("view-only-bar"),
    takeControl: $("take-control"),
    confirm: $("confirm-dialog"),
    search: {
      bar: $("search-bar"),
      input: $("search-input"),
      next: $("search-next"),
      prev: $("search-prev"),
      close: $("search-close"),
    },
  },
})

const chat = mountChat({
  connection,
  sidebar: $("sessions-sidebar"),
  chat: $("chat-area"),
  toggle: $("sidebar-toggle"),
  openTerminal: (id) => terminals.openTerminal(id),
  focusTerminals: () => terminals.focusActive(),
})
followChatSession(chat)

// A click on the theme button hands the keyboard back to the terminal (it kept the focus, so
// typing went nowhere and Enter flipped the theme back); keyboard users stay on the button.
$("theme-toggle").addEventListener("click", (event) => {
  if (event.detail > 0) terminals.focusActive()
})

connection.start()
terminals.start()
// The test hooks (window.__desk) are their own chunk, loaded only when the service marks the
// page (DESK_TEST_HOOKS=1, desktop/server/webui.py): a person's page never runs them.
if (document.querySelector('meta[name="desk-test-hooks"][content="on"]')) {
  import("./test-hooks.js").then(({ installTestHooks }) =>
    installTestHooks({ connection, terminals, chat }),
  )
}

// The worker is not needed for the first paint: register it once the page has loaded.
if (import.meta.env.PROD) {
  if (document.readyState === "complete") registerServiceWorker()
  else addEventListener("load", () => registerServiceWorker(), { once: true })
}
