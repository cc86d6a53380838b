// The tool calls waiting for the person (permission mode `ask`): a card per call with the tool,
// what it would do (the command for shell, the diff for edit, the new content for write) and
// Allow once / Allow for this session / Deny. Read from GET /permission when the session is
// opened, so a wait survives reloads and restarts; the asked/replied events keep it current.
// Everything shown came from the model: text only, and exactly what is approved: characters
// that hide or reorder text (controls, bidi controls, zero-width) are shown as ⟨U+XXXX⟩ with a
// warning, diffs keep their lines, and a command says how many lines it has.

import { useEffect, useRef, useState } from "preact/hooks"
import { html } from "./html.js"
import { useLinks } from "./job-links.js"
import { numberedLines, UnifiedDiff } from "./unified-diff.js"

// C0/C1 controls (not tab or newline), bidi controls and marks, zero-width and other
// invisible format characters: each can make the card show something else than what runs.
/* eslint-disable no-control-regex, no-misleading-character-class */
const HIDDEN =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB]/g
/* eslint-enable no-control-regex, no-misleading-character-class */

const codePoint = (ch) => `⟨U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`

/** `text` as pieces: plain runs, and each hidden character as its code point. */
export function revealHidden(text) {
  const source = String(text ?? "")
  const pieces = []
  let last = 0
  for (const match of source.matchAll(HIDDEN)) {
    if (match.index > last) pieces.push({ text: source.slice(last, match.index), hidden: false })
    pieces.push({ text: codePoint(match[0]), hidden: true })
    last = match.index + match[0].length
  }
  if (last < source.length) pieces.push({ text: source.slice(last), hidden: false })
  return pieces
}

function strings(value, out = []) {
  if (typeof value === "string") out.push(value)
  else if (value && typeof value === "object") for (const v of Object.values(value)) strings(v, out)
  return out
}

/** How many hidden characters the request holds, in everything the card shows. */
export function hiddenCount(request) {
  const text = strings([request.diff ?? "", request.input ?? {}]).join("\n")
  return text.match(HIDDEN)?.length ?? 0
}

/** A command's line count and the empty lines it starts with (they push it out of view). */
export function commandShape(command) {
  const lines = String(command ?? "").split("\n")
  let leading = 0
  while (leading < lines.length - 1 && lines[leading].trim() === "") leading += 1
  return { lines: lines.length, leading }
}

function Shown({ text }) {
  return revealHidden(text).map((piece) =>
    piece.hidden
      ? html`<span class="permission-hidden" title="An invisible or direction-changing character"
          >${piece.text}</span
        >`
      : piece.text,
  )
}

/** A unified diff as lines, each tagged add/del/hunk/meta/context for colouring. */
export function diffLines(diff) {
  return numberedLines(diff).map(({ kind, text }) => ({
    kind: kind === "ctx" ? "context" : kind,
    text,
  }))
}

const shown = (text) => html`<${Shown} text=${text} />`

function Diff({ diff }) {
  return html`<${UnifiedDiff} patch=${diff} show=${shown} className="permission-diff" />`
}

function Command({ command }) {
  const { lines, leading } = commandShape(command)
  return html`${
      lines > 1 &&
      html`<div class="permission-meta">
        ${lines} lines${leading > 0 && `, the first ${leading} empty`} (scroll to read all of it)
      </div>`
    }
    <pre class="plain permission-command"><${Shown} text=${command} /></pre>`
}

function What({ request }) {
  const input = request.input ?? {}
  if (request.tool === "shell") return html`<${Command} command=${input.command ?? ""} />`
  const path = input.path ?? input.file_path ?? input.filePath
  return html`${path && html`<div class="permission-path"><${Shown} text=${path} /></div>`}
  ${
    request.tool === "edit" && request.diff !== undefined && request.diff !== null
      ? html`<${Diff} diff=${request.diff} />`
      : request.diff !== undefined && request.diff !== null
        ? html`<pre class="plain permission-content"><${Shown} text=${request.diff} /></pre>`
        : html`<pre class="plain permission-content"><${Shown}
            text=${JSON.stringify(input, null, 2)}
          /></pre>`
  }`
}

function HiddenWarning({ request }) {
  const count = hiddenCount(request)
  if (count === 0) return null
  return html`<p class="permission-warning" role="alert">
    This call holds ${count} invisible or direction-changing character${count === 1 ? "" : "s"},
    shown as ⟨U+…⟩: what runs may differ from how it reads.
  </p>`
}

const REPLIES = [
  ["once", "Allow once"],
  ["session", "Allow for this session"],
  ["deny", "Deny"],
]

/** "Allow for this session" allows the pattern the request carries (`git *`, `src/**`). */
function replyLabel(reply, label, request) {
  if (reply !== "session" || !request.pattern) return label
  return html`Allow <code class="permission-pattern">${request.pattern}</code> for this session`
}

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
  const card = useRef(null)
  useEffect(() => {
    // The person continues here: unless they are typing a prompt, the answer has the focus.
    const typing =
      document.activeElement?.matches?.("textarea, input") && document.activeElement.value
    if (!typing) card.current?.querySelector("button[data-reply='once']")?.focus()
  }, [])
  return html`<section
    ref=${card}
    class="permission-card"
    data-call=${request.call_id}
    data-tool=${request.tool}
    aria-label=${`Permission for ${request.tool}`}
  >
    <header class="permission-head">
      Allow <span class="permission-tool">${request.tool}</span>?
    </header>
    <${HiddenWarning} request=${request} />
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
            ${replyLabel(reply, label, request)}
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
