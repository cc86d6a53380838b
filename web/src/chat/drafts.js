// The prompt box's draft, per session, in localStorage: it outlives reloads, service-worker
// updates and service restarts (none of them touch the page's storage). It is cleared only
// once the service accepted the prompt (202), so a failed send loses nothing.

const PREFIX = "desk.draft."

export function loadDraft(sessionId) {
  try {
    return localStorage.getItem(PREFIX + sessionId) ?? ""
  } catch {
    return "" // storage unavailable: no draft
  }
}

export function saveDraft(sessionId, text) {
  try {
    if (text) localStorage.setItem(PREFIX + sessionId, text)
    else localStorage.removeItem(PREFIX + sessionId)
  } catch {
    // storage full or unavailable: the draft lasts as long as the page
  }
}

export const clearDraft = (sessionId) => saveDraft(sessionId, "")
