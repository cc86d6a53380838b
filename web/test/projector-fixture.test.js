import { expect, test } from "vitest"
import { CREATE, REMOVE, STATUS, TOUCH, UPDATE } from "../src/chat/apply.js"
import { createChatStore } from "../src/chat/store.js"
// Written by the Python projector: tests/events/test_projector_fixture.py.
import fixture from "./fixtures/projector.json"

const SID = fixture.session.id

/** A server with no sessions and an empty first page: everything arrives live. */
async function openStore() {
  const request = async (_method, path) =>
    path === "/api/session" ? { data: [] } : { data: [], seq: 0, cursor: { previous: null } }
  const store = createChatStore({ request })
  await store.loadSessions()
  await store.openThread(SID)
  return store
}

test("the projector's events replayed live leave the projector's messages", async () => {
  const store = await openStore()
  for (const event of fixture.events) store.handle(event.type, event)
  expect(store.thread(SID).list()).toStrictEqual(fixture.messages)
})

test("the projector's events replayed live leave the projector's session row", async () => {
  const store = await openStore()
  for (const event of fixture.events) store.handle(event.type, event)
  const session = store.sessions.value.find((s) => s.id === SID)
  // The row's fields (title, status, times...); the API adds others the page reads elsewhere.
  const row = Object.fromEntries(Object.keys(fixture.session).map((key) => [key, session[key]]))
  expect(row).toStrictEqual(fixture.session)
})

test("the fixture exercises every event type apply.js mirrors", () => {
  const types = new Set(fixture.events.map((event) => event.type))
  const mirrored = [
    ...Object.keys(CREATE),
    ...Object.keys(UPDATE),
    ...Object.keys(STATUS),
    ...TOUCH,
    ...REMOVE,
  ]
  expect(mirrored.filter((type) => !types.has(type))).toStrictEqual([])
})
