// read.mjs FILE...
//
// Reads each Parquet or Arrow IPC (file or stream) FILE of cpm's schema
// (label, features: list<struct<index, value>>) with every independent
// reader at hand and prints one JSON line per file and reader:
//
//   {"file": FILE, "reader": NAME, "version": VERSION,
//    "rows": [[label, [[index, value], ...]], ...]}
//
// or, when the reader fails, {"file", "reader", "version", "error"}.
// Numbers are printed as JavaScript prints a float64 (the shortest text
// that reads back to the same float64), so a float32 label or value
// comes out exactly. Parquet is read by DuckDB (read_parquet), hyparquet
// (with hyparquet-compressors), parquet-wasm (arrow-rs) and polars; Arrow
// IPC by Apache Arrow JS (with fzstd for zstd and lz4Frame of
// common.mjs for LZ4 registered) and polars. The format is told by the first
// bytes, as cpm does.
import { readFileSync } from "node:fs";

import { DuckDBInstance } from "@duckdb/node-api";
import * as arrow from "apache-arrow";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import pl from "nodejs-polars";
import * as pw from "parquet-wasm";

import { die, duckdbVersion, pkgVersion, registerArrowCodecs } from "./common.mjs";

registerArrowCodecs(arrow);

const files = process.argv.slice(2);
if (files.length === 0) die("usage: node read.mjs FILE...");

const num = (x) => (typeof x === "bigint" ? Number(x) : x);
// canon turns rows of objects {label, features: [{index, value}]} into
// the printed form.
const canon = (objs) => objs.map((o) => [num(o.label), Array.from(o.features ?? [], (f) => [num(f.index), num(f.value)])]);

// fromArrow reads the rows of an Apache Arrow JS table.
function fromArrow(t) {
  const out = [];
  const label = t.getChild("label");
  const features = t.getChild("features");
  for (let i = 0; i < t.numRows; i++) {
    const list = features.get(i);
    const fs = [];
    for (const s of list ?? []) fs.push([num(s.index), num(s.value)]);
    out.push([num(label.get(i)), fs]);
  }
  return out;
}

const db = await DuckDBInstance.create(":memory:");
const conn = await db.connect();
const versions = {
  duckdb: await duckdbVersion(conn),
  hyparquet: `hyparquet ${pkgVersion("hyparquet")}, hyparquet-compressors ${pkgVersion("hyparquet-compressors")}`,
  "parquet-wasm": `parquet-wasm ${pkgVersion("parquet-wasm")}`,
  polars: `nodejs-polars ${pkgVersion("nodejs-polars")}`,
  "apache-arrow": `apache-arrow ${pkgVersion("apache-arrow")} (codecs: fzstd ${pkgVersion("fzstd")}, common.mjs lz4Frame)`,
};

const parquetReaders = {
  async duckdb(path) {
    const r = await conn.runAndReadAll("SELECT label::DOUBLE AS label, features FROM read_parquet($1)", [path]);
    return canon(r.getRowObjectsJson());
  },
  async hyparquet(path) {
    const file = await asyncBufferFromFile(path);
    return canon(await parquetReadObjects({ file, compressors }));
  },
  async "parquet-wasm"(path) {
    const t = pw.readParquet(readFileSync(path));
    return fromArrow(arrow.tableFromIPC(t.intoIPCStream()));
  },
  async polars(path) {
    return canon(pl.readParquet(readFileSync(path)).toRecords());
  },
};
const arrowReaders = (stream) => ({
  async "apache-arrow"(path) {
    return fromArrow(arrow.tableFromIPC(readFileSync(path)));
  },
  async polars(path) {
    const b = readFileSync(path);
    return canon((stream ? pl.readIPCStream(b) : pl.readIPC(b)).toRecords());
  },
});

for (const file of files) {
  const head = readFileSync(file).subarray(0, 6);
  let readers;
  if (head.subarray(0, 4).toString("latin1") === "PAR1") readers = parquetReaders;
  else if (head.toString("latin1") === "ARROW1") readers = arrowReaders(false);
  else if (head.readUInt32LE(0) === 0xffffffff) readers = arrowReaders(true);
  else die(`${file}: neither Parquet nor Arrow IPC`);
  for (const [name, read] of Object.entries(readers)) {
    const line = { file, reader: name, version: versions[name] };
    try {
      line.rows = await read(file);
    } catch (e) {
      line.error = String(e?.message ?? e).split("\n")[0];
    }
    process.stdout.write(JSON.stringify(line) + "\n");
  }
}
