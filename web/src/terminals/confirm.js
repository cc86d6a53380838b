// The close confirmation: a modal <dialog> whose default button is Cancel.

/** Asks `message` in `dialog`; resolves true only when the user confirms. */
export function confirmClose(dialog, message) {
  if (dialog.open) return Promise.resolve(false) // one question at a time
  dialog.querySelector("#confirm-message").textContent = message
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
    // Cancel is the default: Enter keeps the terminal.
    dialog.querySelector('button[value="cancel"]').focus()
  })
}
