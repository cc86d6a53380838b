import { describe, expect, test } from "vitest"
import { meterText } from "../src/chat/context-meter.js"
import { providerBody } from "../src/chat/settings-dialog.js"

describe("the context meter", () => {
  test("says the share of a known window, with the counts on hover", () => {
    const { text, title, percent } = meterText({ used: 53_760, window: 128_000 })
    expect(text).toBe("42 % of 128k")
    expect(title).toBe("53,760 of 128,000 tokens in the last request")
    expect(percent).toBe(42)
  })

  test("says unknown window when nobody stated one", () => {
    expect(meterText({ used: 900 }).text).toBe("unknown window")
    expect(meterText(undefined).text).toBe("unknown window")
    expect(meterText({ used: 5, window: 1_048_576 }).text).toBe("0 % of 1M")
  })
})

describe("the provider settings' context window", () => {
  const form = { provider: "openai-compatible", baseUrl: "http://h/v1", model: "m" }

  test("is sent as a number when given, and left out when empty", () => {
    expect(providerBody({ ...form, contextWindow: " 32768 " }).context_window).toBe(32768)
    expect(providerBody({ ...form, contextWindow: "" })).not.toHaveProperty("context_window")
    expect(providerBody(form)).not.toHaveProperty("context_window")
  })

  test("goes to the server as typed when it is not a number (its 400 names the field)", () => {
    expect(providerBody({ ...form, contextWindow: "lots" }).context_window).toBe("lots")
  })
})
