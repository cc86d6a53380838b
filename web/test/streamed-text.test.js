import { describe, expect, it } from "vitest"
import { signal } from "@preact/signals"
import { UPDATE } from "../src/chat/apply.js"
import { dropSaved } from "../src/chat/store.js"

const message = () => ({ id: "m", type: "assistant", content: [], time: { created: 1 } })
const streamed = (part, text) => ({ data: { message_id: "m", part, text }, created: 2 })

describe("text saved while it streams", () => {
  it("grows one partial part that the block's event replaces", () => {
    const m = message()
    UPDATE["session.step.streamed"](m, streamed("text", "Hel"))
    UPDATE["session.step.streamed"](m, streamed("text", "lo"))
    expect(m.content).toEqual([{ type: "text", text: "Hello", partial: true }])
    UPDATE["session.text"](m, { data: { message_id: "m", text: "Hello!" }, created: 3 })
    expect(m.content).toEqual([{ type: "text", text: "Hello!" }])
  })

  it("starts a new part after a completed block", () => {
    const m = message()
    UPDATE["session.text"](m, { data: { message_id: "m", text: "One." }, created: 3 })
    UPDATE["session.step.streamed"](m, streamed("text", "Tw"))
    expect(m.content).toEqual([
      { type: "text", text: "One." },
      { type: "text", text: "Tw", partial: true },
    ])
  })

  it("takes the saved text off the deltas the page holds", () => {
    const live = signal("Hello world")
    dropSaved(live, "Hello ")
    expect(live.value).toBe("world")
    const joined = signal("lo world") // the page joined mid-save: it saw only the save's end
    dropSaved(joined, "Hello ")
    expect(joined.value).toBe("world")
    const ahead = signal("")
    dropSaved(ahead, "Hello")
    expect(ahead.value).toBe("")
  })
})
