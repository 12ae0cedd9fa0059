// Usage: node mkfix.js IMAGES LABELS N
// Writes the first N items of an MNIST idx pair as a small fixture, plus the
// expected sparse rows with raw pixel values ("label idx:pixel ...").
const fs = require("fs"), zlib = require("zlib");
const [img, lab, n] = [fs.readFileSync(process.argv[2]), fs.readFileSync(process.argv[3]), +process.argv[4]];
const rows = img.readUInt32BE(8), cols = img.readUInt32BE(12), sz = rows * cols;
const ih = Buffer.alloc(16); ih.writeUInt32BE(0x803, 0); ih.writeUInt32BE(n, 4); ih.writeUInt32BE(rows, 8); ih.writeUInt32BE(cols, 12);
const lh = Buffer.alloc(8); lh.writeUInt32BE(0x801, 0); lh.writeUInt32BE(n, 4);
fs.writeFileSync(`t10k-${n}-images-idx3-ubyte.gz`, zlib.gzipSync(Buffer.concat([ih, img.subarray(16, 16 + n * sz)]), {level: 9}));
fs.writeFileSync(`t10k-${n}-labels-idx1-ubyte`, Buffer.concat([lh, lab.subarray(8, 8 + n)]));
let out = "";
for (let i = 0; i < n; i++) {
  out += lab[8 + i];
  for (let j = 0; j < sz; j++) { const p = img[16 + i * sz + j]; if (p) out += ` ${j + 1}:${p}`; }
  out += "\n";
}
fs.writeFileSync(`t10k-${n}.pixels.txt`, out);
