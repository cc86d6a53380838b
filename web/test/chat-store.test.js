import { describe, expect, test } from "vitest"
import { createChatStore, PAGE_SIZE } from "../src/chat/store.js"

const SID = "ses_1"

/** A fake server: requests wait until the test releases them, so reads can be held in flight. */
function fakeServer() {
  const calls = []
  const request = (method, path, body) =>
    new Promise((resolve, reject) => calls.push({ method, path, body, resolve, reject }))
  const next = async (match) => {
    for (let i = 0; i < 100; i++) {
      const index = calls.findIndex((c) => !c.taken && (!match || c.path.includes(match)))
      if (index >= 0) {
        calls[index].taken = true
        return calls[index]
      }
      await new Promise((r) => setTimeout(r, 0))
    }
    throw new Error(`no request matching ${match}`)
  }
  return { calls, request, next }
}

let position = 0
const event = (type, seq, data, created = seq) => ({
  position: ++position,
  id: `evt_${position}`,
  type,
  session_id: SID,
  aggregate_id: SID,
  seq,
  version: 1,
  created,
  data,
})

const assistant = (id, content, completed = 2) => ({
  id,
  type: "assistant",
  agent: "build",
  model: { id: "m", provider_id: "p" },
  content,
  time: { created: 1, completed },
})

async function loadedStore(rows, seq) {
  const server = fakeServer()
  const store = createChatStore({ request: server.request })
  const opened = store.openThread(SID)
  ;(await server.next("/message")).resolve({ data: rows, cursor: { previous: null }, seq })
  await opened
  return { server, store, thread: store.thread(SID) }
}

describe("page reads and live events", () => {
  test("an update event during an in-flight read survives the stale read (seq from the server)", async () => {
    const { server, store, thread } = await loadedStore(
      [assistant("msg_a", [{ type: "text", text: "original" }])],
      2,
    )
    const replacement = [
      { type: "text", text: "replacement" },
      { type: "reasoning", text: "why", time: { created: 3 } },
    ]
    const stale = store.openThread(SID, { force: true })
    const read = await server.next("/message")
    store.handle(
      "session.message.content.updated",
      event("session.message.content.updated", 3, { message_id: "msg_a", content: replacement }),
    )
    expect(thread.message("msg_a").content).toEqual(replacement)
    // The read was taken at seq 2, before the edit.
    read.resolve({
      data: [assistant("msg_a", [{ type: "text", text: "original" }])],
      cursor: { previous: null },
      seq: 2,
    })
    await stale
    expect(thread.message("msg_a").content).toEqual(replacement)
  })

  test("an update event during an in-flight read survives the stale read (server without seq)", async () => {
    const { server, store, thread } = await loadedStore([
      assistant("msg_a", [{ type: "text", text: "original" }]),
    ])
    const replacement = [{ type: "text", text: "replacement" }]
    const stale = store.openThread(SID, { force: true })
    const read = await server.next("/message")
    store.handle(
      "x",
      event("session.message.content.updated", 3, { message_id: "msg_a", content: replacement }),
    )
    read.resolve({
      data: [assistant("msg_a", [{ type: "text", text: "original" }])],
      cursor: { previous: null },
    })
    await stale
    expect(thread.message("msg_a").content).toEqual(replacement)
  })

  test("an append the read already contains is not applied twice", async () => {
    const server = fakeServer()
    const store = createChatStore({ request: server.request })
    const opened = store.openThread(SID)
    const read = await server.next("/message")
    // The page was read at seq 5, after the text part was appended; the stream delivers the
    // append (seq 5) only after the read answered.
    read.resolve({
      data: [assistant("msg_a", [{ type: "text", text: "one" }], undefined)],
      cursor: { previous: null },
      seq: 5,
    })
    await opened
    store.handle("x", event("session.text", 5, { message_id: "msg_a", text: "one" }))
    store.handle("x", event("session.text", 6, { message_id: "msg_a", text: "two" }))
    expect(
      store
        .thread(SID)
        .message("msg_a")
        .content.map((p) => p.text),
    ).toEqual(["one", "two"])
  })

  test("messages created live while the first page is read stay after the page", async () => {
    const server = fakeServer()
    const store = createChatStore({ request: server.request })
    const opened = store.openThread(SID)
    const read = await server.next("/message")
    store.handle(
      "x",
      event("session.prompted", 4, { message_id: "msg_new", text: "hi", mode: "queue" }),
    )
    read.resolve({
      data: [{ id: "msg_old", type: "user", text: "old", time: { created: 1 } }],
      cursor: { previous: null },
      seq: 3,
    })
    await opened
    expect(store.thread(SID).ids.value).toEqual(["msg_old", "msg_new"])
  })

  test("duplicate and replayed events are applied once", async () => {
    const { store, thread } = await loadedStore([], 0)
    const e = event("session.prompted", 1, { message_id: "u1", text: "hi", mode: "queue" })
    store.handle("x", e)
    store.handle("x", e)
    store.handle(
      "x",
      event("session.step.started", 2, {
        message_id: "a1",
        agent: "build",
        model: { id: "m", provider_id: "p" },
      }),
    )
    const text = event("session.text", 3, { message_id: "a1", text: "answer" })
    store.handle("x", text)
    store.handle("x", text)
    expect(thread.ids.value).toEqual(["u1", "a1"])
    expect(thread.message("a1").content).toEqual([{ type: "text", text: "answer" }])
  })
})

