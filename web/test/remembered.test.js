import { afterEach, describe, expect, test } from "vitest"
import { keyboardAtLoad, rememberSession, trackKeyboard } from "../src/chat/remembered.js"

afterEach(() => {
  localStorage.clear()
  document.body.replaceChildren()
})

function page() {
  const make = (id) => {
    const part = document.body.appendChild(document.createElement("div"))
    part.id = id
    const button = part.appendChild(document.createElement("button"))
    return { part, button }
  }
  return { sidebar: make("sidebar"), chat: make("chat"), terminals: make("terminals") }
}

describe("where the keyboard goes when the page opens", () => {
  test("to the terminals when no chat session was open", () => {
    expect(keyboardAtLoad()).toBe("terminals")
  })

  test("to the prompt box when a chat session was open and the person was last in the chat", () => {
    const { sidebar, chat, terminals } = page()
    const stop = trackKeyboard({ terminals: terminals.part, chat: [sidebar.part, chat.part] })
    rememberSession("ses_1")
    expect(keyboardAtLoad()).toBe("chat") // nothing remembered of the keyboard yet
    terminals.button.focus()
    expect(keyboardAtLoad()).toBe("terminals")
    sidebar.button.focus()
    expect(keyboardAtLoad()).toBe("chat")
    terminals.button.focus()
    chat.button.focus()
    expect(keyboardAtLoad()).toBe("chat")
    stop()
  })

  test("focus outside both parts (the header, a dialog) changes nothing", () => {
    const { sidebar, chat, terminals } = page()
    const stop = trackKeyboard({ terminals: terminals.part, chat: [sidebar.part, chat.part] })
    rememberSession("ses_1")
    terminals.button.focus()
    document.body.appendChild(document.createElement("button")).focus()
    expect(keyboardAtLoad()).toBe("terminals")
    rememberSession(null)
    expect(keyboardAtLoad()).toBe("terminals")
    stop()
  })
})
