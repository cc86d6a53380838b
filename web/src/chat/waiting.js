// "Waiting for you": a session whose call waits for the person's permission, told apart from
// "busy" everywhere (sidebar, header, composer, the tool card, the window title), and the
// marks of tool cards that tell the truth (running, finished, cancelled, denied, waiting).

import { useEffect } from "preact/hooks"
import { windowTitle } from "../title.js"
import { html } from "./html.js"
import { useLinks } from "./job-links.js"
import { toolStatus } from "./tool-card.js"

/** The calls of `sessionId` waiting for the person (live and read), oldest first. */
export function useWaitingCalls(sessionId) {
  const links = useLinks()
  return links && sessionId ? links.jobs.of(sessionId).permissions.value : []
}

/** The status a person reads: `waiting` while a call waits for them, else the session's. */
export function useSessionStatus(session) {
  const waiting = useWaitingCalls(session?.id)
  return waiting.length > 0 ? "waiting" : session?.status
}

const DENIED = new Set(["rejected", "permission.denied"])

/**
 * A tool card's mark: `waiting` (its permission is asked), `denied` (the person or a rule said
 * no), a background shell's job state (`running` until its job settles, then `completed`,
 * `error` or `cancelled`), else the part's own status.
 */
export function toolMark(part, { waiting = false, job = null } = {}) {
  if (waiting) return "waiting"
  const status = toolStatus(part)
  const state = part.state ?? {}
  if (
    status === "error" &&
    (DENIED.has(state.error?.type) || DENIED.has(state.metadata?.error_type))
  )
    return "denied"
  if (status === "completed" && state.metadata?.background) {
    const jobStatus = job?.status ?? state.metadata.status
    if (jobStatus === "running" || jobStatus === "cancelled" || jobStatus === "error")
      return jobStatus
  }
  return status
}

/** The mark of `part` in `thread`'s session, from the live permissions and jobs. */
export function useToolMark(part, sessionId) {
  const links = useLinks()
  const jobs = links && sessionId ? links.jobs.of(sessionId) : null
  const waiting = jobs ? jobs.permissions.value.some((p) => p.call_id === part.id) : false
  const job = jobs
    ? (jobs.jobs.value.find((j) => j.call_id === part.id || j.id === part.id) ?? null)
    : null
  return toolMark(part, { waiting, job })
}

/** The session's status icon as the person reads it (a component: the hook needs one). */
export function SessionMark({ session, Icon }) {
  return html`<${Icon} status=${useSessionStatus(session)} />`
}

/**
 * While a session waits for the person and the window is in the background, the window title
 * says so (web/src/title.js composes it; it goes back when the window is seen or nothing waits).
 */
export function useWaitingTitle(count) {
  useEffect(() => {
    windowTitle.waiting.value = count
  }, [count])
}
