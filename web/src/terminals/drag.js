// Drag to reorder tabs (HTML5 drag and drop): the drop side of the target tab decides before
// or after, and tabs move within their own group only (elsewhere the drop is refused).

/**
 * strip: the strip element; tabFrom(target) -> the tab an event target is in;
 * groupOf(id) -> its group key; move(id, targetId, after) reorders.
 */
export function wireDrag(strip, { tabFrom, groupOf, move }) {
  let dragged = null
  const clearMarks = () => {
    for (const el of strip.querySelectorAll(".drop-before, .drop-after"))
      el.classList.remove("drop-before", "drop-after")
  }
  const sideOf = (event, el) => {
    const rect = el.getBoundingClientRect()
    return event.clientX > rect.left + rect.width / 2
  }
  strip.addEventListener("dragstart", (event) => {
    const tab = tabFrom(event.target)
    if (!tab) return
    dragged = tab.id
    event.dataTransfer.effectAllowed = "move"
    event.dataTransfer.setData("text/plain", tab.title)
  })
  strip.addEventListener("dragover", (event) => {
    const tab = tabFrom(event.target)
    if (!dragged || !tab || groupOf(tab.id) !== groupOf(dragged)) return
    event.preventDefault()
    event.dataTransfer.dropEffect = "move"
    clearMarks()
    if (tab.id !== dragged)
      tab.tabEl.classList.add(sideOf(event, tab.tabEl) ? "drop-after" : "drop-before")
  })
  strip.addEventListener("dragleave", (event) => {
    if (!strip.contains(event.relatedTarget)) clearMarks()
  })
  strip.addEventListener("drop", (event) => {
    const tab = tabFrom(event.target)
    event.preventDefault()
    clearMarks()
    if (dragged && tab) move(dragged, tab.id, sideOf(event, tab.tabEl))
    dragged = null
  })
  strip.addEventListener("dragend", () => {
    clearMarks()
    dragged = null
  })
}
