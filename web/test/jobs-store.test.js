import { describe, expect, test } from "vitest"
import { createJobsStore, elapsed, parseNotice } from "../src/chat/jobs-store.js"
import { diffLines } from "../src/chat/permission-card.js"

const SID = "ses_1"

/** A fake server whose requests wait until the test answers them (reads held in flight). */
function fakeServer() {
  const calls = []
  const request = (method, path, body) =>
    new Promise((resolve, reject) => calls.push({ method, path, body, resolve, reject }))
  const next = async (match) => {
    for (let i = 0; i < 100; i++) {
      const index = calls.findIndex((c) => !c.taken && c.path.includes(match))
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

const job = (id, status, extra = {}) => ({
  id,
  type: "shell",
  title: `cmd ${id}`,
  status,
  background: true,
  time: { started: 1000, completed: status === "running" ? null : 3000 },
  notification_id: `msg_${id}`,
  ...extra,
})
const jobEvent = (j) => ({ session_id: SID, data: { job: j } })
let seq = 0
const durable = (type, data) => ({
  type,
  session_id: SID,
  aggregate_id: SID,
  seq: ++seq,
  created: seq,
  data,
})

async function loaded(server, store, { jobs = [], permissions = [] } = {}) {
  const loading = store.load(SID)
  ;(await server.next("/jobs")).resolve({ data: jobs })
  ;(await server.next("/permission")).resolve({ data: permissions })
  return loading
}

describe("jobs", () => {
  test("a live job change made while a read is in flight is not undone by the read", async () => {
    const server = fakeServer()
    const store = createJobsStore({ request: server.request })
    await loaded(server, store, { jobs: [job("a", "running")] })
    const reading = store.load(SID)
    store.handle("session.job.updated", jobEvent(job("a", "completed")))
    ;(await server.next("/jobs")).resolve({ data: [job("a", "running")] })
    ;(await server.next("/permission")).resolve({ data: [] })
    await reading
    expect(store.of(SID).jobs.value.map((j) => [j.id, j.status])).toEqual([["a", "completed"]])
  })

  test("a job event adds a new job and replaces a known one; a settled job never runs again", async () => {
    const server = fakeServer()
    const store = createJobsStore({ request: server.request })
    await loaded(server, store)
    store.handle("session.job.updated", jobEvent(job("a", "running", { background: false })))
    store.handle("session.job.updated", jobEvent(job("a", "running")))
    expect(store.of(SID).jobs.value).toEqual([job("a", "running")])
    store.handle("session.job.updated", jobEvent(job("a", "cancelled")))
    store.handle("session.job.updated", jobEvent(job("a", "running")))
    expect(store.of(SID).job("a").status).toBe("cancelled")
  })

  test("events of a session never shown are ignored (its first read brings them)", () => {
    const store = createJobsStore({ request: () => new Promise(() => {}) })
    store.handle("session.job.updated", jobEvent(job("a", "running")))
    expect(store.sessions.has(SID)).toBe(false)
  })

  test("cancel and background post to their routes and apply the answer", async () => {
    const server = fakeServer()
    const store = createJobsStore({ request: server.request })
    await loaded(server, store, {
      jobs: [job("a", "running"), job("b", "running", { background: false })],
    })
    const cancelling = store.cancel(SID, "a")
    const cancel = await server.next("/jobs/a/cancel")
    expect(cancel.method).toBe("POST")
    cancel.resolve({ data: job("a", "cancelled") })
    await cancelling
    const moving = store.background(SID)
    const moved = await server.next("/background")
    moved.resolve({ data: [job("b", "running")] })
    await moving
    expect(store.of(SID).jobs.value.map((j) => [j.id, j.status, j.background])).toEqual([
      ["a", "cancelled", true],
      ["b", "running", true],
    ])
  })
})

describe("permissions", () => {
  const asked = (call) =>
    durable("session.permission.asked", {
      message_id: "msg_1",
      call_id: call,
      tool: "shell",
      input: { command: "ls" },
    })
  const replied = (call) =>
    durable("session.permission.replied", {
      message_id: "msg_1",
      call_id: call,
      tool: "shell",
      reply: "once",
    })

  test("a read shows the waiting calls; asked adds once, replied removes", async () => {
    const server = fakeServer()
    const store = createJobsStore({ request: server.request })
    await loaded(server, store, {
      permissions: [{ message_id: "msg_0", call_id: "c0", tool: "edit", input: {}, diff: "+x" }],
    })
    const s = store.of(SID)
    store.handle("session.permission.asked", asked("c1"))
    store.handle("session.permission.asked", asked("c1")) // replayed
    expect(s.permissions.value.map((p) => p.call_id)).toEqual(["c0", "c1"])
    store.handle("session.permission.replied", replied("c0"))
    expect(s.permissions.value.map((p) => p.call_id)).toEqual(["c1"])
  })

  test("a read that started before a reply does not show the answered call again", async () => {
    const server = fakeServer()
    const store = createJobsStore({ request: server.request })
    await loaded(server, store)
    const reading = store.load(SID)
    store.handle("session.permission.asked", asked("c1"))
    store.handle("session.permission.replied", replied("c1"))
    ;(await server.next("/jobs")).resolve({ data: [] })
    ;(await server.next("/permission")).resolve({
      data: [{ message_id: "msg_1", call_id: "c1", tool: "shell", input: {} }],
    })
    await reading
    expect(store.of(SID).permissions.value).toEqual([])
  })

  test("a reply posts the answer; a 404 (answered elsewhere) still hides the card", async () => {
    const server = fakeServer()
    const store = createJobsStore({ request: server.request })
    await loaded(server, store, { permissions: [{ call_id: "c1", tool: "shell", input: {} }] })
    const replying = store.reply(SID, "c1", "deny")
    const post = await server.next("/permission/c1")
    expect(post.body).toEqual({ reply: "deny" })
    post.reject(Object.assign(new Error("gone"), { status: 404 }))
    await replying
    expect(store.of(SID).permissions.value).toEqual([])
  })

  test("the mode follows session.permission.mode and a PATCH", async () => {
    const server = fakeServer()
    const store = createJobsStore({ request: server.request })
    await loaded(server, store)
    expect(store.of(SID).mode.value).toBe(null)
    store.handle("session.permission.mode", durable("session.permission.mode", { mode: "ask" }))
    expect(store.of(SID).mode.value).toBe("ask")
    const setting = store.setMode(SID, "auto")
    const patch = await server.next(`/api/session/${SID}`)
    expect([patch.method, patch.body]).toEqual(["PATCH", { permission_mode: "auto" }])
    patch.resolve({ data: { id: SID, permission_mode: "auto" } })
    await setting
    expect(store.of(SID).mode.value).toBe("auto")
  })
})

describe("helpers", () => {
  test("a shell notice gives its unescaped command and its output", () => {
    const text =
      '<shell id="job:s:c" state="completed" command="echo &quot;a&amp;b&quot; &lt;x&gt;">\nhi\n<b>not html</b>\n[exit code 0]\n</shell>'
    expect(parseNotice(text)).toEqual({
      kind: "shell",
      attrs: { id: "job:s:c", state: "completed", command: 'echo "a&b" <x>' },
      body: "hi\n<b>not html</b>\n[exit code 0]",
    })
    expect(parseNotice("The server restarted")).toBe(null)
  })

  test("diff lines are tagged for colouring", () => {
    expect(
      diffLines("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n same").map((l) => l.kind),
    ).toEqual(["meta", "meta", "hunk", "del", "add", "context"])
  })

  test("elapsed time reads as seconds, minutes, hours", () => {
    expect([elapsed(4200), elapsed(125000), elapsed(3720000)]).toEqual(["4s", "2m 05s", "1h 02m"])
  })
})
