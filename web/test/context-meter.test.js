import { describe, expect, test } from "vitest"
import { meterText } from "../src/chat/context-meter.js"
import { compactionFailure } from "../src/chat/error-words.js"
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

describe("a failed Compact now", () => {
  const provider = { base_url: "http://llm.example:8080/v1" }
  const failed = (cause) => ({
    type: "context.compaction_failed",
    message: `Nothing was compacted: the summary request failed: ${cause}.`,
  })

  test("names the provider's answer in plain words, its own words as the detail", () => {
    expect(compactionFailure(failed("HTTP 503: Upstream overloaded"), provider)).toEqual({
      text:
        "Nothing was compacted: the model could not write the summary. The provider at " +
        "llm.example:8080 had a server error (HTTP 503). The conversation is as it was.",
      detail: "HTTP 503: Upstream overloaded",
      settings: false,
    })
    expect(compactionFailure(failed("HTTP 429: slow down"), provider).text).toContain(
      "is limiting requests (HTTP 429)",
    )
  })

  test("offers the settings for a refused key", () => {
    const words = compactionFailure(failed("HTTP 401: bad key"), provider)
    expect(words.text).toContain("refused Desk's API key (HTTP 401)")
    expect(words.settings).toBe(true)
  })

  test("keeps the service's sentence for any other refusal", () => {
    const nothing = {
      type: "context.compaction_failed",
      message: "Nothing was compacted: there is nothing older to compact.",
    }
    expect(compactionFailure(nothing).text).toBe(nothing.message)
    const unknown = compactionFailure(failed("the socket closed"))
    expect(unknown.text).toBe(
      "Nothing was compacted: the model could not write the summary (the socket closed). " +
        "The conversation is as it was.",
    )
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
