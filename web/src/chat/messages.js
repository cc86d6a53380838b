// One message of the chat: user, synthetic (collapsed, with its description), assistant
// (Markdown text, collapsed reasoning, collapsible tool parts, inline editing).

import { useLayoutEffect, useRef, useState } from "preact/hooks"
import { editable } from "./apply.js"
import { html } from "./html.js"
import { ToolStatusIcon } from "./icons.js"
import { decorate, renderMarkdownCached, StreamingMarkdown } from "./markdown.js"
import { retryPrompt, TurnError } from "./error-words.js"
import { useToolMark } from "./waiting.js"
import { editPatch, UnifiedDiff, writePatch } from "./unified-diff.js"
import { shellCommand, ToolBadge, ToolLiveInput, toolStatus } from "./tool-card.js"
import { CopyAnswer, TurnUsage } from "./usage.js"
import { DaySeparator, fullTime, MessageTime } from "./times.js"
import { TaskMessage } from "./parent-link.js"
import { ToolLinks } from "./job-links.js"
import { isJobNotice, NoticeCard } from "./notice-card.js"
import { CompactionDivider } from "./context-meter.js"
import { MessageActions, TurnChanges } from "./changes.js"

/** Assistant Markdown; `streaming` renders block-wise per animation frame, else all at once. */
export function Markdown({ text, streaming = false }) {
  const ref = useRef(null)
  const stream = useRef(null)
  useLayoutEffect(() => {
    const element = ref.current
    if (streaming) {
      stream.current ??= new StreamingMarkdown(element)
      stream.current.update(text)
      return
    }
    if (stream.current) {
      stream.current.finish(text)
      stream.current = null
      return
    }
    element.innerHTML = renderMarkdownCached(text) // markdown-it + sanitize(), remembered
    decorate(element)
  }, [text, streaming])
  return html`<div class="markdown" ref=${ref}></div>`
}

function brief(input) {
  if (typeof input === "string") return input.slice(0, 120)
  if (!input || typeof input !== "object") return ""
  const first = Object.values(input).find((v) => typeof v === "string")
  return (first ?? JSON.stringify(input)).slice(0, 120)
}

/** An edit or write call's change as a patch, from its input (null: not one, or unreadable). */
function changeOf(part) {
  const input = part.state?.input
  if (!input || typeof input !== "object") return null
  if (part.name === "edit" && typeof input.old === "string" && typeof input.new === "string")
    return editPatch(input.old, input.new)
  if (part.name === "write" && typeof input.content === "string") return writePatch(input.content)
  return null
}

function ToolPart({ part, thread }) {
  const [open, setOpen] = useState(false)
  const status = toolStatus(part)
  const mark = useToolMark(part, thread?.sessionId)
  const change = open ? changeOf(part) : null
  const input = part.state?.input
  const command = shellCommand(part)
  // The card's links sit beside its <details>, not in the <summary>: a control inside the
  // summary is one assistive technology cannot reach apart from the toggle.
  return html`<div class="part-tool-row">
    <details
      class="part-tool"
      data-status=${status}
      data-mark=${mark}
      data-call=${part.id}
      onToggle=${(e) => setOpen(e.currentTarget.open)}
    >
      <summary>
        <${ToolStatusIcon} status=${mark} />
        <span class="tool-name">${part.name}</span>
        <span class="tool-brief">${command ?? brief(input)}</span>
        ${mark === "waiting" && html`<span class="tool-waiting">Waiting for you</span>`}
        <${ToolBadge} part=${part} />
      </summary>
      ${
        open &&
        html`<div class="tool-body">
          <${ToolLiveInput} thread=${thread} part=${part} />
          ${
            change
              ? html`<div class="tool-label">${part.name === "write" ? "Written" : "Change"}</div>
                  <${UnifiedDiff} patch=${change} />`
              : html`<div class="tool-label">Input</div>
                  <pre class="plain">
${typeof input === "string" ? input : JSON.stringify(input, null, 2)}</pre>`
          }
          ${
            part.state?.content !== undefined &&
            html`<div class="tool-label">Output</div>
              <pre class="plain">${part.state.content}</pre>`
          }
          ${
            part.state?.error &&
            html`<div class="tool-label">Error</div>
              <pre class="plain tool-error">${part.state.error.message}</pre>`
          }
        </div>`
      }
    </details>
    ${mark !== "waiting" && html`<${ToolLinks} part=${part} />`}
  </div>`
}

function Part({ part, thread }) {
  if (part.type === "text") return html`<${Markdown} text=${part.text} />`
  if (part.type === "reasoning")
    return html`<details class="part-reasoning">
      <summary>Reasoning</summary>
      <div class="plain">${part.text}</div>
    </details>`
  if (part.type === "tool") return html`<${ToolPart} part=${part} thread=${thread} />`
  return null
}

