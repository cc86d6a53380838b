import { Terminal } from "@xterm/xterm"
import "@xterm/xterm/css/xterm.css"
console.log(Terminal)
