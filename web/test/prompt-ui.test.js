import { beforeEach, describe, expect, test } from "vitest"
import { isSendKey } from "../src/chat/composer.js"
import { clearDraft, loadDraft, saveDraft } from "../src/chat/drafts.js"
import { retryText, secondsLeft } from "../src/chat/retry-banner.js"
import { providerBody } from "../src/chat/settings-dialog.js"
import { createChatStore } from "../src/chat/store.js"
import { answerText, turnUsage, usageText, usageTitle } from "../src/chat/usage.js"

const SID = "ses_1"
let position = 0
const event = (type, seq, data) => ({
  position: ++position,
  id: `evt_${position}`,
  type,
  session_id: SID,
  aggregate_id: SID,
  seq,
  version: 1,
  created: seq,
  data,
})
const MODEL = { id: "m", provider_id: "p" }

/** A store whose requests answer from `routes` (path prefix -> payload), recording each call. */
function storeWith(routes = {}) {
  const calls = []
  const request = async (method, path, body) => {
    calls.push({ method, path, body })
    const key = Object.keys(routes).find(
      (k) => path.startsWith(k) || `${method} ${path}`.startsWith(k),
    )
    const answer = routes[key]
    if (answer instanceof Error) throw answer
    return typeof answer === "function" ? answer(body) : (answer ?? { data: null })
  }
  return { store: createChatStore({ request }), calls }
}

async function opened(rows = [], seq = 0) {
  const { store, calls } = storeWith({
    [`/api/session/${SID}/message`]: { data: rows, cursor: { previous: null }, seq },
  })
  await store.openThread(SID)
  return { store, calls, thread: store.thread(SID) }
}

describe("live reasoning", () => {
  test("reasoning deltas accumulate per message and the durable reasoning part replaces them", async () => {
    const { store, thread } = await opened()
    store.handle(
      "x",
      event("session.step.started", 1, { message_id: "a1", agent: "build", model: MODEL }),
    )
    store.handle("session.reasoning.delta", {
      session_id: SID,
      data: { message_id: "a1", delta: "Look " },
    })
    store.handle("session.reasoning.delta", {
      session_id: SID,
      data: { message_id: "a1", delta: "first." },
    })
    store.handle("session.text.delta", { session_id: SID, data: { message_id: "a1", delta: "Hi" } })
    expect(thread.reasoningOf("a1").value).toBe("Look first.")
    expect(thread.streamOf("a1").value).toBe("Hi")
    store.handle("x", event("session.reasoning", 2, { message_id: "a1", text: "Look first." }))
    expect(thread.reasoningOf("a1").value).toBe("")
    expect(thread.streamOf("a1").value).toBe("Hi") // the text block is still open
    expect(thread.message("a1").content).toEqual([
      { type: "reasoning", text: "Look first.", time: { created: 2 } },
    ])
  })

  test("a failed step drops what streamed; tool argument deltas last until the call is made", async () => {
    const { store, thread } = await opened()
    store.handle(
      "x",
      event("session.step.started", 1, { message_id: "a1", agent: "build", model: MODEL }),
    )
    store.handle(
      "x",
      event("session.tool.input.started", 2, { message_id: "a1", call_id: "c1", name: "shell" }),
    )
    store.handle("session.tool.input.delta", {
      session_id: SID,
      data: { message_id: "a1", call_id: "c1", delta: '{"comm' },
    })
    expect(thread.toolInputOf("c1").value).toBe('{"comm')
    store.handle(
      "x",
      event("session.tool.called", 3, {
        message_id: "a1",
        call_id: "c1",
        name: "shell",
        input: { command: "ls" },
      }),
    )
    expect(thread.toolInputOf("c1").value).toBe("")
    store.handle("session.text.delta", {
      session_id: SID,
      data: { message_id: "a1", delta: "par" },
    })
    store.handle(
      "x",
      event("session.step.failed", 4, {
        message_id: "a1",
        error: { type: "provider.timeout", message: "t" },
      }),
    )
    expect(thread.streamOf("a1").value).toBe("")
  })
})

