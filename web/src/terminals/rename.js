// Renaming a tab in place: an input over its title; Enter or leaving the field commits,
// Escape cancels, and the keyboard goes back to the terminal either way.

/** Opens the rename field on `tab`; `commit(id, title)` saves a committed name. */
export function startRename(tab, commit) {
  if (tab.tabEl.querySelector("input")) return
  const input = document.createElement("input")
  input.className = "tab-title-input"
  input.value = tab.title
  input.setAttribute("aria-label", "Terminal name")
  tab.tabEl.draggable = false
  tab.titleEl.hidden = true
  tab.titleEl.after(input)
  input.focus()
  input.select()
  let done = false
  const finish = (save) => {
    if (done) return
    done = true
    input.remove()
    tab.titleEl.hidden = false
    tab.tabEl.draggable = true
    if (save) commit(tab.id, input.value)
    tab.focus()
  }
  input.addEventListener("keydown", (event) => {
    event.stopPropagation()
    if (event.key !== "Enter" && event.key !== "Escape") return
    // Focus moves to the terminal inside this handler: without preventDefault the key's
    // keypress would follow it there and the Enter would reach the shell.
    event.preventDefault()
    finish(event.key === "Enter")
  })
  input.addEventListener("blur", () => finish(true))
}
