// A turn is what follows one user message up to the next: its assistant messages (one per
// step) form the answer. This module owns what is shown under a turn's last assistant message:
// the token usage (the sum of its steps' `step.ended` tokens, worded as what was sent, since
// every step sends the conversation again; the header's context meter shows the context size)
// and "Copy answer" (the Markdown text of every step of the turn).

import { useEffect, useRef, useState } from "preact/hooks"
import { html } from "./html.js"

const KEYS = ["input", "output", "reasoning", "cache_read"]

/**
 * `ids` in list order, `message(id)` the message: a Map from the id of each turn's last
 * assistant message to `{ids, tokens}` (the turn's assistant message ids, and its summed
 * tokens with `steps` counting the steps that reported any, or null when none did).
 */
export function turnsOf(ids, message) {
  const turns = new Map()
  let steps = []
  let sum = null
  const close = () => {
    if (steps.length) turns.set(steps[steps.length - 1], { ids: steps, tokens: sum })
    steps = []
    sum = null
  }
  for (const id of ids) {
    const m = message(id)
    if (!m) continue
    if (m.type === "user") close()
    if (m.type !== "assistant") continue
    steps.push(id)
    if (m.tokens && typeof m.tokens === "object") {
      sum ??= { ...Object.fromEntries(KEYS.map((k) => [k, 0])), steps: 0 }
      for (const k of KEYS) sum[k] += Number.isFinite(m.tokens[k]) ? m.tokens[k] : 0
      sum.steps += 1
    }
  }
  close()
  return turns
}

/** Each turn's summed tokens by its last assistant message (turns without tokens left out). */
export function turnUsage(ids, message) {
  const usage = new Map()
  for (const [last, turn] of turnsOf(ids, message)) if (turn.tokens) usage.set(last, turn.tokens)
  return usage
}

const compact = (n) =>
  n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n)

const exact = (n) => Number(n).toLocaleString("en-US")

/** "2 steps · 22 tokens sent · 14 out" (reasoning and cache reads only when there are any). */
export function usageText(tokens) {
  const steps = tokens.steps ?? 1
  const parts = [
    `${steps} ${steps === 1 ? "step" : "steps"}`,
    `${compact(tokens.input)} tokens sent`,
    `${compact(tokens.output)} out`,
  ]
  if (tokens.reasoning) parts.push(`${compact(tokens.reasoning)} reasoning`)
  if (tokens.cache_read) parts.push(`${compact(tokens.cache_read)} cached`)
  return parts.join(" · ")
}

/** The hover text: what the figures count, exactly, and where the context size is shown. */
export function usageTitle(tokens) {
  const steps = tokens.steps ?? 1
  const requests = steps === 1 ? "this turn's one request" : `this turn's ${steps} requests`
  const lines = [
    `${exact(tokens.input)} tokens sent to the model over ${requests} (each request sends the conversation so far, so this adds up; the meter in the header shows how full the context is)`,
    `${exact(tokens.output)} tokens written by the model`,
  ]
  if (tokens.reasoning) lines.push(`${exact(tokens.reasoning)} of them reasoning`)
  if (tokens.cache_read) lines.push(`${exact(tokens.cache_read)} sent tokens read from cache`)
  return lines.join("\n")
}

/** The Markdown of an answer: the text parts of the turn's steps, in order. */
export function answerText(thread, ids) {
  const texts = []
  for (const id of ids) {
    for (const part of thread.message(id)?.content ?? [])
      if (part.type === "text" && part.text.trim()) texts.push(part.text.trim())
  }
  return texts.join("\n\n")
}

function CopyButton({ thread, ids }) {
  const [state, setState] = useState("idle")
  const timer = useRef(0)
  useEffect(() => () => clearTimeout(timer.current), [])
  if (!answerText(thread, ids)) return null
  const copy = async () => {
    clearTimeout(timer.current)
    try {
      await navigator.clipboard.writeText(answerText(thread, ids))
      setState("copied")
    } catch {
      setState("failed")
    }
    timer.current = setTimeout(() => setState("idle"), 2000)
  }
  return html`<button
      type="button"
      class="link-button copy-answer"
      data-state=${state}
      title="Copy this answer's text as Markdown"
      onClick=${copy}
    >
      ${state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : "Copy answer"}
    </button>
    <span class="visually-hidden" role="status">${state === "copied" ? "Answer copied" : ""}</span>`
}

/** The turn of `message` when it is the turn's last step and the turn is over, else null. */
function endedTurn(thread, message, busy) {
  const turn = thread.turns.value.get(message.id)
  if (!turn || !message.time?.completed) return null
  // The newest turn of a running session may get another step: nothing until it ends.
  if (busy && newestTurn(thread, message.id)) return null
  return turn
}

/** "Copy answer", beside the actions under a turn's last assistant message. */
export function CopyAnswer({ thread, message, busy }) {
  const turn = endedTurn(thread, message, busy)
  return turn && html`<${CopyButton} thread=${thread} ids=${turn.ids} />`
}

/** The turn's usage, inside its last assistant message. */
export function TurnUsage({ thread, message, busy }) {
  const tokens = endedTurn(thread, message, busy)?.tokens
  if (!tokens) return null
  return html`<div
    class="turn-usage"
    title=${usageTitle(tokens)}
    aria-label=${`This turn: ${usageText(tokens)}`}
  >
    ${usageText(tokens)}
  </div>`
}

// No prompt after `id` has reached the model yet (a queued one has not): `id`'s turn runs on.
function newestTurn(thread, id) {
  const ids = thread.ids.value
  const queued = thread.queued.value
  for (let i = ids.indexOf(id) + 1; i < ids.length; i++)
    if (thread.message(ids[i])?.type === "user" && !queued.has(ids[i])) return false
  return true
}