describe("status, retry and queued prompts", () => {
  test("a step starting or ending keeps a busy session busy; session.status ends it", async () => {
    const { store } = await opened()
    store.handle("x", event("session.created", 1, { title: "T", directory: "/" }))
    store.handle("session.status", { session_id: SID, data: { status: "busy" } })
    store.handle(
      "x",
      event("session.step.started", 2, { message_id: "a1", agent: "build", model: MODEL }),
    )
    store.handle("x", event("session.step.ended", 3, { message_id: "a1", finish: "tool_calls" }))
    expect(store.sessions.value[0].status).toBe("busy")
    store.handle("session.status", { session_id: SID, data: { status: "idle" } })
    expect(store.sessions.value[0].status).toBe("idle")
  })

  test("the retry banner's state ends when the step streams", async () => {
    const { store, thread } = await opened()
    store.handle(
      "x",
      event("session.step.started", 1, { message_id: "a1", agent: "build", model: MODEL }),
    )
    store.handle(
      "x",
      event("session.retry.scheduled", 2, {
        message_id: "a1",
        attempt: 1,
        at: 5000,
        error: { type: "provider.rate_limited", message: "slow down" },
      }),
    )
    expect(thread.retry.value).toMatchObject({ attempt: 1, at: 5000 })
    store.handle("x", event("session.step.streamed", 3, { message_id: "a1" }))
    expect(thread.retry.value).toBeNull()
  })

  test("the retry banner of a compaction's summary request ends when the compaction is done", async () => {
    const { store, thread } = await opened()
    store.handle(
      "x",
      event("session.retry.scheduled", 1, {
        attempt: 1,
        at: 5000,
        error: { type: "provider.rate_limited", message: "slow down" },
      }),
    )
    expect(thread.retry.value).toMatchObject({ attempt: 1, at: 5000 })
    store.handle(
      "x",
      event("session.compacted", 2, {
        message_id: "c1",
        summary: "s",
        through: null,
        pruned: [],
        reason: "manual",
        tokens: { before: 10, after: 5 },
      }),
    )
    expect(thread.retry.value).toBeNull()
  })

  test("a compaction that failed after its retries ends the banner and is kept until the next step", async () => {
    const { store, thread } = await opened()
    const error = { type: "provider.server_error", message: "HTTP 503: busy" }
    store.handle("x", event("session.retry.scheduled", 1, { attempt: 4, at: 5000, error }))
    const failed = {
      type: "context.compaction_failed",
      message: "Nothing was compacted: the summary request failed: HTTP 503: busy.",
    }
    // Ephemeral: every window hears it, whoever pressed Compact now.
    store.handle("session.compaction.failed", { session_id: SID, data: { error: failed } })
    expect(thread.retry.value).toBeNull()
    expect(thread.compaction.value).toEqual(failed)
    store.handle(
      "x",
      event("session.step.started", 2, { message_id: "a1", agent: "build", model: MODEL }),
    )
    expect(thread.compaction.value).toBeNull()
  })

  test("a 422 from Compact now ends the banner in the window that asked; a 409 leaves it", async () => {
    const busy = Object.assign(new Error("busy"), { type: "session.busy" })
    const failed = Object.assign(new Error("Nothing was compacted: x."), {
      type: "context.compaction_failed",
    })
    let answer = busy
    const { store } = storeWith({
      [`/api/session/${SID}/message`]: { data: [], cursor: { previous: null }, seq: 0 },
      [`/api/session/${SID}/compact`]: () => {
        throw answer
      },
    })
    await store.openThread(SID)
    const thread = store.thread(SID)
    const error = { type: "provider.rate_limited", message: "HTTP 429: slow" }
    store.handle("x", event("session.retry.scheduled", 1, { attempt: 1, at: 5000, error }))
    await expect(store.compactNow(SID)).rejects.toBe(busy)
    expect(thread.retry.value).toMatchObject({ attempt: 1 })
    answer = failed
    await expect(store.compactNow(SID)).rejects.toBe(failed)
    expect(thread.retry.value).toBeNull()
    expect(thread.compaction.value).toEqual({ type: failed.type, message: failed.message })
  })

  test("a prompt sent while busy is queued until delivered, then moves after the turn's steps", async () => {
    const { store, thread } = await opened()
    store.handle("x", event("session.created", 1, { title: "T", directory: "/" }))
    store.handle(
      "x",
      event("session.prompted", 2, { message_id: "u1", text: "first", mode: "queue" }),
    )
    store.handle("session.status", { session_id: SID, data: { status: "busy" } })
    store.handle(
      "x",
      event("session.step.started", 3, { message_id: "a1", agent: "build", model: MODEL }),
    )
    store.handle(
      "x",
      event("session.prompted", 4, { message_id: "u2", text: "second", mode: "queue" }),
    )
    thread.markQueued("u2")
    store.handle(
      "x",
      event("session.step.started", 5, { message_id: "a2", agent: "build", model: MODEL }),
    )
    expect(thread.ids.value).toEqual(["u1", "a1", "u2", "a2"])
    expect(thread.queued.value.has("u2")).toBe(true)
    store.handle("x", event("session.input.delivered", 6, { message_id: "u2" }))
    expect(thread.ids.value).toEqual(["u1", "a1", "a2", "u2"])
    expect(thread.chunks.value.flatMap((c) => c.ids.value)).toEqual(["u1", "a1", "a2", "u2"])
    expect(thread.queued.value.has("u2")).toBe(false)
  })

  test("sendPrompt posts mode queue and marks the prompt queued only while the session is busy", async () => {
    const { store, calls } = storeWith({
      [`/api/session/${SID}/message`]: { data: [], cursor: { previous: null }, seq: 0 },
      [`/api/session/${SID}/prompt`]: (body) => ({
        data: { message_id: body.text === "a" ? "u1" : "u2" },
      }),
    })
    await store.openThread(SID)
    store.handle("x", event("session.created", 1, { title: "T", directory: "/" }))
    expect(await store.sendPrompt(SID, "a")).toBe("u1")
    expect(store.thread(SID).queued.value.size).toBe(0)
    store.handle("session.status", { session_id: SID, data: { status: "busy" } })
    expect(await store.sendPrompt(SID, "b")).toBe("u2")
    expect([...store.thread(SID).queued.value]).toEqual(["u2"])
    expect(calls.filter((c) => c.path.endsWith("/prompt")).map((c) => c.body)).toEqual([
      { text: "a", mode: "queue" },
      { text: "b", mode: "queue" },
    ])
  })
})

