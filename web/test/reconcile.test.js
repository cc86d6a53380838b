import { describe, expect, test } from "vitest"
import { firstShown, followSaved, inOrder, reconcile, regroup } from "../src/terminals/reconcile.js"

const info = (id, created = 0, group = null) => ({ id, created, group })

/** A journal like the store's: ids noted in turn, the clock when the list was asked for. */
function journal(before, after = []) {
  const changedAt = new Map()
  let clock = 0
  for (const id of before) changedAt.set(id, ++clock)
  const asked = clock
  for (const id of after) changedAt.set(id, ++clock)
  return { changedAt, asked }
}

describe("reconcile", () => {
  test("a first list opens every terminal, in the saved order, unnamed ones oldest first", () => {
    const plan = reconcile({
      list: [info("c", 3), info("a", 1), info("b", 2), info("d", 0)],
      open: [],
      order: ["b", "c"],
      ...journal([]),
    })
    expect(plan.remove).toEqual([])
    expect(plan.listed.map((i) => i.id)).toEqual(["b", "c", "d", "a"])
    expect(plan.order).toEqual(["b", "c", "d", "a"])
  })

  test("a tab open here that the list lacks is closed when it is older than the ask", () => {
    const plan = reconcile({
      list: [info("a")],
      open: ["a", "gone"],
      order: ["a", "gone"],
      ...journal(["a", "gone"]),
    })
    expect(plan.remove).toEqual(["gone"])
    expect(plan.order).toEqual(["a"])
  })

  test("a tab opened here after the list was asked for is kept, after the listed ones", () => {
    const plan = reconcile({
      list: [info("a"), info("b")],
      open: ["new", "a", "b"],
      order: [],
      ...journal(["a", "b"], ["new"]),
    })
    expect(plan.remove).toEqual([])
    expect(plan.order).toEqual(["a", "b", "new"])
  })

  test("a tab closed here after the list was asked for is not brought back", () => {
    const plan = reconcile({
      list: [info("a"), info("closed")],
      open: ["a"],
      order: ["a", "closed"],
      ...journal(["a", "closed"], ["closed"]),
    })
    expect(plan.listed.map((i) => i.id)).toEqual(["a"])
    expect(plan.order).toEqual(["a"])
  })

  test("a listed terminal open here is kept whatever the journal says", () => {
    const plan = reconcile({
      list: [info("a")],
      open: ["a"],
      order: [],
      ...journal([], ["a"]),
    })
    expect(plan.remove).toEqual([])
    expect(plan.listed.map((i) => i.id)).toEqual(["a"])
  })

  test("the input lists are not changed", () => {
    const list = [info("b", 2), info("a", 1)]
    const open = ["x"]
    reconcile({ list, open, order: [], ...journal(["x"]) })
    expect(list.map((i) => i.id)).toEqual(["b", "a"])
    expect(open).toEqual(["x"])
  })
})

describe("order rules", () => {
  test("the wanted tab is shown first when listed, else the first listed", () => {
    const listed = [info("a"), info("b")]
    expect(firstShown(listed, "b")?.id).toBe("b")
    expect(firstShown(listed, "zz")?.id).toBe("a")
    expect(firstShown([], "a")).toBeNull()
  })

  test("terminals with the same rank sort by creation time", () => {
    expect(inOrder([info("late", 20), info("early", 10)], []).map((i) => i.id)).toEqual([
      "early",
      "late",
    ])
  })

  test("regroup keeps each group contiguous, groups in order of their first member", () => {
    const key = { a: "x", b: null, c: "x", d: null }
    expect(regroup(["a", "b", "c", "d"], (id) => key[id])).toEqual(["a", "c", "b", "d"])
  })

  test("another window's saved order is followed; ids it does not name go last", () => {
    const key = () => null
    expect(followSaved(["a", "b", "c"], ["c", "a"], key)).toEqual(["c", "a", "b"])
  })
})