describe("event application", () => {
  test("a full assistant turn projects as the server projects it", async () => {
    const { store, thread } = await loadedStore([], 0)
    const model = { id: "m", provider_id: "p" }
    const events = [
      event("session.prompted", 1, { message_id: "u1", text: "list files", mode: "queue" }, 10),
      event("session.step.started", 2, { message_id: "a1", agent: "build", model }, 11),
      event("session.reasoning", 3, { message_id: "a1", text: "think" }, 12),
      event(
        "session.tool.input.started",
        4,
        { message_id: "a1", call_id: "c1", name: "shell" },
        13,
      ),
      event(
        "session.tool.called",
        5,
        { message_id: "a1", call_id: "c1", name: "shell", input: { command: "ls" } },
        14,
      ),
      event("session.tool.success", 6, { message_id: "a1", call_id: "c1", content: "a\nb" }, 15),
      event("session.text", 7, { message_id: "a1", text: "Two files." }, 16),
      event("session.step.streamed", 8, { message_id: "a1" }, 17),
      event(
        "session.step.ended",
        9,
        { message_id: "a1", finish: "stop", tokens: { input: 5, output: 3 }, cost: 0.5 },
        18,
      ),
    ]
    for (const e of events) store.handle(e.type, e)
    expect(thread.list()).toEqual([
      { id: "u1", type: "user", text: "list files", time: { created: 10 } },
      {
        id: "a1",
        type: "assistant",
        agent: "build",
        model,
        content: [
          { type: "reasoning", text: "think", time: { created: 12 } },
          {
            type: "tool",
            id: "c1",
            name: "shell",
            state: { status: "completed", content: "a\nb", input: { command: "ls" } },
            time: { created: 13, ran: 14, completed: 15 },
          },
          { type: "text", text: "Two files." },
        ],
        time: { created: 11, streamed: 17, completed: 18 },
        finish: "stop",
        tokens: { input: 5, output: 3 },
        cost: 0.5,
      },
    ])
  })

  test("a restarted step clears the result and time.streamed", async () => {
    const { store, thread } = await loadedStore(
      [{ ...assistant("a1", []), finish: "stop", time: { created: 1, streamed: 2, completed: 3 } }],
      3,
    )
    store.handle(
      "x",
      event("session.step.started", 4, {
        message_id: "a1",
        agent: "build",
        model: { id: "m", provider_id: "p" },
      }),
    )
    expect(thread.message("a1").time).toEqual({ created: 1 })
    expect(thread.message("a1").finish).toBeUndefined()
  })

  test("a failed step marks the session as error; an event of a session never opened changes only the list", async () => {
    const server = fakeServer()
    const store = createChatStore({ request: server.request })
    store.handle("x", event("session.created", 1, { title: "T", directory: "/tmp" }))
    store.handle(
      "x",
      event("session.step.failed", 2, { message_id: "a1", error: { type: "x", message: "boom" } }),
    )
    expect(store.sessions.value[0]).toMatchObject({
      id: SID,
      status: "error",
      title: "T",
      directory: "/tmp",
    })
    expect(store.thread(SID).ids.value).toEqual([])
  })

  test("session created, renamed and deleted live", async () => {
    const server = fakeServer()
    const store = createChatStore({ request: server.request })
    store.handle("x", event("session.created", 1, { title: "First", directory: "/srv" }))
    store.handle("x", event("session.updated", 2, { title: "Renamed" }))
    expect(store.sessions.value.map((s) => s.title)).toEqual(["Renamed"])
    store.select(SID)
    store.handle("x", event("session.deleted", 3, {}))
    expect(store.sessions.value).toEqual([])
    expect(store.activeId.value).toBe(null)
  })

  test("a session list read does not undo a live rename or resurrect a live delete", async () => {
    const server = fakeServer()
    const store = createChatStore({ request: server.request })
    store.handle("x", {
      ...event("session.created", 1, { title: "A", directory: "/a" }),
      session_id: "s_a",
      aggregate_id: "s_a",
    })
    store.handle("x", {
      ...event("session.created", 1, { title: "B", directory: "/b" }),
      session_id: "s_b",
      aggregate_id: "s_b",
    })
    const loading = store.loadSessions()
    const read = await server.next("/api/session")
    store.handle("x", {
      ...event("session.updated", 2, { title: "A2" }),
      session_id: "s_a",
      aggregate_id: "s_a",
    })
    store.handle("x", {
      ...event("session.deleted", 2, {}),
      session_id: "s_b",
      aggregate_id: "s_b",
    })
    const row = (id, title) => ({
      id,
      title,
      directory: "/",
      status: "idle",
      parent_id: null,
      time: { created: 1, updated: 1 },
    })
    read.resolve({ data: [row("s_a", "A"), row("s_b", "B"), row("s_c", "C")] })
    await loading
    expect(store.sessions.value.map((s) => s.title).sort()).toEqual(["A2", "C"])
  })
})