describe("a steered prompt", () => {
  test("keeps its mode on the message; a queued prompt carries none", async () => {
    const { store, thread } = await opened()
    store.handle("x", event("session.prompted", 1, { message_id: "u1", text: "a", mode: "queue" }))
    store.handle("x", event("session.prompted", 2, { message_id: "u2", text: "b", mode: "steer" }))
    expect(thread.message("u1").mode).toBeUndefined()
    expect(thread.message("u2").mode).toBe("steer")
  })
})

describe("cancelling a queued prompt", () => {
  test("session.input.cancelled removes the prompt, and a page read before it does not bring it back", async () => {
    const { store, thread } = await opened()
    store.handle(
      "x",
      event("session.prompted", 1, { message_id: "u1", text: "first", mode: "queue" }),
    )
    store.handle(
      "x",
      event("session.step.started", 2, { message_id: "a1", agent: "build", model: MODEL }),
    )
    store.handle(
      "x",
      event("session.prompted", 3, { message_id: "u2", text: "oops", mode: "queue" }),
    )
    thread.markQueued("u2")
    store.handle("x", event("session.input.cancelled", 4, { message_id: "u2" }))
    expect(thread.ids.value).toEqual(["u1", "a1"])
    expect(thread.chunks.value.flatMap((c) => c.ids.value)).toEqual(["u1", "a1"])
    expect(thread.queued.value.has("u2")).toBe(false)
    // A read made at seq 3 (before the cancel) still lists it: it stays gone.
    thread.merge([{ id: "u2", type: "user", text: "oops", time: { created: 3 } }], 3)
    expect(thread.message("u2")).toBe(null)
  })

  test("a prompt delivered (or cancelled) before its send's answer came back is not marked queued", async () => {
    const { store, thread } = await opened()
    store.handle("x", event("session.prompted", 1, { message_id: "u1", text: "a", mode: "queue" }))
    store.handle("x", event("session.input.delivered", 2, { message_id: "u1" }))
    thread.markQueued("u1") // the POST's answer, late
    expect(thread.queued.value.has("u1")).toBe(false)
    store.handle("x", event("session.prompted", 3, { message_id: "u2", text: "b", mode: "queue" }))
    store.handle("x", event("session.input.cancelled", 4, { message_id: "u2" }))
    thread.markQueued("u2")
    expect(thread.queued.value.has("u2")).toBe(false)
  })

  test("a page read's queued flag marks the prompt queued and stays out of the message", async () => {
    const { thread } = await opened([
      { id: "u1", type: "user", text: "first", time: { created: 1 } },
      { id: "u2", type: "user", text: "waiting", time: { created: 2 }, queued: true },
    ])
    expect([...thread.queued.value]).toEqual(["u2"])
    expect(thread.message("u2")).toEqual({
      id: "u2",
      type: "user",
      text: "waiting",
      time: { created: 2 },
    })
  })

  test("cancelPrompt sends DELETE to the prompt's route", async () => {
    const { store, calls } = storeWith({})
    await store.cancelPrompt(SID, "u/2")
    expect(calls.at(-1)).toMatchObject({
      method: "DELETE",
      path: `/api/session/${SID}/prompt/u%2F2`,
    })
  })
})

