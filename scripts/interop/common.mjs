// What gen.mjs and read.mjs share: the versions of the tools, file
// helpers.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

import { decompress as zstdDecompress } from "fzstd";

const require = createRequire(import.meta.url);

// pkgVersion returns the version of the installed npm package name, read
// from its own package.json (the lock file pins it).
export function pkgVersion(name) {
  let dir = dirname(require.resolve(name));
  for (;;) {
    try {
      const p = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (p.name === name) return p.version;
    } catch {
      // no package.json at this level: go up
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json of ${name}`);
    dir = up;
  }
}

// duckdbVersion returns the version of the DuckDB library the bindings
// hold (select version()) with the npm package's version.
export async function duckdbVersion(conn) {
  const r = await conn.runAndReadAll("SELECT version() AS v");
  return `${r.getRowObjects()[0].v} (@duckdb/node-api ${pkgVersion("@duckdb/node-api")})`;
}

// die prints msg to stderr and ends the process with status 1.
export function die(msg) {
  process.stderr.write(`${msg}\n`);
  process.exit(1);
}

// registerArrowCodecs gives Apache Arrow JS the codecs of compressed IPC
// bodies, as its users do: fzstd for zstd, lz4Frame for LZ4 frames.
export function registerArrowCodecs(arrow) {
  arrow.compressionRegistry.set(arrow.CompressionType.ZSTD, { decode: (b) => zstdDecompress(b) });
  arrow.compressionRegistry.set(arrow.CompressionType.LZ4_FRAME, { decode: lz4Frame });
}

// lz4Frame decodes one LZ4 frame (the LZ4 Frame Format 1.6.x: magic,
// FLG, BD, optional content size and dictionary id, header checksum, then
// blocks of a little-endian size whose top bit marks a stored block, each
// optionally followed by a checksum, an end mark of 0 and an optional
// content checksum; checksums are skipped, not checked). Blocks are
// decoded into one output so that linked blocks may refer back into
// earlier ones. No npm package decodes the frames every writer makes:
// lz4js 0.2.0 ran out of memory on polars' frames.
export function lz4Frame(b) {
  const u32 = (i) => (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
  if (u32(0) !== 0x184d2204) throw new Error("lz4: not an LZ4 frame");
  const flg = b[4];
  let i = 7 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0);
  const out = [];
  for (;;) {
    if (i + 4 > b.length) throw new Error("lz4: truncated frame");
    const size = u32(i);
    i += 4;
    if (size === 0) break;
    const n = size & 0x7fffffff;
    if (i + n > b.length) throw new Error("lz4: truncated block");
    if (size & 0x80000000) {
      for (let k = 0; k < n; k++) out.push(b[i + k]);
    } else {
      lz4Block(b, i, i + n, out);
    }
    i += n + (flg & 0x10 ? 4 : 0);
  }
  return Uint8Array.from(out);
}

// lz4Block appends the decoded LZ4 block b[i:end] to out.
function lz4Block(b, i, end, out) {
  const length = (len) => {
    if (len === 15) {
      let x;
      do {
        x = b[i++];
        len += x;
      } while (x === 255 && i < end);
    }
    return len;
  };
  while (i < end) {
    const token = b[i++];
    const lit = length(token >> 4);
    for (let k = 0; k < lit; k++) out.push(b[i++]);
    if (i >= end) break; // the last sequence has literals only
    const off = b[i] | (b[i + 1] << 8);
    i += 2;
    if (off === 0 || off > out.length) throw new Error("lz4: bad match offset");
    const m = length(token & 15) + 4;
    for (let k = 0, from = out.length - off; k < m; k++) out.push(out[from + k]);
  }
}
