// The splitter between the chat and the terminals: dragged (or moved with the arrow keys) it
// sets the chat's share of the window, side by side or stacked in a narrow window; a button in
// the app header hides the terminals. Both are remembered in localStorage.

const KEY = "desk.split"
const MIN = 20
const MAX = 85

function load() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? "{}")
    return {
      share: typeof saved.share === "number" ? clamp(saved.share) : null,
      hidden: saved.hidden === true,
    }
  } catch {
    return { share: null, hidden: false }
  }
}

export const clamp = (share) => Math.round(Math.min(MAX, Math.max(MIN, share)))

/** The chat's share (percent) for a pointer at `at` along an area from `start` of `size`. */
export const shareAt = (at, start, size) => clamp(((at - start) / size) * 100)

export function mountSplitter({ body, chat, terminals, header }) {
  const state = load()
  const stacked = () => matchMedia("(max-width: 899px)").matches
  const bar = document.createElement("div")
  bar.className = "app-splitter"
  bar.tabIndex = 0
  bar.setAttribute("role", "separator")
  bar.setAttribute("aria-label", "Resize the chat and the terminals")
  bar.setAttribute("aria-valuemin", String(MIN))
  bar.setAttribute("aria-valuemax", String(MAX))
  chat.after(bar)

  const toggle = document.createElement("button")
  toggle.type = "button"
  toggle.className = "terminals-toggle"
  header.querySelector("#theme-toggle")?.before(toggle)

  const save = () => localStorage.setItem(KEY, JSON.stringify(state))
  const apply = () => {
    // The chat and the terminals share what the sidebar leaves: flex-grow side by side,
    // fr rows stacked, in the ratio share : 100 - share.
    const share = state.share ?? (stacked() ? 72 : 55)
    body.style.setProperty("--chat-grow", String(share))
    body.style.setProperty("--term-grow", String(100 - share))
    body.style.setProperty("--chat-fr", `${share}fr`)
    body.style.setProperty("--term-fr", `${100 - share}fr`)
    bar.setAttribute("aria-valuenow", String(state.share ?? (stacked() ? 72 : 55)))
    bar.setAttribute("aria-orientation", stacked() ? "horizontal" : "vertical")
    body.dataset.terminals = state.hidden ? "hidden" : "shown"
    toggle.textContent = state.hidden ? "Show terminals" : "Hide terminals"
    toggle.setAttribute("aria-pressed", String(state.hidden))
  }
  apply()
  addEventListener("resize", apply)
  toggle.addEventListener("click", () => {
    state.hidden = !state.hidden
    apply()
    save()
    dispatchEvent(new Event("resize")) // the terminals refit to the space they have again
  })

  const measure = (event) => {
    const from = chat.getBoundingClientRect()
    const to = terminals.getBoundingClientRect()
    return stacked()
      ? shareAt(event.clientY, from.top, to.bottom - from.top)
      : shareAt(event.clientX, from.left, to.right - from.left)
  }
  bar.addEventListener("pointerdown", (event) => {
    event.preventDefault()
    bar.setPointerCapture(event.pointerId)
    bar.classList.add("dragging")
  })
  bar.addEventListener("pointermove", (event) => {
    if (!bar.hasPointerCapture(event.pointerId)) return
    state.share = measure(event)
    apply()
  })
  const end = (event) => {
    if (!bar.hasPointerCapture(event.pointerId)) return
    bar.releasePointerCapture(event.pointerId)
    bar.classList.remove("dragging")
    save()
    dispatchEvent(new Event("resize"))
  }
  bar.addEventListener("pointerup", end)
  bar.addEventListener("pointercancel", end)
  bar.addEventListener("keydown", (event) => {
    const by = { ArrowLeft: -5, ArrowUp: -5, ArrowRight: 5, ArrowDown: 5 }[event.key]
    if (!by) return
    event.preventDefault()
    state.share = clamp((state.share ?? (stacked() ? 72 : 55)) + by)
    apply()
    save()
    dispatchEvent(new Event("resize"))
  })
}
