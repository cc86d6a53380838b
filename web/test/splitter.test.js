import { describe, expect, it } from "vitest"
import { clamp, shareAt } from "../src/chat/splitter.js"

describe("the splitter", () => {
  it("gives the chat the pointer's share of the area, within bounds", () => {
    expect(shareAt(500, 100, 800)).toBe(50)
    expect(shareAt(100, 100, 800)).toBe(20)
    expect(shareAt(900, 100, 800)).toBe(85)
    expect(clamp(55.4)).toBe(55)
  })
})
