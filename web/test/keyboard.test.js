import { describe, expect, it } from "vitest"
import { chatShortcut } from "../src/chat/keyboard.js"

const key = (init) => ({
  type: "keydown",
  altKey: false,
  shiftKey: false,
  ctrlKey: false,
  metaKey: false,
  ...init,
})

describe("chat shortcuts", () => {
  it("maps Alt+N, Alt+P, Alt+arrows and F1", () => {
    expect(chatShortcut(key({ altKey: true, code: "KeyN", key: "n" }))).toBe("new-session")
    expect(chatShortcut(key({ altKey: true, code: "KeyP", key: "p" }))).toBe("focus-prompt")
    expect(chatShortcut(key({ altKey: true, key: "ArrowUp" }))).toBe("previous-session")
    expect(chatShortcut(key({ altKey: true, key: "ArrowDown" }))).toBe("next-session")
    expect(chatShortcut(key({ key: "F1" }))).toBe("help")
  })

  it("leaves Ctrl combinations and plain letters to the terminals and the page", () => {
    expect(chatShortcut(key({ ctrlKey: true, altKey: true, code: "KeyN" }))).toBe(null)
    expect(chatShortcut(key({ code: "KeyN", key: "n" }))).toBe(null)
  })
})
