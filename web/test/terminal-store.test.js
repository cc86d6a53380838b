import { effect } from "@preact/signals"
import { expect, test } from "vitest"
import { TerminalStore } from "../src/terminals/store.js"

test("the journal's clock moves for every tab that comes or goes", () => {
  const store = new TerminalStore()
  store.journal("a")
  store.journal("b")
  store.journal("a")
  expect(store.changes).toBe(3)
  expect(store.changedAt.get("a")).toBe(3)
  expect(store.changedAt.get("b")).toBe(2)
})

test("a tab is shown only while it is the one in view", () => {
  const store = new TerminalStore()
  store.activeId.value = "a"
  expect(store.shown("a")).toBe(true)
  expect(store.shown("b")).toBe(false)
})

test("saying the same notice twice shows it twice", () => {
  const store = new TerminalStore()
  const seen = []
  effect(() => {
    if (store.notice.value) seen.push(store.notice.value.text)
  })
  store.say("gone")
  store.say("gone")
  expect(seen).toEqual(["gone", "gone"])
})