describe("copy answer", () => {
  test("the answer's Markdown is the text parts of every step of the turn, in order", async () => {
    const { thread } = await opened([
      { id: "u1", type: "user", text: "q", time: { created: 1 } },
      {
        id: "a1",
        type: "assistant",
        content: [
          { type: "reasoning", text: "hidden" },
          { type: "text", text: "First **part**." },
          { type: "tool", id: "c1", name: "read", state: { status: "completed", input: {} } },
        ],
        time: { created: 2, completed: 3 },
      },
      {
        id: "a2",
        type: "assistant",
        content: [{ type: "text", text: "```js\nx()\n```" }],
        time: { created: 4, completed: 5 },
      },
    ])
    const turn = thread.turns.value.get("a2")
    expect(turn.ids).toEqual(["a1", "a2"])
    expect(answerText(thread, turn.ids)).toBe("First **part**.\n\n```js\nx()\n```")
  })
})

describe("token usage per turn", () => {
  const assistant = (id, tokens) => ({
    id,
    type: "assistant",
    content: [],
    tokens,
    time: { created: 1, completed: 2 },
  })
  const user = (id) => ({ id, type: "user", text: id, time: { created: 1 } })

  test("a turn's steps are summed under its last assistant message; each user message starts a turn", () => {
    const messages = new Map(
      [
        user("u1"),
        assistant("a1", { input: 10, output: 3, reasoning: 1, cache_read: 0 }),
        assistant("a2", { input: 20, output: 5, reasoning: 0, cache_read: 4 }),
        user("u2"),
        assistant("a3", undefined),
        user("u3"),
        assistant("a4", { input: 7, output: 1 }),
      ].map((m) => [m.id, m]),
    )
    const usage = turnUsage([...messages.keys()], (id) => messages.get(id))
    expect([...usage.keys()]).toEqual(["a2", "a4"])
    expect(usage.get("a2")).toEqual({ input: 30, output: 8, reasoning: 1, cache_read: 4, steps: 2 })
    expect(usage.get("a4")).toEqual({ input: 7, output: 1, reasoning: 0, cache_read: 0, steps: 1 })
  })

  test("the thread's usage follows step.ended events live", async () => {
    const { store, thread } = await opened()
    store.handle("x", event("session.prompted", 1, { message_id: "u1", text: "q", mode: "queue" }))
    store.handle(
      "x",
      event("session.step.started", 2, { message_id: "a1", agent: "build", model: MODEL }),
    )
    store.handle(
      "x",
      event("session.step.ended", 3, {
        message_id: "a1",
        finish: "tool_calls",
        tokens: { input: 11, output: 7, reasoning: 0, cache_read: 0 },
      }),
    )
    store.handle(
      "x",
      event("session.step.started", 4, { message_id: "a2", agent: "build", model: MODEL }),
    )
    store.handle(
      "x",
      event("session.step.ended", 5, {
        message_id: "a2",
        finish: "stop",
        tokens: { input: 30, output: 2, reasoning: 0, cache_read: 0 },
      }),
    )
    expect(thread.usage.value.get("a2")).toEqual({
      input: 41,
      output: 9,
      reasoning: 0,
      cache_read: 0,
      steps: 2,
    })
    expect(thread.usage.value.has("a1")).toBe(false)
    // Worded as what was sent over the turn's steps, not as a context size.
    expect(usageText(thread.usage.value.get("a2"))).toBe("2 steps · 41 tokens sent · 9 out")
    expect(usageText({ input: 66123, output: 1200, reasoning: 0, cache_read: 0, steps: 3 })).toBe(
      "3 steps · 66k tokens sent · 1.2k out",
    )
    expect(usageTitle({ input: 41, output: 9, steps: 2 })).toContain(
      "41 tokens sent to the model over this turn's 2 requests",
    )
  })
})

