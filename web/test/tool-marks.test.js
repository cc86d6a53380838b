import { describe, expect, it } from "vitest"
import { toolMark } from "../src/chat/waiting.js"

const part = (state) => ({ type: "tool", id: "c1", name: "shell", state })

describe("tool card marks tell the truth", () => {
  it("says waiting while the permission is asked", () => {
    expect(toolMark(part({ status: "running", input: {} }), { waiting: true })).toBe("waiting")
  })

  it("tells denied from failed and cancelled", () => {
    const denied = part({ status: "error", error: { type: "rejected", message: "no" } })
    const ruled = part({
      status: "error",
      error: { type: "x", message: "no" },
      metadata: { error_type: "permission.denied" },
    })
    const failed = part({ status: "error", error: { type: "tool", message: "boom" } })
    const cancelled = part({ status: "error", error: { type: "cancelled", message: "stop" } })
    expect(toolMark(denied)).toBe("denied")
    expect(toolMark(ruled)).toBe("denied")
    expect(toolMark(failed)).toBe("error")
    expect(toolMark(cancelled)).toBe("cancelled")
  })

  it("follows a background shell's job, not the launch's success", () => {
    const launched = part({
      status: "completed",
      content: "started",
      metadata: { background: true, status: "running" },
    })
    expect(toolMark(launched)).toBe("running")
    expect(toolMark(launched, { job: { status: "running" } })).toBe("running")
    expect(toolMark(launched, { job: { status: "cancelled" } })).toBe("cancelled")
    expect(toolMark(launched, { job: { status: "completed" } })).toBe("completed")
  })
})
