// The diff view: a turn's (or the whole session's) changed files, each with its unified diff,
// from GET /api/session/{id}/changes. Patches are the agent's file contents, so untrusted: they
// are rendered as text nodes only (one element per line, coloured by its kind), never as HTML.

import { signal } from "@preact/signals"
import { useEffect, useRef, useState } from "preact/hooks"
import { api } from "../api.js"
import { checkpointError } from "./error-words.js"
import { html } from "./html.js"
import { UnifiedDiff } from "./unified-diff.js"

const enc = encodeURIComponent
const STATUS = { added: "A", modified: "M", deleted: "D" }

/** The diff shown: {sessionId, messageId (null: the whole session), title, failed?} or null. */
const shown = signal(null)

/** Shows the changes of the turn answering `messageId`; `failed(error)` hears a refusal. */
export function openDiff(sessionId, messageId, title, failed = () => {}) {
  shown.value = { sessionId, messageId, title, failed }
}

export { lineKind } from "./unified-diff.js"

function Patch({ file }) {
  if (file.patch === null || file.patch === undefined)
    return html`<p class="hint diff-binary">
      ${file.too_large ? "The diff is too large to show." : "Binary file: no text diff."}
    </p>`
  return html`<${UnifiedDiff} patch=${file.patch} />`
}

function FileDiff({ file }) {
  return html`<details class="diff-file" open data-path=${file.path} data-status=${file.status}>
    <summary>
      <span class="diff-status" data-status=${file.status}>${STATUS[file.status] ?? "?"}</span>
      <bdi class="diff-path">${file.path}</bdi>
      <span class="diff-count">+${file.additions} −${file.deletions}</span>
    </summary>
    <${Patch} file=${file} />
  </details>`
}

function DiffBody({ target }) {
  const [files, setFiles] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    const query = target.messageId ? `?message_id=${enc(target.messageId)}` : ""
    api("GET", `/api/session/${enc(target.sessionId)}/changes${query}`).then(
      (data) => setFiles(data?.files ?? []),
      (e) => {
        target.failed?.(e)
        setError(checkpointError(e, "show its changes"))
      },
    )
  }, [target])
  if (error) return html`<p class="form-error" role="alert">${error}</p>`
  if (!files) return html`<p class="placeholder">Loading…</p>`
  if (!files.length) return html`<p class="hint">No file changes.</p>`
  return html`<div class="diff-files">
    ${files.map((f) => html`<${FileDiff} key=${f.path} file=${f} />`)}
  </div>`
}

/** Mounted once in the chat view. */
export function DiffDialog() {
  const ref = useRef(null)
  const target = shown.value
  useEffect(() => {
    const dialog = ref.current
    if (target && !dialog.open) dialog.showModal()
    if (!target && dialog.open) dialog.close()
  }, [target])
  const close = () => (shown.value = null)
  return html`<dialog
    ref=${ref}
    class="chat-dialog diff-dialog"
    aria-label="Changes"
    onCancel=${(e) => (e.preventDefault(), close())}
  >
    ${
      target &&
      html`<header class="diff-head">
          <h2>${target.title}</h2>
          <button type="button" class="icon-button" aria-label="Close" onClick=${close}>×</button>
        </header>
        <${DiffBody} key=${`${target.sessionId}/${target.messageId}`} target=${target} />`
    }
  </dialog>`
}
