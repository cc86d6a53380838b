import { describe, expect, it } from "vitest"
import { editPatch, numberedLines, writePatch } from "../src/chat/unified-diff.js"

describe("the one diff", () => {
  it("numbers lines from the hunk headers", () => {
    const lines = numberedLines("--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n ctx\n-old\n+new\n")
    expect(lines.map((l) => [l.kind, l.old, l.new])).toEqual([
      ["meta", null, null],
      ["meta", null, null],
      ["hunk", null, null],
      ["ctx", 3, 3],
      ["del", 4, null],
      ["add", null, 4],
    ])
  })

  it("shows an edit as its removed and added lines, a write as added lines from 1", () => {
    expect(editPatch("a\nb", "c")).toBe("-a\n-b\n+c")
    const written = numberedLines(writePatch("x\ny\n"))
    expect(written.filter((l) => l.kind === "add").map((l) => [l.new, l.text])).toEqual([
      [1, "+x"],
      [2, "+y"],
    ])
  })
})
