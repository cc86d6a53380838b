// htm bound to Preact: tagged templates instead of JSX, so the build needs no transform.
import { h } from "preact"
import htm from "htm"

export const html = htm.bind(h)
