import { describe, expect, it } from "vitest"
import { folderHint } from "../src/chat/folder.js"

describe("the folder field's hint", () => {
  it("names where a typed path leads when that is not what was typed", () => {
    const answer = { default: "/srv", path: "/home/ann/x", exists: true, typed: "~/x" }
    expect(folderHint("~/x", answer)).toEqual({ error: false, text: "Opens in /home/ann/x" })
    expect(folderHint(" ~/x ", answer)?.text).toBe("Opens in /home/ann/x")
  })

  it("says nothing for a path that is already the real folder, or for an old answer", () => {
    const answer = { default: "/srv", path: "/srv/a", exists: true, typed: "/srv/a" }
    expect(folderHint("/srv/a", answer)).toBeNull()
    expect(folderHint("/srv/ab", answer)).toBeNull() // the answer is for another path
    expect(folderHint("", answer)).toBeNull()
    expect(folderHint("/srv/a", null)).toBeNull()
  })

  it("says plainly when nothing is there", () => {
    const answer = { default: "/srv", path: "/home/ann/nope", exists: false, typed: "~/nope" }
    expect(folderHint("~/nope", answer)).toEqual({
      error: true,
      text: "Not an existing folder: /home/ann/nope",
    })
  })
})
