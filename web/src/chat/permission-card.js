// The tool calls waiting for the person (permission mode `ask`): a card per call with the tool,
// what it would do (the command for shell, the diff for edit, the new content for write) and
// Allow once / Allow for this session / Deny. Read from GET /permission when the session is
// opened, so a wait survives reloads and restarts; the asked/replied events keep it current.
// Everything shown came from the model: text only.

import { useState } from "preact/hooks"
import { html } from "./html.js"
import { useLinks } from "./job-links.js"

/** A unified diff as lines, each tagged add/del/hunk/meta/context for colouring. */
export function diffLines(diff) {
  return String(diff ?? "")
    .split("\n")
    .map((text) => {
      let kind = "context"
      if (text.startsWith("+++") || text.startsWith("---")) kind = "meta"
      else if (text.startsWith("@@")) kind = "hunk"
      else if (text.startsWith("+")) kind = "add"
      else if (text.startsWith("-")) kind = "del"
      return { kind, text }
    })
}

function Diff({ diff }) {
  return html`<pre class="plain permission-diff">
${diffLines(diff).map(
      (line) => html`<span class=${`diff-line diff-${line.kind}`}>${line.text} </span>`,
    )}</pre>`
}

function What({ request }) {
  const input = request.input ?? {}
  if (request.tool === "shell")
    return html`<pre class="plain permission-command">${input.command ?? ""}</pre>`
  const path = input.path ?? input.file_path ?? input.filePath
  return html`${path && html`<div class="permission-path">${path}</div>`}
  ${
    request.tool === "edit" && request.diff !== undefined && request.diff !== null
      ? html`<${Diff} diff=${request.diff} />`
      : request.diff !== undefined && request.diff !== null
        ? html`<pre class="plain permission-content">${request.diff}</pre>`
        : html`<pre class="plain permission-content">${JSON.stringify(input, null, 2)}</pre>`
  }`
}

const REPLIES = [
  ["once", "Allow once"],
  ["session", "Allow for this session"],
  ["deny", "Deny"],
]

function PermissionCard({ request, sessionId }) {
  const links = useLinks()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(null)
  const answer = async (reply) => {
    setBusy(true)
    setError(null)
    try {
      await links.jobs.reply(sessionId, request.call_id, reply)
    } catch (e) {
      setError(e.message)
      setBusy(false)
    }
  }
  return html`<section
    class="permission-card"
    data-call=${request.call_id}
    data-tool=${request.tool}
    aria-label=${`Permission for ${request.tool}`}
  >
    <header class="permission-head">
      Allow <span class="permission-tool">${request.tool}</span>?
    </header>
    <${What} request=${request} />
    ${error && html`<p class="form-error" role="alert">${error}</p>`}
    <div class="permission-buttons">
      ${REPLIES.map(
        ([reply, label]) =>
          html`<button
            type="button"
            class=${reply === "deny" ? "danger" : reply === "once" ? "primary" : ""}
            data-reply=${reply}
            disabled=${busy}
            onClick=${() => answer(reply)}
          >
            ${label}
          </button>`,
      )}
    </div>
  </section>`
}

export function PermissionPrompts({ session }) {
  const links = useLinks()
  if (!links) return null
  const waiting = links.jobs.of(session.id).permissions.value
  if (waiting.length === 0) return null
  return html`<div
    class="permission-prompts"
    role="region"
    aria-label="Waiting for your permission"
  >
    ${waiting.map((request) => html`<${PermissionCard} key=${request.call_id} request=${request} sessionId=${session.id} />`)}
  </div>`
}

/** The session's permission mode (auto: tools run; ask: shell, write and edit wait). */
export function PermissionModeSwitch({ session }) {
  const links = useLinks()
  const [error, setError] = useState(null)
  if (!links) return null
  const jobs = links.jobs.of(session.id)
  const mode = jobs.mode.value ?? session.permission_mode ?? "auto"
  const change = async (event) => {
    const next = event.currentTarget.value
    setError(null)
    try {
      await links.jobs.setMode(session.id, next)
    } catch (e) {
      setError(e.message)
    }
  }
  return html`<label class="permission-mode" title="Ask before shell, write and edit calls run">
    <span>Permissions</span>
    <select aria-label="Permission mode" value=${mode} onChange=${change}>
      <option value="auto">Auto</option>
      <option value="ask">Ask</option>
    </select>
    ${error && html`<span class="form-error" role="alert">${error}</span>`}
  </label>`
}
