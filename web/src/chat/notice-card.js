// A background job's notice (a synthetic message from shell or subagent, see API.md) as a
// collapsible card: state icon, the command or description, and the output as text. The
// notice's text is the model's input and may hold anything: it is shown as text only.

import { html } from "./html.js"
import { JobStatusIcon } from "./icons.js"
import { parseNotice } from "./jobs-store.js"
import { SessionButton, TerminalButton } from "./job-links.js"

/** Whether a synthetic message is a job notice (the restart notice is not). */
export const isJobNotice = (message) =>
  message.metadata?.source === "shell" || message.metadata?.source === "subagent"

export function NoticeCard({ message }) {
  const meta = message.metadata ?? {}
  const parsed = parseNotice(message.text)
  const shell = meta.source === "shell"
  const state = meta.state ?? parsed?.attrs.state ?? "completed"
  const title = shell ? parsed?.attrs.command : parsed?.attrs.description
  const body = parsed ? parsed.body : message.text
  return html`<article
    class="message msg-synthetic msg-notice"
    data-id=${message.id}
    data-source=${meta.source}
    data-state=${state}
  >
    <div class="part-tool-row notice-row">
      <details class="notice-card">
        <summary>
          <${JobStatusIcon} status=${state} />
          <span class="notice-kind">${shell ? "Command" : "Subagent"}</span>
          <span class="notice-title">${title || message.description || ""}</span>
        </summary>
        <pre class="plain notice-output">${body}</pre>
      </details>
      ${shell && html`<${TerminalButton} jobKey=${meta.job_key ?? meta.job_id} />`}
      ${!shell && html`<${SessionButton} childId=${meta.child_id} />`}
    </div>
  </article>`
}