describe("drafts", () => {
  beforeEach(() => localStorage.clear())

  test("each session keeps its own draft; clearing one leaves the others", () => {
    saveDraft("ses_a", "half a thought")
    saveDraft("ses_b", "another\nline")
    expect(loadDraft("ses_a")).toBe("half a thought")
    expect(loadDraft("ses_b")).toBe("another\nline")
    clearDraft("ses_a")
    expect(loadDraft("ses_a")).toBe("")
    expect(loadDraft("ses_b")).toBe("another\nline")
    saveDraft("ses_b", "")
    expect(localStorage.length).toBe(0) // an empty draft leaves nothing behind
  })
})

describe("prompt box keys, retry text, provider form", () => {
  test("Enter sends; Shift+Enter and an IME composition's Enter do not", () => {
    expect(isSendKey({ key: "Enter" })).toBe(true)
    expect(isSendKey({ key: "Enter", shiftKey: true })).toBe(false)
    expect(isSendKey({ key: "Enter", isComposing: true })).toBe(false)
    expect(isSendKey({ key: "Enter", keyCode: 229 })).toBe(false)
    expect(isSendKey({ key: "a" })).toBe(false)
  })

  test("the countdown rounds up and ends at retrying now", () => {
    const retry = { at: 10_000, attempt: 2, error: { message: "Rate limit reached" } }
    expect(secondsLeft(10_000, 3_001)).toBe(7)
    expect(retryText(retry, 3_001)).toBe("Retrying in 7 s (attempt 2): Rate limit reached")
    expect(retryText(retry, 10_000)).toBe("Retrying now (attempt 2): Rate limit reached")
  })

  test("the key is sent only when typed or removed: empty keeps the stored one", () => {
    const form = {
      provider: "openai-compatible",
      baseUrl: " http://127.0.0.1:9/v1 ",
      model: " m ",
      apiKey: "",
      removeKey: false,
    }
    expect(providerBody(form)).toEqual({
      provider: "openai-compatible",
      base_url: "http://127.0.0.1:9/v1",
      model: "m",
    })
    expect(providerBody({ ...form, apiKey: "sk-new" }).api_key).toBe("sk-new")
    expect(providerBody({ ...form, apiKey: "sk-new", removeKey: true }).api_key).toBeNull()
    expect("base_url" in providerBody({ ...form, provider: "groq", baseUrl: "" })).toBe(false)
  })

  test("provider.config.updated re-reads the settings (the event carries no key and little else)", async () => {
    const { store, calls } = storeWith({
      "/api/config/provider": { data: { provider: "groq", configured: true, api_key_set: true } },
    })
    store.handle("provider.config.updated", { provider: "groq", configured: true })
    await new Promise((r) => setTimeout(r, 0))
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(["GET /api/config/provider"])
    expect(store.provider.value).toMatchObject({ configured: true, api_key_set: true })
  })
})
