// Status icons told apart by shape (colour only reinforces), each with an accessible name.
import { html } from "./html.js"

const WAITING = html`<path d="M2 3.5h12v8H7.5L4.5 14v-2.5H2z" /><path
    d="M6.6 6a1.5 1.5 0 1 1 1.9 1.4c-.4.1-.5.4-.5.8M8 9.7v.3"
  />`

const SESSION = {
  // hollow ring: nothing running
  idle: html`<circle cx="8" cy="8" r="4.5" />`,
  // three dots: working
  busy: html`<circle cx="3.5" cy="8" r="1.4" fill="currentColor" stroke="none" /><circle
      cx="8"
      cy="8"
      r="1.4"
      fill="currentColor"
      stroke="none"
    /><circle cx="12.5" cy="8" r="1.4" fill="currentColor" stroke="none" />`,
  // triangle with a bar: failed
  error: html`<path d="M8 2.2L14.2 13H1.8z" /><path d="M8 6.4v3.2M8 11.2v.4" />`,
  // speech bubble with a question mark: waiting for the person's answer
  waiting: WAITING,
}
export const SESSION_LABEL = {
  idle: "Idle",
  busy: "Busy",
  error: "Error",
  waiting: "Waiting for you",
}

const TOOL = {
  streaming: html`<path d="M2.5 8h2M7 8h2M11.5 8h2" />`, // dashes: input still arriving
  running: html`<path d="M13 8a5 5 0 1 1-1.6-3.7" /><path d="M11.8 1.8l-.3 2.8 2.8.2" />`, // arc: running
  completed: html`<path d="M3 8.5l3.2 3.2L13 4.8" />`, // check
  error: html`<path d="M4 4l8 8M12 4l-8 8" />`, // cross
  cancelled: html`<circle cx="8" cy="8" r="5.5" /><path d="M4.2 11.8l7.6-7.6" />`, // slashed circle: stopped by the user
  denied: html`<circle cx="8" cy="8" r="5.5" /><path d="M5 8h6" />`, // no entry: refused
  waiting: WAITING, // waiting for the person's answer
}
export const TOOL_LABEL = {
  streaming: "Preparing",
  running: "Running",
  completed: "Completed",
  error: "Failed",
  cancelled: "Cancelled",
  denied: "Denied",
  waiting: "Waiting for you",
}

function icon(paths, status, label, className) {
  return html`<span
    class=${className}
    data-status=${status}
    role="img"
    aria-label=${label}
    title=${label}
  >
    <svg viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      ${paths[status] ?? paths.idle ?? null}
    </svg>
  </span>`
}

export const SessionStatusIcon = ({ status }) =>
  icon(
    SESSION,
    SESSION[status] ? status : "idle",
    SESSION_LABEL[status] ?? "Idle",
    "session-status",
  )

export const ToolStatusIcon = ({ status }) =>
  icon(TOOL, TOOL[status] ? status : "running", TOOL_LABEL[status] ?? status, "tool-status")

const JOB = {
  running: TOOL.running,
  completed: TOOL.completed,
  error: TOOL.error,
  // circle with a bar: stopped on purpose
  cancelled: html`<circle cx="8" cy="8" r="5.5" /><path d="M4.2 11.8l7.6-7.6" />`,
}
export const JOB_LABEL = {
  running: "Running",
  completed: "Done",
  error: "Failed",
  cancelled: "Cancelled",
}

export const JobStatusIcon = ({ status }) =>
  icon(JOB, JOB[status] ? status : "running", JOB_LABEL[status] ?? status, "job-status")
