// Token usage per turn: a turn is what follows one user message up to the next; its usage is
// the sum of its steps' `step.ended` tokens (each assistant message is one step and keeps its
// step's tokens), shown under the turn's last assistant message.

import { html } from "./html.js"

const KEYS = ["input", "output", "reasoning", "cache_read"]

/**
 * `ids` in list order, `message(id)` the message: a Map from the id of each turn's last
 * assistant message to the turn's summed tokens (turns without any tokens are left out).
 */
export function turnUsage(ids, message) {
  const usage = new Map()
  let sum = null
  let last = null
  const close = () => {
    if (last && sum) usage.set(last, sum)
    sum = null
    last = null
  }
  for (const id of ids) {
    const m = message(id)
    if (!m) continue
    if (m.type === "user") close()
    if (m.type !== "assistant") continue
    last = id
    if (m.tokens && typeof m.tokens === "object") {
      sum ??= Object.fromEntries(KEYS.map((k) => [k, 0]))
      for (const k of KEYS) sum[k] += Number.isFinite(m.tokens[k]) ? m.tokens[k] : 0
    }
  }
  close()
  return usage
}

const compact = (n) =>
  n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n)

/** "12 in · 7 out" (reasoning and cache reads only when there are any). */
export function usageText(tokens) {
  const parts = [`${compact(tokens.input)} in`, `${compact(tokens.output)} out`]
  if (tokens.reasoning) parts.push(`${compact(tokens.reasoning)} reasoning`)
  if (tokens.cache_read) parts.push(`${compact(tokens.cache_read)} cached`)
  return parts.join(" · ")
}

/** Under a turn's last assistant message; nothing under the others. */
export function TurnUsage({ thread, messageId }) {
  const tokens = thread.usage.value.get(messageId)
  if (!tokens) return null
  const full = KEYS.map((k) => `${k.replace("_", " ")}: ${tokens[k]}`).join(", ")
  return html`<div
    class="turn-usage"
    title=${`Tokens this turn — ${full}`}
    aria-label=${`Tokens this turn: ${usageText(tokens)}`}
  >
    ${usageText(tokens)} tokens
  </div>`
}
