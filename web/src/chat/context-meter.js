// Context pressure: the header's meter ("42 % of 128k", the token counts on hover; "unknown
// window" when nobody said), its "Compact now" action, and the collapsed divider a compaction
// leaves in the conversation (it changes what the model sees, never what the person sees).

import { useState } from "preact/hooks"
import { html } from "./html.js"
import "./context-meter.css"

const short = (n) =>
  n >= 1_000_000
    ? `${+(n / 1_000_000).toFixed(1)}M`
    : n >= 1000
      ? `${Math.round(n / 1000)}k`
      : String(n)

const exact = (n) => Number(n).toLocaleString("en-US")

/** The meter's text and hover text for a session's `context: {used, window?}`. */
export function meterText(context) {
  const used = Number.isFinite(context?.used) ? context.used : 0
  const window = Number.isFinite(context?.window) && context.window > 0 ? context.window : null
  if (!window)
    return {
      text: "unknown window",
      title: `${exact(used)} tokens in the last request; the model's context window is not known yet`,
      percent: null,
    }
  const percent = Math.round((used / window) * 100)
  return {
    text: `${percent} % of ${short(window)}`,
    title: `${exact(used)} of ${exact(window)} tokens in the last request`,
    percent,
  }
}

export function ContextMeter({ session, store }) {
  const [state, setState] = useState({ pending: false, error: "" })
  const thread = store.thread(session.id)
  const { text, title, percent } = meterText(session.context)
  const level =
    percent === null ? "unknown" : percent >= 85 ? "high" : percent >= 60 ? "mid" : "low"
  const compact = async () => {
    setState({ pending: true, error: "" })
    thread.compaction.value = null
    try {
      await store.compactNow(session.id)
      setState({ pending: false, error: "" })
    } catch (error) {
      // A compaction that failed is the thread's, shown over the messages in every window
      // (retry-banner.js); a refusal (a turn runs, no provider) is said here.
      const own = error?.type === "context.compaction_failed" ? "" : error?.message
      setState({ pending: false, error: own ?? String(error) })
    }
  }
  return html`<div class="context-meter" data-level=${level}>
    <span class="context-meter-text" title=${title} aria-label=${`Context: ${text}. ${title}`}
      >${text}</span
    >
    <button
      type="button"
      class="context-compact"
      disabled=${state.pending || session.status === "busy"}
      title="Summarise the older messages for the model now (you keep seeing them all)"
      onClick=${compact}
    >
      ${state.pending ? "Compacting…" : "Compact now"}
    </button>
    ${state.error && html`<span class="form-error context-error" role="alert">${state.error}</span>`}
  </div>`
}

/** A compaction's place in the conversation: collapsed, it opens on the summary. */
export function CompactionDivider({ message }) {
  const meta = message.metadata?.compaction ?? {}
  const pruned = Array.isArray(meta.pruned) ? meta.pruned.length : 0
  const tokens = meta.tokens
  const size = tokens ? ` (${short(tokens.before)} → ${short(tokens.after)} tokens)` : ""
  return html`<article class="message msg-compaction" data-id=${message.id}>
    <details>
      <summary>
        ${message.text ? "Earlier messages summarised" : "Older tool outputs trimmed"}${size}
      </summary>
      ${
        message.text
          ? html`<div class="plain compaction-summary">${message.text}</div>`
          : html`<div class="plain">
              ${pruned} old tool outputs are replaced, for the model only, by a note saying how to
              get them again.
            </div>`
      }
    </details>
  </article>`
}