describe("paging", () => {
  test("the latest page first, older pages prepended in order until the cursor ends", async () => {
    const server = fakeServer()
    const store = createChatStore({ request: server.request })
    const user = (n) => ({
      id: `m${String(n).padStart(3, "0")}`,
      type: "user",
      text: `#${n}`,
      time: { created: n },
    })
    const opened = store.openThread(SID)
    const first = await server.next("/message")
    expect(first.path).toBe(`/api/session/${SID}/message?limit=${PAGE_SIZE}`)
    first.resolve({
      data: Array.from({ length: 50 }, (_, i) => user(70 + i)),
      cursor: { previous: "c70" },
      seq: 120,
    })
    await opened
    const t = store.thread(SID)
    expect(t.older.value).toMatchObject({ cursor: "c70", done: false })

    const older = store.loadOlder(SID)
    expect(await store.loadOlder(SID)).toBe(false) // one older read at a time
    const second = await server.next("/message")
    expect(second.path).toBe(`/api/session/${SID}/message?limit=${PAGE_SIZE}&before=c70`)
    second.resolve({
      data: Array.from({ length: 50 }, (_, i) => user(20 + i)),
      cursor: { previous: "c20" },
      seq: 120,
    })
    await older

    const last = store.loadOlder(SID)
    ;(await server.next("before=c20")).resolve({
      data: Array.from({ length: 20 }, (_, i) => user(i)),
      cursor: { previous: null },
      seq: 120,
    })
    await last
    expect(t.ids.value).toEqual(Array.from({ length: 120 }, (_, i) => user(i).id))
    expect(t.older.value.done).toBe(true)
    expect(await store.loadOlder(SID)).toBe(false)
  })

  test("a live event for a message on a page not loaded yet is ignored, and its page brings the state", async () => {
    const { server, store, thread } = await loadedStore(
      [{ id: "u9", type: "user", text: "new", time: { created: 9 } }],
      9,
    )
    thread.older.value = { cursor: "c9", loading: false, done: false }
    store.handle(
      "x",
      event("session.message.content.updated", 10, {
        message_id: "a1",
        content: [{ type: "text", text: "edited" }],
      }),
    )
    expect(thread.messages.has("a1")).toBe(false)
    const older = store.loadOlder(SID)
    ;(await server.next("before=c9")).resolve({
      data: [assistant("a1", [{ type: "text", text: "edited" }])],
      cursor: { previous: null },
      seq: 10,
    })
    await older
    expect(thread.ids.value).toEqual(["a1", "u9"])
    expect(thread.message("a1").content[0].text).toBe("edited")
  })
})

