import { describe, expect, test } from "vitest"
import { signal } from "@preact/signals"
import {
  applyCheckpointEvent,
  isExpired,
  noteExpired,
  revertPending,
  summary,
  turnChanges,
} from "../src/chat/changes.js"
import { lineKind } from "../src/chat/diff-view.js"
import { checkpointError } from "../src/chat/error-words.js"

const file = (path, additions, deletions) => ({ path, status: "modified", additions, deletions })
const tree = "a".repeat(40)

function history(messages) {
  const byId = new Map(messages.map((m) => [m.id, m]))
  return [messages.map((m) => m.id), (id) => byId.get(id)]
}

describe("turn changes", () => {
  test("a turn's steps add up under its last assistant message, a file counted once", () => {
    const [ids, message] = history([
      { id: "u1", type: "user" },
      {
        id: "a1",
        type: "assistant",
        checkpoint: { start: tree, end: tree, files: [file("x", 2, 1)] },
      },
      {
        id: "a2",
        type: "assistant",
        checkpoint: { start: tree, end: tree, files: [file("x", 1, 0), file("y", 3, 3)] },
      },
      { id: "u2", type: "user" },
      { id: "a3", type: "assistant" },
    ])
    const turns = turnChanges(ids, message)
    expect([...turns.keys()]).toEqual(["a2"])
    const turn = turns.get("a2")
    expect([turn.user, turn.files.size, turn.additions, turn.deletions]).toEqual(["u1", 2, 6, 4])
    expect(summary(2, 6, 4)).toBe("2 files changed +6 −4")
    expect(summary(1, 0, 0)).toBe("1 file changed +0 −0")
  })

  test("a revert can be undone until a prompt follows the reverted messages", () => {
    const reverted = [
      { id: "u1", type: "user" },
      { id: "u2", type: "user", reverted: true },
      { id: "a2", type: "assistant", reverted: true },
    ]
    expect(revertPending(...history(reverted))).toBe(true)
    expect(revertPending(...history([...reverted, { id: "u3", type: "user" }]))).toBe(false)
    expect(revertPending(...history(reverted.slice(0, 1)))).toBe(false)
  })
})

describe("the revert rules of the projection, for loaded messages", () => {
  function thread(messages) {
    return {
      seq: 10,
      state: signal("ready"),
      ids: signal(messages.map((m) => m.id)),
      messages: new Map(messages.map((m) => [m.id, signal(m)])),
      known: new Map(),
    }
  }
  const event = (type, seq, data = {}) => ({ type, seq, data })
  const flags = (t) => t.ids.value.map((id) => Boolean(t.messages.get(id).value.reverted))

  test("a revert marks from its message on, an unrevert unmarks only what it marked", () => {
    const t = thread([
      { id: "u1", type: "user" },
      { id: "u2", type: "user", reverted: true },
      { id: "u3", type: "user" },
    ])
    applyCheckpointEvent(t, event("session.reverted", 11, { message_id: "u1" }))
    t.seq = 11
    expect(flags(t)).toEqual([true, true, true])
    applyCheckpointEvent(t, event("session.reverted", 11, { message_id: "u1" })) // replayed
    applyCheckpointEvent(t, event("session.unreverted", 12))
    expect(flags(t)).toEqual([false, true, false])
    expect(t.known.get("u1")).toBe(12)
  })
})

test("patch lines are classed by kind", () => {
  expect(["@@ -1 +1 @@", "+a", "-b", " c", "+++ b/x", "diff --git a/x b/x"].map(lineKind)).toEqual([
    "hunk",
    "add",
    "del",
    "ctx",
    "meta",
    "meta",
  ])
})

describe("a turn older than the snapshots kept", () => {
  const expired = {
    type: "checkpoint.expired",
    message: "Checkpoints are kept for the last 100 turns of a session: this one is older.",
  }

  test("is said in plain words; any other refusal keeps the service's sentence", () => {
    expect(checkpointError(expired, "undo")).toBe(
      "This turn is too old to undo: Desk keeps the last 100 turns' snapshots.",
    )
    expect(checkpointError({ ...expired, message: "the last 7 turns" }, "show its changes")).toBe(
      "This turn is too old to show its changes: Desk keeps the last 7 turns' snapshots.",
    )
    expect(checkpointError({ type: "session.busy", message: "A turn runs." }, "undo")).toBe(
      "A turn runs.",
    )
  })

  test("is known for the refused turn and every earlier one, from a 409 only", () => {
    const thread = { ids: signal(["u1", "a1", "u2", "a2", "u3", "a3"]) }
    noteExpired(thread, "u2", { type: "session.busy", message: "" })
    expect(isExpired(thread, "u2")).toBe(false)
    noteExpired(thread, "u2", expired)
    expect(["u1", "u2", "u3"].map((id) => isExpired(thread, id))).toEqual([true, true, false])
    noteExpired(thread, "u1", expired) // an earlier one changes nothing
    expect(isExpired(thread, "u2")).toBe(true)
    noteExpired(thread, "u3", expired)
    expect(isExpired(thread, "u3")).toBe(true)
  })
})
