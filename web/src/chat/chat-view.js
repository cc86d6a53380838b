// The open session: header (title, folder, status), the retry banner, the message list, the
// no-provider notice and the prompt box (composer.js).

import { useLayoutEffect, useRef, useState } from "preact/hooks"
import { html } from "./html.js"
import { SessionStatusIcon } from "./icons.js"
import { MessageItem } from "./messages.js"
import { Composer } from "./composer.js"
import { CompactionFailed, RetryBanner } from "./retry-banner.js"
import { ProviderNotice, SettingsButton } from "./settings-dialog.js"
import { JobsPanel } from "./jobs-panel.js"
import { ContextMeter } from "./context-meter.js"
import { InstructionFiles, ModelPicker } from "./session-settings.js"
import { PermissionModeSwitch, PermissionPrompts } from "./permission-card.js"
import { RevertDialog, SessionChanges } from "./changes.js"
import { DiffDialog } from "./diff-view.js"
import { atBottom, LatestButton, settleAtBottom, unreadAfter } from "./follow.js"
import { SessionMark } from "./waiting.js"
import { ParentLink } from "./parent-link.js"
import {
  elementScroll,
  measureElement,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
} from "@tanstack/virtual-core"

/** Start loading the previous page while this many pixels of history are still above. */
const OLDER_MARGIN = 800
const STICK_MARGIN = 40

/** The open list's virtualiser, for the test hooks' view of what the list holds. */
let openList = null

/** Message ids in the open list's order (rendered or not), as the virtualiser holds them. */
export function listedIds() {
  return openList ? openList.getMeasurements().map((item) => item.key) : []
}

