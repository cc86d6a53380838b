import { describe, expect, test } from "vitest"
import { isSendKey, isSteerKey } from "../src/chat/composer.js"
import { rulesBody } from "../src/chat/rules-editor.js"
import { modelBody } from "../src/chat/session-settings.js"
import { providerBody } from "../src/chat/settings-dialog.js"

const key = (fields) => ({ key: "Enter", keyCode: 13, isComposing: false, ...fields })

describe("session settings, rules and steering", () => {
  test("the picker's body: an empty model or effort goes back to the settings'", () => {
    expect(modelBody({ model: " big ", effort: "high" })).toEqual({
      model: "big",
      reasoning_effort: "high",
    })
    expect(modelBody({ model: "", effort: "" })).toEqual({ model: null, reasoning_effort: null })
  })

  test("the settings send the effort when chosen and include_reasoning only for Groq", () => {
    const form = { provider: "groq", baseUrl: "", model: "openai/gpt-oss-20b", apiKey: "" }
    expect(providerBody({ ...form, reasoningEffort: "low", includeReasoning: false })).toEqual({
      provider: "groq",
      model: "openai/gpt-oss-20b",
      reasoning_effort: "low",
      include_reasoning: false,
    })
    const other = providerBody({ ...form, provider: "openai", includeReasoning: true })
    expect("include_reasoning" in other).toBe(false)
    expect("reasoning_effort" in other).toBe(false)
  })

  test("the rules' body drops empty patterns and trims the rest", () => {
    expect(
      rulesBody([
        { tool: "shell", pattern: " git * ", action: "allow" },
        { tool: "read", pattern: "  ", action: "deny" },
      ]),
    ).toEqual({ rules: [{ tool: "shell", pattern: "git *", action: "allow" }] })
  })

  test("Enter queues and Ctrl or Cmd+Enter steers; neither inside an IME composition", () => {
    expect(isSendKey(key({}))).toBe(true)
    expect(isSteerKey(key({}))).toBe(false)
    expect(isSteerKey(key({ ctrlKey: true }))).toBe(true)
    expect(isSteerKey(key({ metaKey: true }))).toBe(true)
    expect(isSendKey(key({ ctrlKey: true }))).toBe(false)
    expect(isSteerKey(key({ ctrlKey: true, isComposing: true }))).toBe(false)
    expect(isSteerKey(key({ ctrlKey: true, shiftKey: true }))).toBe(false)
  })
})
