// Writes one input's chunks for examples/bench_native.rs, to profile the
// native core on exactly the bytes the bench feeds (bench/README.md):
//   node bench/dump.mjs <wire> <kind> <delivery> <file>
import fs from "node:fs";
import { chunksFile, makeInput } from "./inputs.mjs";

const [wire, kind, delivery, file] = process.argv.slice(2);
const input = makeInput(wire, kind, delivery);
fs.writeFileSync(file, chunksFile(input));
console.log(
  `${file}: ${input.chunks.length} chunks, ${input.body.length} bytes, ${input.expected.calls.length} calls`,
);
