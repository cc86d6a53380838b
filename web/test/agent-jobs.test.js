import { describe, expect, test } from "vitest"
import { foldList, jobCounts, jobState, jobsInMenuOrder } from "../src/terminals/agent-jobs.js"
import { composeTitle, WAITING_PREFIX } from "../src/title.js"

const shell = (id) => ({ id, group: null, status: "running" })
const job = (id, { status = "running", exit_code = null, created = 0, group = "s1" } = {}) => ({
  id,
  group,
  status,
  exit_code,
  created,
  job: { key: `job:${group}:${id}`, command: `echo ${id}` },
})

/** A journal like the store's: ids noted in turn, the clock when the list was asked for. */
function journal(before, after = []) {
  const changedAt = new Map()
  let clock = 0
  for (const id of before) changedAt.set(id, ++clock)
  const asked = clock
  for (const id of after) changedAt.set(id, ++clock)
  return { changedAt, asked }
}

const ids = (infos) => infos.map((info) => info.id)

describe("foldList", () => {
  test("agent jobs fold out of the strip; a person's terminals and opened jobs get tabs", () => {
    const { folded, shown } = foldList({
      list: [shell("a"), job("j1"), job("j2"), job("j3")],
      tabs: new Set(["a", "j3"]),
      opened: new Set(["j2"]),
      folded: new Map(),
      ...journal([]),
    })
    expect([...folded.keys()]).toEqual(["j1"])
    expect(ids(shown)).toEqual(["a", "j2", "j3"])
  })

  test("a job whose tab was closed here since the ask is not folded back", () => {
    const { folded, shown } = foldList({
      list: [job("j1"), job("j2")],
      tabs: new Set(),
      opened: new Set(),
      folded: new Map(),
      ...journal([], ["j1"]),
    })
    expect([...folded.keys()]).toEqual(["j2"])
    expect(shown).toEqual([])
  })

  test("a job folded here since the ask stays folded, with the list's newer info", () => {
    const { folded } = foldList({
      list: [job("j1", { status: "exited", exit_code: 0 })],
      tabs: new Set(),
      opened: new Set(),
      folded: new Map([["j1", job("j1")]]),
      ...journal([], ["j1"]),
    })
    expect(folded.get("j1").status).toBe("exited")
  })

  test("a folded job the list lacks goes, unless it came after the ask", () => {
    const { folded } = foldList({
      list: [],
      tabs: new Set(),
      opened: new Set(),
      folded: new Map([
        ["old", job("old")],
        ["new", job("new")],
      ]),
      ...journal(["old"], ["new"]),
    })
    expect([...folded.keys()]).toEqual(["new"])
  })
})

describe("a session's jobs", () => {
  test("running first, then the newest; counted; their state in words", () => {
    const infos = [
      job("a", { status: "exited", exit_code: 0, created: 1 }),
      job("b", { created: 2 }),
      job("c", { status: "exited", exit_code: 2, created: 3 }),
      job("d", { status: "exited", created: 4 }),
    ]
    expect(ids(jobsInMenuOrder(infos))).toEqual(["b", "d", "c", "a"])
    expect(jobCounts(infos)).toEqual({ total: 4, running: 1, finished: 3 })
    expect(infos.map(jobState)).toEqual(["exit 0", "running", "exit 2", "ended"])
  })
})

describe("the window title", () => {
  const parts = { session: "Payments API", terminal: "bash", waiting: 0, background: false }

  test("names the session while the person chats and the tab while they use the terminals", () => {
    expect(composeTitle({ ...parts, area: "chat" })).toBe("Payments API — Desk")
    expect(composeTitle({ ...parts, area: null })).toBe("Payments API — Desk")
    expect(composeTitle({ ...parts, area: "terminals" })).toBe("bash — Desk")
  })

  test("falls back to what there is", () => {
    expect(composeTitle({ ...parts, session: null, area: "chat" })).toBe("bash — Desk")
    expect(composeTitle({ ...parts, terminal: null, area: "terminals" })).toBe(
      "Payments API — Desk",
    )
    expect(composeTitle({ ...parts, session: null, terminal: null, area: null })).toBe("Desk")
  })

  test("says a call waits only while the window is in the background", () => {
    expect(composeTitle({ ...parts, area: "chat", waiting: 1, background: true })).toBe(
      `${WAITING_PREFIX}Payments API — Desk`,
    )
    expect(composeTitle({ ...parts, area: "chat", waiting: 1 })).toBe("Payments API — Desk")
    expect(composeTitle({ ...parts, area: "chat", background: true })).toBe("Payments API — Desk")
  })
})
