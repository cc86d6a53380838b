// Tab shortcuts chosen not to collide with terminal programs: Ctrl+Shift+letter and
// Ctrl+PageUp/PageDown reach no shell, editor or pager as distinct keys.

export function shortcutFor(event) {
  if (event.type !== "keydown" || event.altKey || event.metaKey || !event.ctrlKey) return null
  const key = event.key
  if (event.shiftKey) {
    switch (key.toLowerCase()) {
      case "t":
        return "new"
      case "w":
        return "close"
      case "f":
        return "search"
      case "c":
        return "copy"
      case "v":
        return "paste" // the browser's own paste event reaches xterm's textarea
      case "g":
        return "next-group"
      case "e":
        return "rename" // F2 belongs to terminal programs (mc, htop) while the terminal has focus
      case "s":
        return "focus-strip" // Tab stays inside a terminal (shells complete with it)
      case "pagedown":
        return "move-right"
      case "pageup":
        return "move-left"
      default:
        return null
    }
  }
  if (key === "PageDown") return "next"
  if (key === "PageUp") return "previous"
  return null
}
