// A failed turn in plain words: what happened, the HTTP status and the provider's host, and the
// way out (the settings for a key, model or address problem; Retry for every failed or cut
// turn). Text only: the words are rendered as text nodes, never as markup.

import { html } from "./html.js"
import { NOT_CONFIGURED, openSettings } from "./settings-dialog.js"

/** The host of a base URL ("" when it is not one). */
export function hostOf(url) {
  try {
    return url ? new URL(url).host : ""
  } catch {
    return ""
  }
}

const SETTINGS_STATUS = new Set([401, 403, 404])

/**
 * `{text, status, host, settings}` for a step's `{type, message}` error; `provider` is the
 * provider settings (GET /api/config/provider), which name the host.
 */
export function plainError(error, provider) {
  const type = error?.type ?? ""
  const message = error?.message ?? ""
  const match = /\bHTTP (\d{3})\b/.exec(message)
  const status = match ? Number(match[1]) : null
  const host = hostOf(provider?.effective_base_url || provider?.base_url)
  const at = host ? ` at ${host}` : ""
  const code = status ? ` (HTTP ${status})` : ""
  let text
  if (type === "provider.auth" || status === 401 || status === 403)
    text = `The provider${at} refused Desk's API key${code}. Check the key in the settings.`
  else if (type === "provider.not_found" || status === 404)
    text = `The provider${at} does not know this model or address${code}. Check the model and the base URL in the settings.`
  else if (type === "provider.connection")
    text = `Desk could not reach the provider${at}. Check the base URL in the settings and that the provider is running.`
  else if (type === "provider.timeout") text = `The provider${at} stopped answering.`
  else if (type === "provider.rate_limited") text = `The provider${at} is limiting requests${code}.`
  else if (type === "provider.server_error") text = `The provider${at} had a server error${code}.`
  else if (type === "provider.bad_request") text = `The provider${at} refused the request${code}.`
  else if (type === "provider.stream_cut" || type === "provider.stream_error")
    text = `The provider's answer${at} broke off.`
  else if (type === "provider.invalid_output")
    text = `The provider${at} sent an answer Desk could not read.`
  else text = message || "The turn failed."
  const settings =
    type === "provider.auth" ||
    type === "provider.not_found" ||
    type === "provider.connection" ||
    type === NOT_CONFIGURED ||
    SETTINGS_STATUS.has(status)
  // The provider's own words help with what it answered; a failed connection has none.
  const quiet = type === "provider.connection" || type === "provider.timeout" || text === message
  return { text, status, host, settings, detail: quiet ? "" : message }
}

// The provider's answer to a summary request, as a step's error type (plainError's words).
const STATUS_TYPES = [
  [(s) => s === 400, "provider.bad_request"],
  [(s) => s === 429, "provider.rate_limited"],
  [(s) => s >= 500, "provider.server_error"],
]

/**
 * A failed "Compact now" in plain words: `{text, detail, settings}`. A 422
 * `context.compaction_failed` whose summary request failed names the provider's answer as a
 * failed turn would (its host and status, its own words as the detail); any other refusal
 * (nothing older to compact, a turn running) is the service's sentence.
 */
export function compactionFailure(error, provider = null) {
  const message = error?.message || String(error)
  const cause = /the summary request failed: (.+?)\.?$/s.exec(message)?.[1]
  if (error?.type !== "context.compaction_failed" || !cause)
    return { text: message, detail: "", settings: error?.type === NOT_CONFIGURED }
  const status = Number(/\bHTTP (\d{3})\b/.exec(cause)?.[1]) || 0
  const type = STATUS_TYPES.find(([match]) => match(status))?.[1] ?? ""
  const plain = plainError({ type, message: cause }, provider)
  const known = plain.text !== cause
  return {
    text: `Nothing was compacted: the model could not write the summary${known ? `. ${plain.text}` : ` (${cause}).`} The conversation is as it was.`,
    detail: known ? plain.detail : "",
    settings: plain.settings,
  }
}

/** How many turns' snapshots the service keeps, as its checkpoint.expired message says. */
export const keptTurns = (error) =>
  Number(/\blast (\d+) turns\b/.exec(error?.message ?? "")?.[1]) || 100

/**
 * A revert's or diff's error in plain words: for a 409 `checkpoint.expired`, that the turn is
 * too old to `what` ("undo", "show its changes"); otherwise the service's message.
 */
export function checkpointError(error, what) {
  if (error?.type !== "checkpoint.expired") return error?.message ?? String(error)
  return `This turn is too old to ${what}: Desk keeps the last ${keptTurns(error)} turns' snapshots.`
}

/** The failed turn's notice: plain words, the provider's own words, the way out. */
export function TurnError({ error, provider, onRetry }) {
  const plain = plainError(error, provider)
  return html`<div
    class="message-error"
    role="alert"
    data-type=${error.type}
    data-status=${plain.status ?? undefined}
  >
    <p class="message-error-text">${plain.text}</p>
    ${plain.detail && html`<p class="message-error-detail">${plain.detail}</p>`}
    <div class="message-error-actions">
      ${plain.settings && html`<button type="button" class="provider-configure" onClick=${openSettings}>${error.type === NOT_CONFIGURED ? "Configure provider" : "Open settings"}</button>`}
      ${onRetry && html`<button type="button" class="message-retry" onClick=${onRetry}>Retry</button>`}
    </div>
  </div>`
}

/**
 * The prompt a Retry sends again for a failed or cut answer: the person's last prompt before
 * it. Null when the answer is not the session's latest (a later turn went on) or no prompt led
 * to it.
 */
export function retryPrompt(thread, messageId) {
  const ids = thread.ids.value
  const at = ids.indexOf(messageId)
  if (at < 0) return null
  for (let i = at + 1; i < ids.length; i++) {
    const later = thread.message(ids[i])
    if (later?.type === "user" || later?.type === "assistant") return null
  }
  for (let i = at - 1; i >= 0; i--) {
    const earlier = thread.message(ids[i])
    if (earlier?.type === "user") return earlier.text
  }
  return null
}