function Editor({ message, onSave, onCancel }) {
  const [texts, setTexts] = useState(() =>
    message.content.map((p) => (p.type === "text" ? p.text : null)),
  )
  const [error, setError] = useState(null)
  const [saving, setSaving] = useState(false)
  const save = async (event) => {
    event.preventDefault()
    setSaving(true)
    try {
      await onSave(
        message.content.map((p, i) => (p.type === "text" ? { ...p, text: texts[i] } : p)),
      )
    } catch (e) {
      setError(e.message)
      setSaving(false)
    }
  }
  return html`<form class="message-editor" onSubmit=${save}>
    ${message.content.map((part, i) =>
      part.type === "text"
        ? html`<textarea
            key=${i}
            aria-label="Message text"
            rows=${Math.min(20, part.text.split("\n").length + 1)}
            value=${texts[i]}
            onInput=${(e) => setTexts(texts.map((t, j) => (j === i ? e.currentTarget.value : t)))}
          ></textarea>`
        : html`<${Part} key=${i} part=${part} />`,
    )}
    ${error && html`<p class="form-error" role="alert">${error}</p>`}
    <div class="dialog-buttons">
      <button type="button" onClick=${onCancel}>Cancel</button>
      <button type="submit" class="primary" disabled=${saving}>Save</button>
    </div>
  </form>`
}

/** The message before `message` is an assistant step of the same model (the same answer). */
function continuesAnswer(thread, message) {
  const ids = thread.ids.value
  const at = ids.indexOf(message.id)
  const before = at > 0 ? thread.message(ids[at - 1]) : null
  return before?.type === "assistant" && before.model?.id === message.model?.id
}

function AssistantMessage({ message, thread, store, busy }) {
  const [editing, setEditing] = useState(false)
  const live = !message.time?.completed
  // Subscribes while live, so the first delta re-renders this message.
  // A live block's saved text (a partial part) and its deltas since read as one block.
  const content = message.content
  const tail = live ? content[content.length - 1] : null
  const open = tail?.partial && (tail.type === "text" || tail.type === "reasoning") ? tail : null
  const shown = open ? content.slice(0, -1) : content
  const streamed =
    (open?.type === "text" ? open.text : "") + (live ? thread.streamOf(message.id).value : "")
  const reasoning =
    (open?.type === "reasoning" ? open.text : "") +
    (live ? thread.reasoningOf(message.id).value : "")
  const cut = !live && message.finish === "aborted"
  // A failed, cut or interrupted answer that is the latest: Retry sends its prompt again,
  // with the settings as they are now.
  const again =
    !live && !busy && (message.error || cut || message.finish === "interrupted")
      ? retryPrompt(thread, message.id)
      : null
  const retry = again ? () => store.sendPrompt(thread.sessionId, again, "queue") : null
  const canEdit = editable(message) && !busy && message.content.some((p) => p.type === "text")
  // One header per answer: a step that follows another step of the same model says nothing.
  const continued = continuesAnswer(thread, message)
  return html`<article
    class="message msg-assistant"
    data-id=${message.id}
    data-reverted=${message.reverted ? "true" : undefined}
    aria-busy=${live ? "true" : undefined}
  >
    <header class="message-meta" data-continued=${continued ? "true" : undefined}>
      ${!continued && html`<span class="message-model">${message.model?.id || "Assistant"}</span>`}
      ${!continued && html`<${MessageTime} ms=${message.time?.created} label="Answer started" />`}
      <${EditedMark} message=${message} />
      <span class="header-spacer"></span>
      ${canEdit && !editing && html`<button type="button" class="link-button message-edit" onClick=${() => setEditing(true)}>Edit</button>`}
    </header>
    ${
      editing
        ? html`<${Editor}
            message=${message}
            onCancel=${() => setEditing(false)}
            onSave=${async (content) => {
              await store.editMessage(thread.sessionId, message.id, content)
              setEditing(false)
            }}
          />`
        : shown.map(
            (part, i) => html`<${Part} key=${part.id ?? i} part=${part} thread=${thread} />`,
          )
    }
    ${
      live &&
      reasoning &&
      html`<details class="part-reasoning part-live">
        <summary>Reasoning…</summary>
        <div class="plain">${reasoning}</div>
      </details>`
    }
    ${live && streamed && html`<${Markdown} text=${streamed} streaming=${true} />`}
    ${
      message.error &&
      html`<${TurnError}
        error=${message.error}
        provider=${store.provider.value}
        onRetry=${retry}
      />`
    }
    ${message.finish === "interrupted" && html`<p class="message-interrupted">Interrupted</p>`}
    ${cut && html`<p class="message-cut" role="note">Cut off: Desk stopped before this answer was finished.</p>`}
    ${retry && !message.error && html`<div class="message-error-actions"><button type="button" class="message-retry" onClick=${retry}>Retry</button></div>`}
    <${TurnUsage} thread=${thread} message=${message} busy=${busy} />
    <${TurnChanges} thread=${thread} messageId=${message.id} />
  </article>`
}

