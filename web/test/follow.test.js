import { describe, expect, it } from "vitest"
import { atBottom, unreadAfter } from "../src/chat/follow.js"

describe("following the person", () => {
  it("counts the messages after the newest one seen at the bottom", () => {
    expect(unreadAfter(["a", "b", "c", "d"], "b")).toBe(2)
    expect(unreadAfter(["a", "b"], "b")).toBe(0)
    expect(unreadAfter(["a", "b"], null)).toBe(0)
    expect(unreadAfter(["a", "b"], "gone")).toBe(0)
  })

  it("is at the bottom within the margin only", () => {
    expect(atBottom({ scrollHeight: 1000, scrollTop: 570, clientHeight: 400 })).toBe(true)
    expect(atBottom({ scrollHeight: 1000, scrollTop: 500, clientHeight: 400 })).toBe(false)
  })
})