describe("actions", () => {
  test("editing sends PATCH with the new content and shows the answer at once", async () => {
    const { server, store, thread } = await loadedStore(
      [assistant("a1", [{ type: "text", text: "old" }])],
      3,
    )
    const editing = store.editMessage(SID, "a1", [{ type: "text", text: "new" }])
    const call = await server.next("/message/a1")
    expect(call.method).toBe("PATCH")
    expect(call.body).toEqual({ content: [{ type: "text", text: "new" }] })
    call.resolve({ data: assistant("a1", [{ type: "text", text: "new" }]), seq: 4 })
    await editing
    expect(thread.message("a1").content[0].text).toBe("new")
    // The edit's own event then arrives and changes nothing further.
    store.handle(
      "x",
      event("session.message.content.updated", 4, {
        message_id: "a1",
        content: [{ type: "text", text: "new" }],
      }),
    )
    expect(thread.message("a1").content).toEqual([{ type: "text", text: "new" }])
  })

  test("recent folders come from the sessions, most recently updated first, without duplicates", async () => {
    const server = fakeServer()
    const store = createChatStore({ request: server.request })
    const loading = store.loadSessions()
    const row = (id, directory, updated) => ({
      id,
      title: id,
      directory,
      status: "idle",
      time: { created: 1, updated },
    })
    ;(await server.next("/api/session")).resolve({
      data: [row("a", "/x", 1), row("b", "/y", 3), row("c", "/x", 2)],
    })
    await loading
    expect(store.recentFolders.value).toEqual(["/y", "/x"])
  })
})

describe("resync", () => {
  test("after missed events every open thread is re-read in place, dropping what it had", async () => {
    const { server, store, thread } = await loadedStore(
      [{ id: "u1", type: "user", text: "kept?", time: { created: 1 } }],
      1,
    )
    const resync = store.resync()
    ;(await server.next("/api/session")).resolve({ data: [] })
    ;(await server.next("/message")).resolve({
      data: [{ id: "u2", type: "user", text: "fresh", time: { created: 2 } }],
      cursor: { previous: null },
      seq: 5,
    })
    await resync
    expect(store.thread(SID)).toBe(thread) // views hold this object
    expect(thread.ids.value).toEqual(["u2"])
    expect(thread.chunks.value.map((c) => c.ids.value)).toEqual([["u2"]])
    // A live event at or below the read's seq is already in it.
    store.handle(
      "x",
      event("session.prompted", 5, { message_id: "u2", text: "fresh", mode: "queue" }),
    )
    store.handle(
      "x",
      event("session.prompted", 6, { message_id: "u3", text: "new", mode: "queue" }),
    )
    expect(thread.ids.value).toEqual(["u2", "u3"])
  })
})