/** "edited", once a person changed the message; its tooltip says when, and when it was written. */
function EditedMark({ message }) {
  const edited = message.time?.edited
  if (!edited) return null
  const created = message.time?.created
  const title = `Edited ${fullTime(edited)}${created ? `; first written ${fullTime(created)}` : ""}`
  return html`<span class="message-edited" title=${title}
    >edited<span class="visually-hidden">: ${title}</span></span
  >`
}

/**
 * Reads its message's own signal, so a live change re-renders this message alone; with equal
 * props a list re-render skips it (@preact/signals' shouldComponentUpdate compares them).
 */
export function MessageItem({ sig, thread, store, busy }) {
  const message = sig.value
  return html`<${DaySeparator} thread=${thread} message=${message} />
    <${MessageBody} message=${message} thread=${thread} store=${store} busy=${busy} />`
}

/** Cancel for a prompt not yet delivered (queued or steered): it is removed before the model
 * gets it (409: too late). */
function CancelQueued({ thread, store, message }) {
  const [state, setState] = useState({ pending: false, error: "" })
  const cancel = async () => {
    setState({ pending: true, error: "" })
    try {
      await store.cancelPrompt(thread.sessionId, message.id)
    } catch (e) {
      setState({ pending: false, error: e.message })
    }
  }
  return html`<button
      type="button"
      class="link-button message-cancel"
      disabled=${state.pending}
      aria-label=${message.mode === "steer" ? "Cancel this steering prompt" : "Cancel this queued prompt"}
      onClick=${cancel}
    >
      Cancel
    </button>
    ${state.error && html`<span class="form-error" role="alert">${state.error}</span>`}`
}

/** What a prompt not yet delivered waits for: a steer is read at the running turn's next
 * step, a queued prompt (the default) when the turn ends. */
function pendingWords(message) {
  return message.mode === "steer"
    ? "Steering: read at the agent's next step"
    : "Queued: sent when the current turn ends"
}

function UserMessage({ message, thread, store, busy }) {
  const queued = thread.queued.value.has(message.id)
  if (message.from_session)
    return html`<${TaskMessage} message=${message} store=${store}>
        <${MessageTime} ms=${message.time?.created} label="Given" />
      <//>
      <div class="message-under">
        <${MessageActions} thread=${thread} store=${store} message=${message} busy=${busy} />
      </div>`
  return html`<article
      class="message msg-user"
      data-id=${message.id}
      data-queued=${queued ? "true" : undefined}
      data-mode=${message.mode}
      data-reverted=${message.reverted ? "true" : undefined}
    >
      <div class="plain">${message.text}</div>
      ${
        queued &&
        html`<div class="message-queued">
          <span>${pendingWords(message)}</span>
          <${CancelQueued} thread=${thread} store=${store} message=${message} />
        </div>`
      }
    </article>
    <div class="message-under">
      ${!queued && html`<${MessageActions} thread=${thread} store=${store} message=${message} busy=${busy} />`}
      <span class="message-stamp" data-for=${message.id}>
        <${MessageTime} ms=${message.time?.created} />
      </span>
    </div>`
}

function MessageBody({ message, thread, store, busy }) {
  if (message.type === "user")
    return html`<${UserMessage} message=${message} thread=${thread} store=${store} busy=${busy} />`
  if (message.type === "synthetic" && isJobNotice(message))
    return html`<${NoticeCard} message=${message} />`
  if (message.type === "synthetic" && message.description === "compaction")
    return html`<${CompactionDivider} message=${message} />`
  if (message.type === "synthetic")
    return html`<article
      class="message msg-synthetic"
      data-id=${message.id}
      data-reverted=${message.reverted ? "true" : undefined}
    >
      <details>
        <summary>${message.description || "Synthetic message"}</summary>
        <div class="plain">${message.text}</div>
      </details>
    </article>`
  if (message.type === "assistant")
    return html`<${AssistantMessage}
        message=${message}
        thread=${thread}
        store=${store}
        busy=${busy}
      />
      ${
        message.time?.completed &&
        html`<div class="message-under">
          <${MessageActions} thread=${thread} store=${store} message=${message} busy=${busy} />
          <${CopyAnswer} thread=${thread} message=${message} busy=${busy} />
        </div>`
      }`
  return null
}
