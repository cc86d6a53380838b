// The terminal area's questions: a modal <dialog> whose default button is Cancel, asking before
// a terminal is closed or an agent's command is run again (showing the exact command).

/**
 * Asks in `dialog`; resolves true only when the person confirms. `title` and `accept` name the
 * question and its button; `command`, when given, is shown verbatim under the message.
 */
export function confirmAsk(dialog, { title, message, accept, command = null }) {
  if (dialog.open) return Promise.resolve(false) // one question at a time
  dialog.querySelector("#confirm-title").textContent = title
  dialog.querySelector("#confirm-message").textContent = message
  dialog.querySelector("#confirm-accept").textContent = accept
  let code = dialog.querySelector(".confirm-command")
  if (command !== null) {
    if (!code) {
      code = document.createElement("pre")
      code.className = "confirm-command"
      dialog.querySelector("#confirm-message").after(code)
    }
    code.textContent = command
  } else code?.remove()
  return new Promise((resolve) => {
    const onClose = () => {
      // A close event queued by an earlier opening can arrive after this one began.
      if (dialog.open) return
      dialog.removeEventListener("close", onClose)
      resolve(dialog.returnValue === "confirm")
    }
    dialog.returnValue = ""
    dialog.showModal()
    dialog.addEventListener("close", onClose)
    // Cancel is the default: Enter keeps things as they are.
    dialog.querySelector('button[value="cancel"]').focus()
  })
}

/** Asks `message` before a terminal is closed; resolves true only when the user confirms. */
export function confirmClose(dialog, message) {
  return confirmAsk(dialog, { title: "Close terminal?", message, accept: "Close terminal" })
}
