// @ts-check
// How the tab list follows the service, as pure functions: a terminal list from the service
// against the tabs open here (a list never undoes a tab opened or closed since it was asked
// for), and the order rules (a saved order, each group's tabs contiguous). No DOM, no network.

import { groupOrder } from "./groups.js"

/**
 * @typedef {object} TerminalInfo A terminal as the service lists it (only what ordering reads).
 * @property {string} id
 * @property {number | string | null} [created]
 * @property {string | null} [group]
 */

/**
 * @typedef {object} Reconciled
 * @property {string[]} remove tabs to close here: not listed, and not opened since the ask
 * @property {TerminalInfo[]} listed the listed terminals to show (open or update), in order
 * @property {string[]} order the strip's order: the listed ones, then tabs opened since the ask
 */

/**
 * Reconciles a terminal list with the tabs open here. A list is a snapshot of when it was
 * asked for (journal clock `asked`): a tab opened or closed here since then (its clock in
 * `changedAt` is newer) is neither closed nor brought back by it.
 *
 * @param {object} input
 * @param {TerminalInfo[]} input.list the service's terminals
 * @param {string[]} input.open ids of the tabs open here, oldest first
 * @param {string[]} input.order the order to follow (saved, or the strip's); ids it does not
 *   name follow, oldest `created` first
 * @param {Map<string, number>} input.changedAt terminal id -> journal clock of its last local change
 * @param {number} input.asked the journal clock when the list was asked for
 * @returns {Reconciled}
 */
export function reconcile({ list, open, order, changedAt, asked }) {
  const newer = (/** @type {string} */ id) => (changedAt.get(id) ?? -1) > asked
  const here = new Set(open)
  // Closed here since the list was taken: not brought back.
  const kept = list.filter((info) => here.has(info.id) || !newer(info.id))
  const known = new Set(kept.map((info) => info.id))
  const remove = open.filter((id) => !known.has(id) && !newer(id))
  // Opened here since the list was taken: kept, after the listed ones.
  const opened = open.filter((id) => !known.has(id) && newer(id))
  const listed = inOrder(kept, order)
  return { remove, listed, order: [...listed.map((info) => info.id), ...opened] }
}

/**
 * The listed terminal to show first: `wanted` when it is listed, else the first.
 *
 * @param {TerminalInfo[]} listed
 * @param {string | null} wanted
 * @returns {TerminalInfo | null}
 */
export function firstShown(listed, wanted) {
  return listed.find((info) => info.id === wanted) ?? listed[0] ?? null
}

/**
 * `infos` sorted by their place in `order`; those it does not name follow, oldest first.
 *
 * @param {TerminalInfo[]} infos
 * @param {string[]} order
 * @returns {TerminalInfo[]}
 */
export function inOrder(infos, order) {
  const rank = new Map(order.map((id, index) => [id, index]))
  return [...infos].sort((a, b) => {
    const ra = rank.get(a.id) ?? Infinity
    const rb = rank.get(b.id) ?? Infinity
    if (ra !== rb) return ra - rb
    return String(a.created ?? "").localeCompare(String(b.created ?? ""))
  })
}

/**
 * `order` with each group's ids contiguous (groups in the order of their first member).
 *
 * @param {string[]} order
 * @param {(id: string) => unknown} keyOf an id's group key
 * @returns {string[]}
 */
export function regroup(order, keyOf) {
  return groupOrder(order, keyOf).flatMap((group) => group.ids)
}

/**
 * The strip's `order` rearranged to follow an order saved by another window (ids it does not
 * name go last), each group kept contiguous.
 *
 * @param {string[]} order
 * @param {string[]} saved
 * @param {(id: string) => unknown} keyOf
 * @returns {string[]}
 */
export function followSaved(order, saved, keyOf) {
  const rank = new Map(saved.map((id, index) => [id, index]))
  const sorted = [...order].sort((a, b) => (rank.get(a) ?? Infinity) - (rank.get(b) ?? Infinity))
  return regroup(sorted, keyOf)
}
