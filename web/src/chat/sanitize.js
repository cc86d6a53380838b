// The one gate between model output and the DOM. Model output is untrusted (prompt injection),
// and this page can spawn terminals through the API, so a script here is remote code
// execution. markdown-it already runs with html:false; DOMPurify is the second layer, with a
// strict allow-list, returning TrustedHTML (the page requires Trusted Types for every sink).
//
// Rules: only the tags markdown produces; no event handlers, no style, no data-/aria-
// attributes; links only to http(s)/mailto, opening outside the app with
// rel="noopener noreferrer"; classes only the highlighter's and the code language's.

import DOMPurify from "dompurify"

const ALLOWED_TAGS = [
  "a",
  "blockquote",
  "br",
  "code",
  "del",
  "em",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "hr",
  "li",
  "ol",
  "p",
  "pre",
  "s",
  "span",
  "strong",
  "table",
  "tbody",
  "td",
  "th",
  "thead",
  "tr",
  "ul",
]
const ALLOWED_ATTR = ["href", "title", "class", "start"]
const SAFE_URL = /^(?:https?:\/\/|mailto:)/i
const SAFE_CLASS = /^(?:hljs(?:-[a-z0-9_]+)*|language-[a-z0-9+#_-]{1,32}|[a-z_]+_)$/

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.hasAttribute("class")) {
    const kept = node
      .getAttribute("class")
      .split(/\s+/)
      .filter((c) => SAFE_CLASS.test(c))
    if (kept.length) node.setAttribute("class", kept.join(" "))
    else node.removeAttribute("class")
  }
  if (node.nodeName === "A") {
    const href = node.getAttribute("href")
    if (href && SAFE_URL.test(href.trim())) {
      node.setAttribute("target", "_blank")
      node.setAttribute("rel", "noopener noreferrer")
    } else {
      node.removeAttribute("href")
    }
  }
})

const CONFIG = Object.freeze({
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  FORBID_ATTR: ["style"],
  ALLOWED_URI_REGEXP: SAFE_URL,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  RETURN_TRUSTED_TYPE: true,
})

// DOMPurify makes its Trusted Types policy on first use; make it now, at load, so the one
// HTML policy name the CSP allows ("dompurify") is ours before any other script could ask.
DOMPurify.sanitize("", CONFIG)

/** Sanitised markup (TrustedHTML where the browser has Trusted Types) for an `innerHTML` sink. */
export function sanitize(html) {
  return DOMPurify.sanitize(html, CONFIG)
}
