// What the chat's job, notice and permission cards reach beyond the message list: the jobs
// store, the terminals area (a job's tab) and the session list (a subagent's child session).
// One context, given once where the chat is mounted, so no message component threads it.

import { createContext } from "preact"
import { useContext } from "preact/hooks"
import { api } from "../api.js"
import { html } from "./html.js"

/** { jobs (createJobsStore), openTerminal(id) -> Promise<bool>, select(sessionId) } */
export const ChatLinks = createContext(null)

export const useLinks = () => useContext(ChatLinks)

/** The job key of a shell call: the PTY host's, derived from the session and the call. */
export const jobKeyOf = (sessionId, callId) => `job:${sessionId}:${callId}`

/**
 * Opens a shell job's terminal tab: `terminalId` when the card knows it (tool metadata, the
 * jobs list), else the terminal whose `job.key` is `jobKey` (a notice, a running call).
 */
export async function openJobTerminal(links, { terminalId, jobKey }) {
  let id = terminalId
  if (!id && jobKey) {
    const list = await api("GET", "/api/pty").catch(() => [])
    id = (Array.isArray(list) ? list : []).find((info) => info.job?.key === jobKey)?.id
  }
  if (!id) return false
  return links.openTerminal(id)
}

/** "Open terminal" for a shell job; a button inside a <summary> must not toggle it. */
export function TerminalButton({ terminalId, jobKey }) {
  const links = useLinks()
  if (!links || (!terminalId && !jobKey)) return null
  const onClick = (event) => {
    event.preventDefault()
    event.stopPropagation()
    openJobTerminal(links, { terminalId, jobKey })
  }
  return html`<button type="button" class="link-button job-open-terminal" onClick=${onClick}>
    Open terminal
  </button>`
}

/** "Open session" for a subagent's child session. */
export function SessionButton({ childId }) {
  const links = useLinks()
  if (!links || !childId) return null
  const onClick = (event) => {
    event.preventDefault()
    event.stopPropagation()
    links.select(childId)
  }
  return html`<button type="button" class="link-button job-open-session" onClick=${onClick}>
    Open session
  </button>`
}

/** The links of a tool card: a shell call's terminal, a subagent call's session. */
export function ToolLinks({ part }) {
  const links = useLinks()
  if (!links) return null
  if (part.name === "shell") {
    const sessionId = links.activeId()
    return html`<${TerminalButton}
      terminalId=${part.state?.metadata?.terminal_id}
      jobKey=${sessionId ? jobKeyOf(sessionId, part.id) : null}
    />`
  }
  if (part.name === "subagent")
    return html`<${SessionButton} childId=${part.state?.metadata?.session_id} />`
  return null
}
