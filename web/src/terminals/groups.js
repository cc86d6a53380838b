// Terminal groups: terminals that share the API's `group` string (a workspace, a session) are
// shown together. Terminals without one belong to the default group ("No session"), whose key
// is null.

import { signal } from "@preact/signals"

export const DEFAULT_GROUP_LABEL = "No session"

/** What the chat knows of a group named after a session: key -> {name, folder}. */
export const groupInfo = signal(new Map())

/** The folder a new terminal of group `key` opens in (its session's), or null. */
export function groupFolder(key) {
  return (key !== null && groupInfo.value.get(key)?.folder) || null
}

/** The group key of a terminal info: its non-empty `group` string, else null (the default). */
export function groupKeyOf(info) {
  const group = info?.group
  return typeof group === "string" && group !== "" ? group : null
}

export function groupLabel(key) {
  if (key === null || key === undefined) return DEFAULT_GROUP_LABEL
  return groupInfo.value.get(key)?.name || key
}

/**
 * `order` split into groups, each group's ids contiguous: groups come in the order of their
 * first member, members keep their relative order. Returns [{ key, ids }].
 */
export function groupOrder(order, keyOf) {
  const groups = new Map()
  for (const id of order) {
    const key = keyOf(id)
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key).push(id)
  }
  return [...groups].map(([key, ids]) => ({ key, ids }))
}
