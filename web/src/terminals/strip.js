// The tab strip's DOM: one section per terminal group, each with a header naming the group, the
// group's tabs in their own tablist (named after the group), and a "+" that opens a terminal in
// that group. Headers and "+" show only when some terminal has a named group, so a strip of
// ungrouped terminals looks like a plain tab strip.

import { groupLabel } from "./groups.js"

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
    this.root.append(this.label, this.list, this.add)
  }

  update(tabEls, { headers, active }) {
    const label = groupLabel(this.key)
    if (this.label.textContent !== label) this.label.textContent = label
    const count = tabEls.length
    this.label.title = `${label}: ${count} terminal${count === 1 ? "" : "s"}`
    this.label.hidden = !headers
    this.add.hidden = !headers
    // Not "New terminal …": that name belongs to the strip's main "+" button.
    this.add.setAttribute("aria-label", `Add a terminal to ${label}`)
    this.add.title = `New terminal in ${label}`
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

  /** groups: [{ key, ids }] in display order; tabEl(id) -> element; activeGroup: a key. */
  render(groups, { tabEl, activeGroup }) {
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
      })
      wanted.push(section.root)
    }
    for (const key of [...this.sections.keys()]) if (!keep.has(key)) this.sections.delete(key)
    replaceIfChanged(this.el, wanted)
    this.el.classList.toggle("grouped", headers)
  }

  /** The group key of the section holding `target`, or undefined outside any section. */
  groupAt(target) {
    const root = target.closest?.(".tab-group")
    for (const section of this.sections.values()) if (section.root === root) return section.key
    return undefined
  }
}
