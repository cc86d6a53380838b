import { expect, test } from "vitest"
import { signal } from "@preact/signals"
import { dayKey, dayLabel, shortTime, startsDay } from "../src/chat/times.js"

const at = (y, m, d, h = 12) => new Date(y, m - 1, d, h, 5).getTime()

function threadOf(messages) {
  const byId = new Map(messages.map((m) => [m.id, m]))
  return { ids: signal(messages.map((m) => m.id)), message: (id) => byId.get(id) ?? null }
}

test("a day separator goes where the day changes, and above the first message only when it is not today", () => {
  const today = Date.now()
  const messages = [
    { id: "a", time: { created: at(2026, 11, 30, 9) } },
    { id: "b", time: { created: at(2026, 11, 30, 23) } },
    { id: "c", time: {} }, // no time: skipped
    { id: "d", time: { created: at(2026, 12, 1, 0) } },
    { id: "e", time: { created: today } },
  ]
  const thread = threadOf(messages)
  expect(messages.map((m) => startsDay(thread, m) !== null)).toEqual([
    true,
    false,
    false,
    true,
    true,
  ])
  const same = threadOf([{ id: "x", time: { created: today } }])
  expect(startsDay(same, same.message("x"))).toBe(null)
})

test("labels: Today, Yesterday, then the day's name; short times add the date on other days", () => {
  const now = at(2026, 12, 2, 10)
  expect(dayLabel(at(2026, 12, 2, 1), now)).toBe("Today")
  expect(dayLabel(at(2026, 12, 1, 23), now)).toBe("Yesterday")
  expect(dayLabel(at(2026, 11, 29), now)).toContain("29")
  expect(dayLabel(at(2025, 11, 29), now)).toContain("2025")
  expect(shortTime(at(2026, 12, 2, 9), now)).not.toContain("Dec")
  expect(shortTime(at(2026, 11, 29, 9), now)).toMatch(/29/)
  expect(dayKey(at(2026, 12, 2, 0))).toBe(20261202)
})
