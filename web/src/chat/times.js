// When each message was written, from its durable `time.created` (the event's time, never the
// page's clock): a short local time beside the message, the full date and time on hover, and
// a day separator where the day changes (and above the first message when it is not today).
// The page's clock only decides which day is "today".

import { html } from "./html.js"

const TIME = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" })
const FULL = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "medium" })
const DAY = new Intl.DateTimeFormat(undefined, { weekday: "long", day: "numeric", month: "long" })
const DAY_YEAR = new Intl.DateTimeFormat(undefined, {
  weekday: "long",
  day: "numeric",
  month: "long",
  year: "numeric",
})
const SHORT_DAY = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" })

const valid = (ms) => typeof ms === "number" && Number.isFinite(ms) && ms > 0

/** The local day of an epoch-ms time, as a comparable key. */
export function dayKey(ms) {
  const d = new Date(ms)
  return d.getFullYear() * 10000 + (d.getMonth() + 1) * 100 + d.getDate()
}

/** "14:05" today; "3 Nov, 14:05" on another day. */
export function shortTime(ms, now = Date.now()) {
  const time = TIME.format(ms)
  return dayKey(ms) === dayKey(now) ? time : `${SHORT_DAY.format(ms)}, ${time}`
}

export const fullTime = (ms) => FULL.format(ms)

/** "Today", "Yesterday", "Monday 3 November" (the year when it is not this year). */
export function dayLabel(ms, now = Date.now()) {
  const day = dayKey(ms)
  if (day === dayKey(now)) return "Today"
  const yesterday = new Date(now)
  yesterday.setDate(yesterday.getDate() - 1)
  if (day === dayKey(yesterday.getTime())) return "Yesterday"
  return new Date(ms).getFullYear() === new Date(now).getFullYear()
    ? DAY.format(ms)
    : DAY_YEAR.format(ms)
}

/** The message's time: short, with the full date and time as its tooltip. */
export function MessageTime({ ms, label = "Sent" }) {
  if (!valid(ms)) return null
  const full = fullTime(ms)
  return html`<time
    class="message-time"
    datetime=${new Date(ms).toISOString()}
    title=${`${label} ${full}`}
  >
    ${shortTime(ms)}
  </time>`
}

/** The day `message` starts, when it is the first of its day in the list (else null). */
export function startsDay(thread, message) {
  const ms = message.time?.created
  if (!valid(ms)) return null
  const ids = thread.ids.value
  const at = ids.indexOf(message.id)
  for (let i = at - 1; i >= 0; i--) {
    const before = thread.message(ids[i])?.time?.created
    if (!valid(before)) continue
    return dayKey(before) === dayKey(ms) ? null : ms
  }
  // The first dated message: a separator only when it is not today.
  return dayKey(ms) === dayKey(Date.now()) ? null : ms
}

const isoDay = (ms) => {
  const key = String(dayKey(ms))
  return `${key.slice(0, 4)}-${key.slice(4, 6)}-${key.slice(6)}`
}

export function DaySeparator({ thread, message }) {
  const ms = startsDay(thread, message)
  if (ms === null) return null
  return html`<div class="day-separator" role="separator" data-day=${dayKey(ms)}>
    <time datetime=${isoDay(ms)} title=${fullTime(ms)}> ${dayLabel(ms)} </time>
  </div>`
}
