// A subagent's session and its parent: the child's header links back to the parent session,
// and the prompt the parent's agent wrote for the child reads as a task from that session,
// not as the person's message.

import { html } from "./html.js"

const titleOf = (store, id) => {
  const session = store.sessions.value.find((s) => s.id === id)
  return session ? session.title || "Untitled" : null
}

function OpenSession({ store, id, children, className }) {
  const gone = titleOf(store, id) === null
  return html`<button
    type="button"
    class=${`link-button ${className}`}
    disabled=${gone}
    title=${gone ? "That session was deleted" : "Open that session"}
    onClick=${() => store.select(id)}
  >
    ${children}
  </button>`
}

/** Under a child session's header: "Helper of <parent>", opening the parent. */
export function ParentLink({ session, store }) {
  const parent = session.parent_id
  if (!parent) return null
  return html`<div class="chat-parent">
    Helper of${" "}
    <${OpenSession} store=${store} id=${parent} className="parent-link">
      ${titleOf(store, parent) ?? "a deleted session"}
    <//>
  </div>`
}

/** The task a parent session's agent gave this session (a user message with from_session). */
export function TaskMessage({ message, store, children }) {
  const parent = message.from_session
  return html`<article
    class="message msg-task"
    data-id=${message.id}
    data-reverted=${message.reverted ? "true" : undefined}
  >
    <header class="message-meta">
      <span class="task-from">
        Task from${" "}
        <${OpenSession} store=${store} id=${parent} className="task-parent">
          ${titleOf(store, parent) ?? "a deleted session"}
        <//>
      </span>
      <span class="header-spacer"></span>
      ${children}
    </header>
    <div class="plain">${message.text}</div>
  </article>`
}
