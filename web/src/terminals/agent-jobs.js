// @ts-check
// Agent job terminals kept out of the strip, as pure functions: which listed terminals stay
// folded behind their session's "Agent jobs" chip (every agent command's terminal, until the
// person opens it), and how a session's jobs are counted and listed. No DOM, no network.

/**
 * @typedef {object} JobInfo A terminal as the service lists it (what the jobs chip reads).
 * @property {string} id
 * @property {string | null} [group]
 * @property {string | null} [title]
 * @property {string | null} [status]
 * @property {number | null} [exit_code]
 * @property {number | string | null} [created]
 * @property {{ key?: string, command?: string } | null} [job]
 */

/** An agent's command's terminal (the PTY host names its job). @param {JobInfo | null | undefined} info */
export function isAgentJob(info) {
  return Boolean(info?.job)
}

/** Still running (not exited). @param {JobInfo} info */
export function isRunning(info) {
  return info.status !== "exited"
}

/**
 * Splits a terminal list: the agent jobs that stay folded (no tab here), and the rest for the
 * tabs. A job keeps a tab when it has one here or the person opened it (`opened`). A folded
 * job stays folded; a job neither folded nor open whose tab was closed here since the list was
 * asked for (journal clock in `changedAt` newer than `asked`) is not brought back; a folded
 * job the list no longer names is dropped unless it came since the ask.
 *
 * @param {object} input
 * @param {JobInfo[]} input.list the service's terminals
 * @param {Set<string>} input.tabs ids of the tabs open here
 * @param {Set<string>} input.opened agent jobs the person opened here (tabs to show)
 * @param {Map<string, JobInfo>} input.folded the jobs folded before this list
 * @param {Map<string, number>} input.changedAt terminal id -> journal clock of its last local change
 * @param {number} input.asked the journal clock when the list was asked for
 * @returns {{ folded: Map<string, JobInfo>, shown: JobInfo[] }}
 */
export function foldList({ list, tabs, opened, folded, changedAt, asked }) {
  const newer = (/** @type {string} */ id) => (changedAt.get(id) ?? -1) > asked
  const next = new Map()
  const shown = []
  const listed = new Set()
  for (const info of list) {
    listed.add(info.id)
    if (!isAgentJob(info) || tabs.has(info.id) || opened.has(info.id)) shown.push(info)
    else if (folded.has(info.id) || !newer(info.id)) next.set(info.id, info)
  }
  for (const [id, info] of folded) if (!listed.has(id) && newer(id)) next.set(id, info)
  return { folded: next, shown }
}

/**
 * A session's agent jobs as the chip lists them: running first, then the newest first.
 *
 * @param {JobInfo[]} infos
 * @returns {JobInfo[]}
 */
export function jobsInMenuOrder(infos) {
  return [...infos].sort((a, b) => {
    const ra = isRunning(a) ? 0 : 1
    const rb = isRunning(b) ? 0 : 1
    if (ra !== rb) return ra - rb
    return Number(b.created ?? 0) - Number(a.created ?? 0)
  })
}

/**
 * Counts for a chip: all jobs, those running, those finished.
 *
 * @param {JobInfo[]} infos
 */
export function jobCounts(infos) {
  const running = infos.filter(isRunning).length
  return { total: infos.length, running, finished: infos.length - running }
}

/** The command an agent job runs, for a person to read. @param {JobInfo} info */
export function jobCommand(info) {
  return info.job?.command || info.title || "command"
}

/** "running", "exit 0", "exit 2" or "ended". @param {JobInfo} info */
export function jobState(info) {
  if (isRunning(info)) return "running"
  const code = info.exit_code
  return code === null || code === undefined ? "ended" : `exit ${code}`
}
