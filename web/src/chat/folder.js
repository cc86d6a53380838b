// The working folder of a new session: typed, picked from recent ones, or (in the desktop
// window) chosen in the native folder dialog that desktop/shell/window.py exposes to pywebview.

/** True when the window offers a native folder dialog. */
export function nativeFolderDialog() {
  return typeof window.pywebview?.api?.pick_folder === "function"
}

/** The chosen folder, or null when cancelled or unavailable. */
export async function pickFolder(start) {
  if (!nativeFolderDialog()) return null
  try {
    const chosen = await window.pywebview.api.pick_folder(start || null)
    return typeof chosen === "string" && chosen ? chosen : null
  } catch (error) {
    console.warn("Desk: folder dialog failed", error)
    return null
  }
}
