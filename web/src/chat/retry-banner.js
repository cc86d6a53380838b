// The retry banner: the agent's request failed with a retryable error and waits until `at`
// (epoch ms, session.retry.scheduled) to try again. It counts down once a second and is gone
// when the next step starts or streams (the store clears `thread.retry`). In its place, a
// "Compact now" that failed after its retries says why (`thread.compaction`).

import { useEffect, useState } from "preact/hooks"
import { compactionFailure, plainError } from "./error-words.js"
import { html } from "./html.js"
import { openSettings } from "./settings-dialog.js"

/** Whole seconds left until `at`, never negative (rounded up: "1 s" until the moment itself). */
export const secondsLeft = (at, now = Date.now()) => Math.max(0, Math.ceil((at - now) / 1000))

export function retryText(retry, now = Date.now(), provider = null) {
  const left = secondsLeft(retry.at, now)
  const when = left > 0 ? `Retrying in ${left} s` : "Retrying now"
  const message = retry.error ? plainError(retry.error, provider).text : ""
  return `${when} (attempt ${retry.attempt})${message ? `: ${message}` : ""}`
}

export function RetryBanner({ thread, store }) {
  const retry = thread.retry.value
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    if (!retry) return
    setNow(Date.now())
    const timer = setInterval(() => {
      const t = Date.now()
      setNow(t)
      if (t >= retry.at) clearInterval(timer)
    }, 250) // a quarter second: the shown second changes on time, not up to a second late
    return () => clearInterval(timer)
  }, [retry])
  if (!retry) return null
  const provider = store?.provider.value ?? null
  const settings = retry.error && plainError(retry.error, provider).settings
  return html`<div class="chat-retry" role="status" data-at=${retry.at}>
    <span class="chat-retry-text">${retryText(retry, now, provider)}</span>
    ${settings && html` <button type="button" class="link-button provider-configure" onClick=${openSettings}>Open settings</button>`}
  </div>`
}

/** A "Compact now" that failed, retries and all: plain words, the provider's own, the way out. */
export function CompactionFailed({ thread, store }) {
  const error = thread.compaction.value
  if (!error) return null
  const failed = compactionFailure(error, store?.provider.value ?? null)
  return html`<div class="chat-compaction-failed" role="alert">
    <span class="chat-compaction-text">${failed.text}</span>
    ${failed.detail && html` <span class="chat-compaction-detail">${failed.detail}</span>`}
    ${failed.settings && html` <button type="button" class="link-button provider-configure" onClick=${openSettings}>Open settings</button>`}
    <button
      type="button"
      class="link-button chat-compaction-dismiss"
      aria-label="Dismiss this message about the compaction"
      onClick=${() => (thread.compaction.value = null)}
    >
      Dismiss
    </button>
  </div>`
}
