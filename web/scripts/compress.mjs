// Writes precompressed .br and .gz siblings next to every compressible file of the build, so the
// service can send them as they are. Output is deterministic: fixed levels, no timestamps.
import { readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"

const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|webmanifest|txt|map|wasm)$/i
const MIN_BYTES = 512 // below this the headers cost more than compression saves

async function* files(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* files(path)
    else if (entry.isFile()) yield path
  }
}

async function compress(path) {
  const raw = await readFile(path)
  if (raw.length < MIN_BYTES) return 0
  const brotli = brotliCompressSync(raw, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
    },
  })
  const gzip = gzipSync(raw, { level: constants.Z_BEST_COMPRESSION })
  let written = 0
  // A sibling that is not smaller would only waste the client's time.
  if (brotli.length < raw.length) {
    await writeFile(`${path}.br`, brotli)
    written++
  }
  if (gzip.length < raw.length) {
    await writeFile(`${path}.gz`, gzip)
    written++
  }
  return written
}

const root = process.argv[2] ?? "dist"
const targets = []
for await (const path of files(root)) if (COMPRESSIBLE.test(path)) targets.push(path)
const counts = await Promise.all(targets.map(compress))
const total = counts.reduce((sum, n) => sum + n, 0)
console.log(`compress: ${total} precompressed siblings for ${targets.length} files in ${root}`)
