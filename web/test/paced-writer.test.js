import { describe, expect, test } from "vitest"
import { PIECE_MS, PacedWriter } from "../src/terminals/paced-writer.js"

/** xterm.js as the writer sees it: writes are parsed when the test says so, in order. */
function fakeTerm() {
  const handed = []
  return {
    handed,
    write(bytes, done) {
      handed.push({ bytes, done, parsed: false })
    },
    parseAll() {
      for (const item of handed) {
        if (!item.parsed) {
          item.parsed = true
          item.done()
        }
      }
    },
    text() {
      return handed.map((item) => item.bytes).join("")
    },
  }
}

/** requestIdleCallback that runs only when the test says the page is idle. */
function fakeIdle() {
  const waiting = new Map()
  let next = 1
  return {
    waiting,
    timers: [],
    request(callback) {
      waiting.set(next, callback)
      return next++
    },
    later(ms, callback) {
      const handle = next++
      this.timers.push({ handle, ms, callback })
      waiting.set(handle, () => {}) // counted as waiting; fired by runTimers
      return handle
    },
    runTimers() {
      const timers = this.timers
      this.timers = []
      for (const { handle, callback } of timers) {
        if (waiting.delete(handle)) callback()
      }
    },
    cancel(handle) {
      waiting.delete(handle)
    },
    runIdle() {
      const timerHandles = new Set(this.timers.map((t) => t.handle))
      const callbacks = [...waiting.entries()].filter(([handle]) => !timerHandles.has(handle))
      for (const [handle] of callbacks) waiting.delete(handle)
      for (const [, callback] of callbacks) callback()
    },
  }
}

function setUp(paced) {
  const term = fakeTerm()
  const idle = fakeIdle()
  const state = { paced }
  const writer = new PacedWriter(term, () => state.paced, { idle })
  const acked = []
  const write = (text) => writer.write(text, () => acked.push(text))
  return { term, idle, state, writer, acked, write }
}

describe("PacedWriter", () => {
  test("the visible tab's output goes straight to xterm.js", () => {
    const { term, idle, write } = setUp(false)
    write("a")
    write("b")
    expect(term.text()).toBe("ab")
    expect(idle.waiting.size).toBe(0)
  })

  test("a background tab hands over one piece per idle period, each after the last is parsed", () => {
    const { term, idle, write, acked } = setUp(true)
    write("a")
    write("b")
    write("c")
    expect(term.text()).toBe("")
    idle.runIdle()
    expect(term.text()).toBe("a")
    // The page is idle again, but "a" is not parsed yet: nothing more is handed over.
    idle.runIdle()
    expect(term.text()).toBe("a")
    term.parseAll()
    expect(acked).toEqual(["a"])
    idle.runIdle()
    expect(term.text()).toBe("ab")
    term.parseAll()
    idle.runIdle()
    term.parseAll()
    expect(term.text()).toBe("abc")
    expect(acked).toEqual(["a", "b", "c"])
    expect(idle.waiting.size).toBe(0)
  })

  test("coming into view hands over the rest at once, in order, behind the piece in flight", () => {
    const { term, idle, state, writer, write, acked } = setUp(true)
    write("a")
    write("b")
    idle.runIdle()
    write("c")
    state.paced = false
    writer.flush()
    write("d")
    expect(term.text()).toBe("abcd")
    expect(idle.waiting.size).toBe(0)
    term.parseAll()
    expect(acked).toEqual(["a", "b", "c", "d"])
  })

  test("a write while pieces wait joins the queue even once the tab is visible", () => {
    const { term, idle, state, write } = setUp(true)
    write("a")
    write("b")
    state.paced = false
    write("c") // "a" and "b" have not been handed over: "c" must not overtake them
    expect(term.text()).toBe("abc")
    expect(idle.waiting.size).toBe(0)
  })

  test("a big piece is cut to what xterm.js parses in a few ms, and acked once, whole", () => {
    const term = fakeTerm()
    const idle = fakeIdle()
    let clock = 0
    const writer = new PacedWriter(term, () => true, { idle, now: () => clock })
    const bytes = Uint8Array.from({ length: 20000 }, (_, i) => i % 251)
    const acked = []
    writer.write(bytes, () => acked.push(bytes.length))
    const sizes = []
    while (idle.waiting.size) {
      idle.runIdle()
      const item = term.handed.at(-1)
      sizes.push(item.bytes.length)
      clock += item.bytes.length / 2048 // xterm.js parses 2 KiB a millisecond here
      term.parseAll()
    }
    // The first piece is a guess; then PIECE_MS of parsing each.
    expect(sizes[0]).toBe(4096)
    expect(sizes.slice(1, -1).every((size) => size === 2048 * PIECE_MS)).toBe(true)
    expect(acked).toEqual([20000])
    const joined = new Uint8Array(term.handed.flatMap((item) => [...item.bytes]))
    expect(joined).toEqual(bytes)
  })

  test("while the user types, a background tab waits for a pause, or at most a second", () => {
    const term = fakeTerm()
    const idle = fakeIdle()
    let clock = 10_000
    let lastKey = clock
    const writer = new PacedWriter(term, () => true, {
      idle,
      now: () => clock,
      typingAgo: () => clock - lastKey,
    })
    writer.write("a", () => {})
    writer.write("b", () => {})
    idle.runIdle()
    expect(term.text()).toBe("") // a key 0 ms ago: wait
    expect(idle.timers.map((t) => t.ms)).toEqual([300])
    clock += 300 // a pause in the typing
    idle.runTimers()
    idle.runIdle()
    expect(term.text()).toBe("a")
    term.parseAll()
    // Typing again, without a pause: "b" waits, but not past a second.
    lastKey = clock
    for (let ms = 0; ms < 1000; ms += 200) {
      idle.runIdle()
      expect(term.text()).toBe("a")
      clock += 200
      lastKey = clock
      idle.runTimers()
    }
    idle.runIdle()
    expect(term.text()).toBe("ab")
    expect(idle.timers).toEqual([])
  })

  test("a closed writer hands over nothing and leaves no idle callback", () => {
    const { term, idle, writer, write } = setUp(true)
    write("a")
    writer.close()
    idle.runIdle()
    write("b")
    expect(term.text()).toBe("")
    expect(idle.waiting.size).toBe(0)
  })
})
