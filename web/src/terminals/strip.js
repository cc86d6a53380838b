// The tab strip's DOM: one section per terminal group, each with a header naming the group, the
// group's tabs in their own tablist (named after the group), the "Agent jobs (N)" chip of a
// session's agent commands (job-menu.js), and a "+" that opens a terminal in that group (in its
// session's folder). Headers, chips and "+" show only when some terminal has a named group, so a
// strip of ungrouped terminals looks like a plain tab strip.

import { groupFolder, groupLabel } from "./groups.js"
import { createJobChip, renderJobChip } from "./job-menu.js"

let serial = 0

class Section {
  constructor(key) {
    this.key = key
    const n = ++serial
    this.root = document.createElement("div")
    this.root.className = "tab-group"
    this.label = document.createElement("span")
    this.label.className = "tab-group-label"
    this.label.id = `tab-group-label-${n}`
    this.list = document.createElement("div")
    this.list.className = "tab-group-tabs"
    this.list.setAttribute("role", "tablist")
    this.add = document.createElement("button")
    this.add.type = "button"
    this.add.className = "tab-group-add"
    this.add.textContent = "+"
    this.jobs = createJobChip()
    this.root.append(this.label, this.list, this.jobs, this.add)
  }

  update(tabEls, { headers, active, jobs }) {
    const label = groupLabel(this.key)
    if (this.label.textContent !== label) this.label.textContent = label
    const count = tabEls.length
    this.label.title = `${label}: ${count} terminal${count === 1 ? "" : "s"}`
    this.label.hidden = !headers
    this.add.hidden = !headers
    // Not "New terminal …": that name belongs to the strip's main "+" button.
    const folder = groupFolder(this.key)
    this.add.setAttribute(
      "aria-label",
      folder ? `Add a terminal to ${label}, in its folder` : `Add a terminal to ${label}`,
    )
    this.add.title = folder
      ? `New terminal in ${label}, opened in the session's folder ${folder}`
      : `New terminal in ${label}`
    renderJobChip(this.jobs, headers ? jobs : [], label)
    this.list.hidden = tabEls.length === 0
    if (headers) {
      this.list.removeAttribute("aria-label")
      this.list.setAttribute("aria-labelledby", this.label.id)
    } else {
      this.list.removeAttribute("aria-labelledby")
      this.list.setAttribute("aria-label", "Terminal tabs")
    }
    this.root.classList.toggle("active", active)
    replaceIfChanged(this.list, tabEls)
  }
}

function replaceIfChanged(parent, wanted) {
  // Only touch the DOM when the order changed (appending moves nodes and drops focus).
  const current = [...parent.children]
  if (wanted.length !== current.length || wanted.some((el, i) => el !== current[i]))
    parent.replaceChildren(...wanted)
}

export class GroupedStrip {
  constructor(element) {
    this.el = element
    this.sections = new Map() // group key -> Section
  }

  /** groups: [{ key, ids }] in display order; tabEl(id) -> element; activeGroup: a key;
   * jobsOf(key) -> the group's agent jobs (infos). */
  render(groups, { tabEl, activeGroup, jobsOf }) {
    const headers = groups.some((group) => group.key !== null)
    const wanted = []
    const keep = new Set()
    for (const group of groups) {
      let section = this.sections.get(group.key)
      if (!section) {
        section = new Section(group.key)
        this.sections.set(group.key, section)
      }
      keep.add(group.key)
      section.update(group.ids.map(tabEl).filter(Boolean), {
        headers,
        active: headers && group.key === activeGroup,
        jobs: jobsOf(group.key),
      })
      wanted.push(section.root)
    }
    for (const key of [...this.sections.keys()]) if (!keep.has(key)) this.sections.delete(key)
    replaceIfChanged(this.el, wanted)
    this.el.classList.toggle("grouped", headers)
  }

  /** The chip of group `key`, if shown. */
  chipOf(key) {
    return this.sections.get(key)?.jobs ?? null
  }

  /** The group key of the section holding `target`, or undefined outside any section. */
  groupAt(target) {
    const root = target.closest?.(".tab-group")
    for (const section of this.sections.values()) if (section.root === root) return section.key
    return undefined
  }
}
