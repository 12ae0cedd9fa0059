// What gen.mjs and read.mjs share: the versions of the tools, file
// helpers.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

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
