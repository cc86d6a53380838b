// The first screen's word on the chat, above the terminals' "No terminals.": what a session is,
// where the sessions are and how to start one. Shown while no session is open.

import { html } from "./html.js"

const newSession = () => dispatchEvent(new CustomEvent("desk:new-session"))

export function Welcome({ store }) {
  if (store.activeId.value) return null
  const any = store.sessions.value.some((s) => !s.parent_id)
  return html`<p class="chat-welcome-text">
    <strong>Chat with the agent</strong> in a session: a conversation about one folder, where it
    reads, edits and runs commands. ${any ? "Open one from the sessions list, or " : ""}
    <button type="button" class="link-button chat-welcome-start" onClick=${newSession}>
      ${any ? "start a new chat session" : "Start a chat session"}
    </button>
    <span class="chat-welcome-key">(<kbd>Alt+N</kbd>).</span>
  </p>`
}
