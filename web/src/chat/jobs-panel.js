// The open session's jobs: a collapsible panel under the chat header listing its background
// and foreground jobs (state icon, command or description, live elapsed time), with Cancel for
// a running job, "Move to background" while a foreground call (shell or subagent) holds the
// turn, and links to a shell job's terminal tab or a subagent's session.

import { useEffect, useState } from "preact/hooks"
import { html } from "./html.js"
import { JobStatusIcon } from "./icons.js"
import { elapsed } from "./jobs-store.js"
import { SessionButton, TerminalButton, useLinks } from "./job-links.js"

/** Re-renders every second while `on` (a running job's elapsed time moves). */
function useNow(on) {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    if (!on) return undefined
    setNow(Date.now())
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [on])
  return now
}

/** A duration as a person says it: "6 s", "2 min 05 s", "1 h 02 min". */
export function spoken(ms) {
  return elapsed(ms)
    .replace(/(\d)h/, "$1 h")
    .replace(/(\d)m\b/, "$1 min")
    .replace(/(\d)s$/, "$1 s")
}

function JobRow({ job, sessionId, now }) {
  const links = useLinks()
  const [error, setError] = useState(null)
  const [cancelling, setCancelling] = useState(false)
  const running = job.status === "running"
  const started = job.time?.started
  const end = running ? now : job.time?.completed
  const cancel = async () => {
    setCancelling(true)
    setError(null)
    try {
      await links.jobs.cancel(sessionId, job.id)
    } catch (e) {
      setError(e.message)
    } finally {
      setCancelling(false)
    }
  }
  return html`<li class="job" data-id=${job.id} data-status=${job.status} data-type=${job.type}>
    <${JobStatusIcon} status=${job.status} />
    <span class="job-title" title=${job.title ?? ""}
      >${job.title || (job.type === "shell" ? "Command" : "Subagent")}</span
    >
    ${running && !job.background && html`<span class="job-tag">the turn waits for it</span>`}
    <span class="job-elapsed"
      >${started && end ? `${running ? "running" : "ran"} ${spoken(end - started)}` : ""}</span
    >
    ${job.type === "shell" && html`<${TerminalButton} terminalId=${job.terminal_id} jobKey=${job.job_key ?? job.id} />`}
    ${job.type === "subagent" && html`<${SessionButton} childId=${job.child_id ?? job.id} />`}
    ${running && html`<button type="button" class="job-cancel" disabled=${cancelling} onClick=${cancel}>Cancel</button>`}
    ${error && html`<span class="form-error" role="alert">${error}</span>`}
  </li>`
}

export function JobsPanel({ session }) {
  const links = useLinks()
  const [error, setError] = useState(null)
  const jobs = links ? links.jobs.of(session.id) : null
  // Read when the session is shown (again after a reconnect: the store's resync).
  useEffect(() => void links?.jobs.open(session.id), [session.id])
  const list = jobs?.jobs.value ?? []
  const running = list.filter((j) => j.status === "running")
  const now = useNow(running.length > 0)
  if (!jobs || list.length === 0) return null
  const foreground = running.some((j) => !j.background) // shell calls and subagents alike
  const moveToBackground = async () => {
    setError(null)
    try {
      await links.jobs.background(session.id)
    } catch (e) {
      setError(e.message)
    }
  }
  // Collapsed while nothing runs; running jobs first.
  const shown = [...running, ...list.filter((j) => j.status !== "running")]
  return html`<details class="jobs-panel" open=${running.length > 0}>
    <summary>
      Jobs
      <span class="jobs-count"
        >${running.length ? `${running.length} running` : `${list.length}`}</span
      >
    </summary>
    ${
      foreground &&
      html`<button type="button" class="jobs-background" onClick=${moveToBackground}>
        Move to background
      </button>`
    }
    ${error && html`<p class="form-error" role="alert">${error}</p>`}
    <ul class="jobs-list" aria-label="Jobs">
      ${shown.map((job) => html`<${JobRow} key=${job.id} job=${job} sessionId=${session.id} now=${now} />`)}
    </ul>
  </details>`
}
