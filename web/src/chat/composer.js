// The prompt box under the messages. Enter sends, Shift+Enter is a new line, and a key that
// ends an IME composition never sends. The draft is per session in localStorage (drafts.js),
// cleared only when the service accepted the prompt. While the agent works a prompt is either
// queued behind the running turn (Enter, mode queue) or steered into it, read at its next step
// (Ctrl/Cmd+Enter, mode steer), and the placeholder says which key does which; the Stop
// button, or Escape in an empty box, interrupts the turn.

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks"
import { clearDraft, loadDraft, saveDraft } from "./drafts.js"
import { html } from "./html.js"
import { useWaitingCalls } from "./waiting.js"

/** The box grows with its text up to this many pixels, then scrolls. */
export const COMPOSER_MAX_HEIGHT = 240

/** Enter without Shift (or other modifiers), outside an IME composition. */
export function isSendKey(event) {
  if (event.key !== "Enter" || event.shiftKey || event.altKey || event.ctrlKey || event.metaKey)
    return false
  // keyCode 229: the key went to the IME (Safari ends compositions with a plain Enter keydown).
  return !event.isComposing && event.keyCode !== 229
}

/** Ctrl+Enter (Cmd+Enter on a Mac), outside an IME composition: steer the running turn. */
export function isSteerKey(event) {
  if (event.key !== "Enter" || event.shiftKey || event.altKey) return false
  if (!(event.ctrlKey || event.metaKey)) return false
  return !event.isComposing && event.keyCode !== 229
}

/** The box's height for its text: its lines up to COMPOSER_MAX_HEIGHT, then it scrolls. */
function fitHeight(el) {
  el.style.height = "auto"
  el.style.height = `${Math.min(COMPOSER_MAX_HEIGHT, el.scrollHeight + 2)}px`
  el.style.overflowY = el.scrollHeight + 2 > COMPOSER_MAX_HEIGHT ? "auto" : "hidden"
}

export const BUSY_PLACEHOLDER = "Enter queues for after this turn · Ctrl+Enter steers it now"

export function Composer({ store, session }) {
  const sessionId = session.id
  const busy = session.status === "busy"
  const waiting = useWaitingCalls(sessionId).length > 0
  const [text, setText] = useState(() => loadDraft(sessionId))
  const [sending, setSending] = useState(false)
  const [error, setError] = useState(null)
  const [stopping, setStopping] = useState(false)
  const box = useRef(null)
  const composing = useRef(false)

  // Another window (or a restored page) may have written this session's draft meanwhile.
  useEffect(() => {
    const onStorage = (event) => {
      if (event.key === `desk.draft.${sessionId}` && !sending) setText(event.newValue ?? "")
    }
    addEventListener("storage", onStorage)
    return () => removeEventListener("storage", onStorage)
  }, [sessionId, sending])

  useLayoutEffect(() => fitHeight(box.current), [text])
  // A narrower box wraps the text onto more lines, a wider one onto fewer: fit again when the
  // width changes (only then: the fit itself changes the height).
  useEffect(() => {
    const el = box.current
    let width = el.clientWidth
    const observer = new ResizeObserver(() => {
      if (el.clientWidth === width) return
      width = el.clientWidth
      fitHeight(el)
    })
    observer.observe(el)
    return () => observer.disconnect()
  }, [])

  // A send refused while the service was unreachable is stale once it is back.
  const online = store.online?.value
  useEffect(() => setError((e) => (e?.startsWith("Not sent") ? null : e)), [online])

  const edit = (value) => {
    setText(value)
    saveDraft(sessionId, value)
    if (error) setError(null)
  }

  const send = async (mode = "queue") => {
    const sent = text
    if (!sent.trim() || sending) return
    setSending(true)
    setError(null)
    try {
      await store.sendPrompt(sessionId, sent, mode)
      // Accepted (202): only now is the draft gone; text typed during the send stays.
      setText((current) => {
        const rest = current === sent ? "" : current
        if (rest) saveDraft(sessionId, rest)
        else clearDraft(sessionId)
        return rest
      })
    } catch (e) {
      setError(`Not sent: ${e.message}`)
    } finally {
      setSending(false)
      box.current?.focus()
    }
  }

  const stop = async () => {
    setStopping(true)
    setError(null)
    try {
      await store.interrupt(sessionId)
    } catch (e) {
      setError(`Could not interrupt: ${e.message}`)
    } finally {
      setStopping(false)
    }
  }

  const onKeyDown = (event) => {
    if (isSendKey(event) && !composing.current) {
      event.preventDefault()
      send("queue")
    } else if (isSteerKey(event) && !composing.current) {
      event.preventDefault()
      send(busy ? "steer" : "queue")
    } else if (event.key === "Escape" && busy && !text) {
      event.preventDefault()
      stop()
    }
  }

  return html`<form
    class="composer"
    onSubmit=${(e) => (e.preventDefault(), send("queue"))}
    aria-label="Prompt"
  >
    ${waiting && html`<p class="composer-hint composer-waiting" role="status">Waiting for you: the agent asks permission above. Allow or deny it to go on.</p>`}
    ${busy && !waiting && html`<p class="composer-hint" role="status">The agent is working. A message sent now is queued until this turn ends, or steered into it with Ctrl+Enter.</p>`}
    <div class="composer-row">
      <textarea
        ref=${box}
        class="composer-input"
        name="prompt"
        rows="1"
        value=${text}
        readonly=${sending}
        aria-label="Message the agent"
        aria-invalid=${error ? "true" : undefined}
        aria-describedby=${error ? "composer-error" : undefined}
        placeholder=${busy ? BUSY_PLACEHOLDER : "Ask the agent… (Enter sends, Shift+Enter for a new line)"}
        onInput=${(e) => edit(e.currentTarget.value)}
        oncompositionstart=${() => (composing.current = true)}
        oncompositionend=${() => (composing.current = false)}
        onKeyDown=${onKeyDown}
      ></textarea>
      ${
        busy &&
        html`<button
          type="button"
          class="composer-stop danger"
          onClick=${stop}
          disabled=${stopping}
          title="Interrupt the agent (Escape in an empty box)"
        >
          Stop
        </button>`
      }
      ${
        busy &&
        html`<button
          type="button"
          class="composer-steer"
          onClick=${() => send("steer")}
          disabled=${sending || !text.trim()}
          title="Steer the running turn: the agent reads it at its next step (Ctrl+Enter)"
        >
          Steer
        </button>`
      }
      <button
        type="submit"
        class="primary composer-send"
        disabled=${sending || !text.trim()}
        title=${busy ? "Queue for after this turn (Enter)" : "Send (Enter)"}
      >
        ${busy ? "Queue" : "Send"}
      </button>
    </div>
    ${error && html`<p class="form-error composer-error" id="composer-error" role="alert">${error}</p>`}
  </form>`
}
