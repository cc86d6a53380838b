// The open session: header (title, folder, status), the message list, and the slots the agent
// issue fills (retry banner, prompt box).

import { useLayoutEffect, useRef, useState } from "preact/hooks"
import { html } from "./html.js"
import { SessionStatusIcon } from "./icons.js"
import { MessageItem } from "./messages.js"

/** Start loading the previous page while this many pixels of history are still above. */
const OLDER_MARGIN = 800
const STICK_MARGIN = 40
/** Messages a chunk renders per animation frame: a page at once blocked the page for 50+ ms. */
const SLICE = 10

// ---- slots for the agent issue ----------------------------------------------------------------

/** Shown while the agent waits to retry a failed request (session.retry.scheduled). */
function RetryBanner({ thread }) {
  const retry = thread.retry.value
  if (!retry) return null
  return html`<div class="chat-retry" role="status">Retrying (attempt ${retry.attempt}): ${retry.error?.message ?? ""}</div>`
}

/** The prompt box arrives with the agent (POST /api/session/{id}/prompt); its place is here. */
function Composer() {
  return null
}

// ------------------------------------------------------------------------------------------------

async function copyCode(button) {
  const code = button.parentElement?.querySelector("code")
  if (!code) return
  try {
    await navigator.clipboard.writeText(code.textContent)
    button.textContent = "Copied"
  } catch {
    button.textContent = "Copy failed"
  }
  setTimeout(() => (button.textContent = "Copy"), 1500)
}

/**
 * One page's messages: a chunk re-renders alone when a live message joins it. A new chunk
 * renders SLICE messages per frame, newest first (nearest the reader); Chromium's scroll
 * anchoring keeps the view still as older ones appear above. Each message is laid out in
 * full once ("measured" two frames later, after its size was recorded), then
 * content-visibility skips it off screen at its remembered size.
 */
function Chunk({ chunk, thread, store, busy }) {
  const ids = chunk.ids.value
  const [pending, setPending] = useState(() => Math.max(0, ids.length - SLICE)) // oldest ids not rendered yet
  const ref = useRef(null)
  useLayoutEffect(() => {
    const root = ref.current
    const fresh = root.querySelectorAll(".message:not(.measured)")
    const complete = pending === 0
    const frames = [0, 0]
    frames[0] = requestAnimationFrame(() => {
      frames[1] = requestAnimationFrame(() => {
        fresh.forEach((m) => m.classList.add("measured"))
        if (complete) root.classList.add("measured")
      })
      if (!complete) setPending((p) => Math.max(0, p - SLICE))
    })
    return () => frames.forEach(cancelAnimationFrame)
  }, [pending, ids])
  return html`<div class="chat-chunk" ref=${ref}>
    ${ids.slice(pending).map((id) => html`<${MessageItem} key=${id} sig=${thread.messages.get(id)} thread=${thread} store=${store} busy=${busy} />`)}
  </div>`
}

function MessageList({ store, thread, busy }) {
  const scroller = useRef(null)
  const previous = useRef({ first: null, last: null, count: 0 })
  const ids = thread.ids.value
  const older = thread.older.value
  // Read during render, before Preact commits: the layout effect compares against it. The
  // oldest loaded message is the anchor an older page is prepended above.
  const firstBefore = scroller.current?.querySelector(".chat-messages .message")
  const anchorTop = firstBefore?.getBoundingClientRect().top ?? 0
  const wasAtBottom = scroller.current
    ? scroller.current.scrollHeight - scroller.current.scrollTop - scroller.current.clientHeight < STICK_MARGIN
    : true

  const maybeLoadOlder = () => {
    const el = scroller.current
    if (el && el.scrollTop < OLDER_MARGIN) store.loadOlder(thread.sessionId)
  }

  useLayoutEffect(() => {
    const el = scroller.current
    const before = previous.current
    const first = ids[0] ?? null
    const last = ids[ids.length - 1] ?? null
    if (before.count === 0 && ids.length > 0) {
      el.scrollTop = el.scrollHeight // first page: start at the newest message
    } else if (first !== before.first && before.count > 0 && firstBefore?.isConnected) {
      // An older page went in above: keep the anchor where it was on screen. (Chromium's
      // scroll anchoring may have done it already; this corrects only what is left.)
      el.scrollTop += firstBefore.getBoundingClientRect().top - anchorTop
    } else if (last !== before.last && wasAtBottom) {
      el.scrollTop = el.scrollHeight // a new message while reading the newest: follow it
    }
    previous.current = { first, last, count: ids.length }
    maybeLoadOlder()
  }, [ids])

  const onClick = (event) => {
    const button = event.target.closest?.(".code-copy")
    if (button) copyCode(button)
  }

  return html`<div class="chat-scroll" ref=${scroller} onScroll=${maybeLoadOlder} onClick=${onClick} tabindex="0" aria-label="Messages">
    <div class="chat-older" aria-live="polite">
      ${older.loading ? "Loading older messages…" : older.done && ids.length > 0 ? "Beginning of the session" : ""}
    </div>
    ${thread.state.value === "loading" && ids.length === 0 && html`<p class="placeholder">Loading…</p>`}
    ${thread.state.value === "error" && html`<p class="form-error" role="alert">Could not load messages: ${thread.error.value}</p>`}
    ${thread.state.value === "ready" && ids.length === 0 && html`<p class="placeholder chat-empty">No messages yet.</p>`}
    <div class="chat-messages" role="feed" aria-busy=${thread.state.value === "loading" ? "true" : "false"}>
      ${thread.chunks.value.map((chunk) => html`<${Chunk} key=${chunk.key} chunk=${chunk} thread=${thread} store=${store} busy=${busy} />`)}
    </div>
  </div>`
}

export function ChatView({ store }) {
  const session = store.active.value
  if (!session) return null
  const thread = store.thread(session.id)
  const busy = session.status === "busy"
  return html`<div class="chat" data-session=${session.id}>
    <header class="chat-header">
      <${SessionStatusIcon} status=${session.status} />
      <div class="chat-heading">
        <h2 class="chat-title">${session.title || "Untitled"}</h2>
        <div class="chat-folder" title=${session.directory}><bdi>${session.directory}</bdi></div>
      </div>
      <button type="button" class="icon-button" aria-label="Close chat" title="Close chat" onClick=${() => store.select(null)}>×</button>
    </header>
    <${RetryBanner} thread=${thread} />
    <${MessageList} key=${session.id} store=${store} thread=${thread} busy=${busy} />
    <${Composer} store=${store} session=${session} />
  </div>`
}