async function copyCode(button) {
  const code = button.closest("pre")?.querySelector("code")
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
 * A first guess at a message's height before it is measured (the virtualiser corrects it).
 * The virtualiser asks for every unmeasured message each time a measurement lands (10,000
 * asks per frame while scrolling a long history): the guess is remembered per message value,
 * so the text is read once, not once per frame.
 */
const estimates = new WeakMap()
function estimate(message) {
  if (!message) return 80
  let size = estimates.get(message)
  if (size === undefined) {
    size = guess(message)
    estimates.set(message, size)
  }
  return size
}

function guess(message) {
  if (message.type === "user" || message.type === "synthetic") return 48
  let lines = 0
  for (const part of message.content ?? []) {
    const text = part.text ?? ""
    for (let at = text.indexOf("\n"); at !== -1 && lines < 40; at = text.indexOf("\n", at + 1))
      lines++
  }
  return 60 + 20 * Math.min(40, lines + 1)
}

/**
 * The message list, virtualised (@tanstack/virtual-core): only the messages near the viewport
 * are in the DOM, each measured as it renders (ResizeObserver), so 10,000 messages cost what
 * 30 do (content-visibility per page still left 80 ms style/layout tasks). The scroll rules
 * are the virtualiser's own (`anchorTo: "end"`, the chat's shape): the first page opens at the
 * newest message; an older page prepended above keeps the message on screen where it was
 * (sizes are cached by message id, not index); while the reader is at the bottom, an appended
 * message or a growing (streaming) one keeps the view pinned there.
 */
function MessageList({ store, thread, busy }) {
  const scroller = useRef(null)
  const [, setTick] = useState(0)
  const ids = thread.ids.value
  const older = thread.older.value
  const idsRef = useRef(ids)
  idsRef.current = ids

  const virtual = useRef(null)
  virtual.current ??= new Virtualizer({
    count: ids.length,
    getScrollElement: () => scroller.current,
    estimateSize: (i) => estimate(thread.messages.get(idsRef.current[i])?.peek()),
    getItemKey: (i) => idsRef.current[i],
    overscan: 3,
    useAnimationFrameWithResizeObserver: true, // one measuring pass per frame, not per callback
    paddingStart: 8,
    paddingEnd: 16,
    anchorTo: "end",
    followOnAppend: true,
    scrollEndThreshold: STICK_MARGIN,
    scrollToFn: elementScroll,
    observeElementRect,
    observeElementOffset,
    measureElement,
    onChange: () => setTick((n) => n + 1),
  })
  const v = virtual.current
  // An older page going in above: the first message on screen and how far the view is into it,
  // read before the new count applies. The virtualiser's own anchoring does not always hold
  // (it skips while a programmatic scroll is unconfirmed); the layout effect corrects what is left.
  const shown = useRef({ first: null, count: 0 })
  let anchor = null
  if (
    scroller.current &&
    shown.current.count > 0 &&
    ids.length > shown.current.count &&
    ids[0] !== shown.current.first
  ) {
    const offset = scroller.current.scrollTop
    const item = v.getVirtualItems().find((it) => it.end > offset)
    if (item) anchor = { key: item.key, delta: offset - item.start }
  }
  v.setOptions({ ...v.options, count: ids.length })

  const opened = useRef(false)
  useLayoutEffect(() => {
    openList = v
    const unmount = v._didMount()
    return () => {
      if (openList === v) openList = null
      unmount()
    }
  }, [])
  useLayoutEffect(() => {
    v._willUpdate()
    if (!opened.current && ids.length > 0) {
      opened.current = true
      // First page: start at the newest message. A plain scroll, not scrollToIndex: that one
      // keeps reconciling towards its target, and while it does the virtualiser skips keeping
      // the view still when an older page goes in. Measuring corrects it (pinned at the end).
      const el = scroller.current
      el.scrollTop = el.scrollHeight
    }
  })

  useLayoutEffect(() => {
    if (anchor) {
      const start = v.getMeasurements()[ids.indexOf(anchor.key)]?.start
      const el = scroller.current
      if (start !== undefined && Math.abs(el.scrollTop - (start + anchor.delta)) > 1)
        el.scrollTop = start + anchor.delta
    }
    shown.current = { first: ids[0] ?? null, count: ids.length }
  }, [ids])

  const maybeLoadOlder = () => {
    const el = scroller.current
    if (el && el.scrollTop < OLDER_MARGIN) store.loadOlder(thread.sessionId)
  }
  useLayoutEffect(maybeLoadOlder, [ids])

  // Following the person: at the bottom the newest message is seen (and followed as it
  // grows); above it, the "↓ Latest" button counts what arrived since.
  const [place, setPlace] = useState({ bottom: true, top: false })
  const seen = useRef(null)
  const lastId = ids[ids.length - 1] ?? null
  const onScroll = () => {
    maybeLoadOlder()
    const el = scroller.current
    if (!el) return
    const next = { bottom: atBottom(el), top: el.scrollTop <= 1 }
    if (next.bottom) seen.current = idsRef.current[idsRef.current.length - 1] ?? null
    if (next.bottom !== place.bottom || next.top !== place.top) setPlace(next)
  }
  const jump = () => {
    seen.current = idsRef.current[idsRef.current.length - 1] ?? null
    setPlace({ bottom: true, top: false })
    settleAtBottom(scroller.current)
  }
  const newest = useRef(lastId)
  useLayoutEffect(() => {
    const was = newest.current
    newest.current = lastId
    if (!lastId || lastId === was) return
    if (place.bottom || seen.current === null) seen.current = lastId
    // The person's own prompt (sent here or in another window): show the new exchange.
    if (was !== null && thread.messages.get(lastId)?.peek()?.type === "user") jump()
  }, [lastId])
  const onKeyDown = (event) => {
    if (
      event.key === "End" &&
      !event.shiftKey &&
      !event.altKey &&
      event.target === scroller.current
    ) {
      event.preventDefault()
      jump()
    }
  }

  const onClick = (event) => {
    const button = event.target.closest?.(".code-copy")
    if (button) copyCode(button)
  }

  const items = v.getVirtualItems()
  const state = thread.state.value
  return html`<div class="chat-older" aria-live="polite">
      ${older.loading ? "Loading older messages…" : older.done && ids.length > 0 && place.top ? "Beginning of the session" : ""}
    </div>
    <div
      class="chat-scroll"
      ref=${scroller}
      onScroll=${onScroll}
      onKeyDown=${onKeyDown}
      onClick=${onClick}
      tabindex="0"
      aria-label="Messages"
    >
      ${state === "loading" && ids.length === 0 && html`<p class="placeholder">Loading…</p>`}
      ${state === "error" && html`<p class="form-error" role="alert">Could not load messages: ${thread.error.value}</p>`}
      ${state === "ready" && ids.length === 0 && html`<p class="placeholder chat-empty">No messages yet.</p>`}
      <div
        class="chat-messages"
        data-count=${ids.length}
        style=${{ height: `${v.getTotalSize()}px` }}
      >
        <div class="chat-window" style=${{ transform: `translateY(${items[0]?.start ?? 0}px)` }}>
          ${items.map(
            (item) =>
              html`<div
                class="chat-row"
                key=${item.key}
                data-index=${item.index}
                ref=${v.measureElement}
              >
                <${MessageItem}
                  sig=${thread.messages.get(item.key)}
                  thread=${thread}
                  store=${store}
                  busy=${busy}
                />
              </div>`,
          )}
        </div>
      </div>
    </div>
    <div class="chat-latest-bar">
      ${!place.bottom && ids.length > 0 && html`<${LatestButton} unread=${unreadAfter(ids, seen.current)} onClick=${jump} />`}
    </div>`
}

export function ChatView({ store }) {
  const session = store.active.value
  if (!session) return null
  const thread = store.thread(session.id)
  const busy = session.status === "busy"
  return html`<div class="chat" data-session=${session.id}>
    <header class="chat-header">
      <${SessionMark} session=${session} Icon=${SessionStatusIcon} />
      <div class="chat-heading">
        <h2 class="chat-title">${session.title || "Untitled"}</h2>
        <div class="chat-folder" title=${session.directory}><bdi>${session.directory}</bdi></div>
      </div>
      <${InstructionFiles} session=${session} />
      <${SessionChanges} key=${session.id} thread=${thread} />
      <${ModelPicker} session=${session} store=${store} />
      <${ContextMeter} session=${session} store=${store} />
      <${PermissionModeSwitch} session=${session} />
      <${SettingsButton} />
      <button
        type="button"
        class="icon-button"
        aria-label="Close chat"
        title="Close chat"
        onClick=${() => store.select(null)}
      >
        ×
      </button>
    </header>
    <${ParentLink} session=${session} store=${store} />
    <${JobsPanel} session=${session} />
    <${RetryBanner} thread=${thread} store=${store} />
    <${CompactionFailed} thread=${thread} store=${store} />
    <${MessageList} key=${session.id} store=${store} thread=${thread} busy=${busy} />
    <${ProviderNotice} store=${store} thread=${thread} />
    <${PermissionPrompts} session=${session} />
    <${Composer} key=${session.id} store=${store} session=${session} />
    <${RevertDialog} />
    <${DiffDialog} />
  </div>`
}
