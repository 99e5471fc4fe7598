// Where the wasm's bytes are (issue 33): builds the npm package's wasm as
// scripts/build does (release, wasm-bindgen, wasm-opt -O2 --converge) but keeps the
// function names (-g), then reads the module itself: each function body's
// size under its name, the data segments, and the rest. Prints a table by
// family (the concern a function serves, from its Rust path) and the
// largest functions, as bench/README.md records them. No dependency beyond
// the build's own tools; twiggy (cargo install twiggy) gives the same
// shallow sizes, and `twiggy dominators` the retained ones.
//   node bench/sizes.mjs [--features=a,b] [--top=N] [--wasm=<named.wasm>]
// --features: the Cargo features (default: every adapter, as the full
// package); --wasm: read a module built beforehand instead of building one.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import zlib from "node:zlib";

const root = new URL("..", import.meta.url).pathname;
const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

/** Builds the named module; returns its path. */
function build(features) {
  const target = `${root}target/sizes`;
  const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, stdio: "inherit" });
  const feat = ["--features", `npm${features ? `,${features}` : ""}`];
  const cargo = ["build", "--release", "--target", "wasm32-unknown-unknown", "--lib"];
  run("cargo", [...cargo, ...(features ? ["--no-default-features"] : []), ...feat]);
  const raw = `${root}target/wasm32-unknown-unknown/release/skyl.wasm`;
  run("wasm-bindgen", ["--target", "web", "--out-dir", target, "--out-name", "skyl", raw]);
  const out = `${target}/named.wasm`;
  run(`${root}node_modules/.bin/wasm-opt`, [
    `${target}/skyl_bg.wasm`,
    "-O2",
    "--converge",
    "-g",
    "-o",
    out,
  ]);
  return out;
}

/** The module's sections: each function body's size and name, data segments. */
export function readModule(bytes) {
  let p = 8;
  const leb = () => {
    let r = 0;
    let s = 0;
    let b;
    do {
      b = bytes[p++];
      r += (b & 0x7f) * 2 ** s;
      s += 7;
    } while (b & 0x80);
    return r;
  };
  let imported = 0;
  const bodies = [];
  const names = new Map();
  let data = 0;
  const sections = {};
  while (p < bytes.length) {
    const id = bytes[p++];
    const len = leb();
    const end = p + len;
    sections[id] = (sections[id] ?? 0) + len;
    if (id === 2) {
      for (let n = leb(); n > 0; n--) {
        for (const _ of ["module", "field"]) {
          const l = leb();
          p += l;
        }
        const kind = bytes[p++];
        if (kind === 0) {
          imported++;
          leb();
        } else if (kind === 1) {
          p++;
          if (leb() & 1) leb();
          leb();
        } else if (kind === 2) {
          if (leb() & 1) leb();
          leb();
        } else p += 2; // global: type, mutability
      }
    } else if (id === 10) {
      for (let n = leb(); n > 0; n--) {
        const size = leb();
        bodies.push(size);
        p += size;
      }
    } else if (id === 11) data += len;
    else if (id === 0) {
      const nameLen = leb();
      const name = new TextDecoder().decode(bytes.subarray(p, p + nameLen));
      p += nameLen;
      if (name === "name")
        while (p < end) {
          const sub = bytes[p++];
          const subLen = leb();
          const stop = p + subLen;
          if (sub === 1) {
            for (let n = leb(); n > 0; n--) {
              const index = leb();
              const l = leb();
              names.set(index, new TextDecoder().decode(bytes.subarray(p, p + l)));
              p += l;
            }
          }
          p = stop;
        }
    }
    p = end;
  }
  const functions = bodies.map((size, i) => ({
    name: names.get(imported + i) ?? `function ${imported + i}`,
    size,
  }));
  return { functions, data, sections };
}

// A function's family, from the first rule its name matches. The npm
// exports (run_*, loop_*, embed_*, validate) hold the bodies inlined into
// them, so they count with what they drive.
const FAMILIES = [
  [
    /^loop_|skyl::runner|skyl::shell::tool_loop|skyl::model::schema/,
    "tool runner (and its schema check)",
  ],
  [
    /^embed_|skyl::embed|skyl::providers::embed|skyl::providers::\w+::embed|skyl::base64::f32s|skyl::model::embed/,
    "embeddings",
  ],
  [
    /skyl::sha256|skyl::sigv4|skyl::shell::aws_credentials|skyl::providers::encode::sign_request/,
    "Bedrock signing (SigV4, SHA-256, credentials)",
  ],
  [
    /skyl::google_auth|skyl::providers::vertex|skyl::shell::google_auth|^run_serviceAccountJwt|^run_tokenAnswer|^run_accessToken/,
    "Vertex AI (URLs, service-account token)",
  ],
  [
    /skyl::providers::(openai|responses|anthropic|gemini|bedrock)::\w*stream|skyl::providers::(openai|responses|anthropic|gemini|bedrock)::(partial_args|\w+::StreamState)|FrameStream>::frame|TurnState/,
    "adapters: stream decoders",
  ],
  [
    /skyl::providers::(openai|responses|anthropic|gemini|bedrock)::request|skyl::providers::encode/,
    "adapters: request encoders",
  ],
  [
    /skyl::providers::(openai|responses|anthropic|gemini|bedrock)::(response|error)|skyl::providers::decode/,
    "adapters: whole responses and errors",
  ],
  [/skyl::providers/, "adapters: shared (dispatch, options, portability)"],
  [
    /skyl::(sse|framing|eventstream|stream|accumulate)/,
    "stream decoding (framing, SSE, event stream, accumulator, progress)",
  ],
  [/skyl::json/, "JSON reader, writer, partial and canonical JSON"],
  [
    /skyl::model::(from_json|validate)|^validate|skyl::shell::(ConfigInput|config)/,
    "request reading and validation",
  ],
  [/skyl::model/, "model types (clone, to JSON, response)"],
  [/skyl::run|skyl::policy|skyl::http/, "run machine, retry policy, fallback"],
  [/^run_|skyl::shell/, "JS boundary (exports, events, errors)"],
  [/skyl::/, "skyl, other"],
  [
    /serde_json|serde::|indexmap|hashbrown|std::collections::hash|core::hash|BuildHasher|Hasher/,
    "serde_json's Value and Map (indexmap, hashbrown)",
  ],
  [/core::fmt|alloc::fmt|Display|Debug|ToString|fmt::Write/, "core::fmt"],
  [/dlmalloc|__rdl_|__rust_|alloc::alloc/, "allocator (dlmalloc)"],
  [/wasm_bindgen|js_sys|__wbg|__wbindgen|externref|multivalue shim/, "wasm-bindgen glue"],
  [/zmij|itoa|memchr/, "numbers and byte search (zmij, itoa, memchr)"],
  [/./, "Rust core and alloc generics (iterators, Vec, String, drop, clone)"],
];
const family = (name) => FAMILIES.find(([re]) => re.test(name))[1];

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = arg("wasm") ?? build(arg("features"));
  const bytes = fs.readFileSync(file);
  const { functions, data, sections } = readModule(bytes);
  const code = functions.reduce((s, f) => s + f.size, 0);
  const rest = Object.entries(sections)
    .filter(([id]) => id !== "0" && id !== "10" && id !== "11")
    .reduce((s, [, n]) => s + n, 0);
  const total = code + data + rest;
  const groups = new Map();
  for (const f of functions) {
    const g = groups.get(family(f.name)) ?? { bytes: 0, count: 0 };
    g.bytes += f.size;
    g.count++;
    groups.set(family(f.name), g);
  }
  groups.set("data (strings: messages, field names; tables)", { bytes: data, count: 0 });
  groups.set("types, imports, exports, table, globals", { bytes: rest, count: 0 });
  console.log(`${file}: ${functions.length} functions; ${total} bytes without custom sections`);
  console.log("\n| family | bytes | share | functions |\n|---|---:|---:|---:|");
  for (const [name, g] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes))
    console.log(
      `| ${name} | ${g.bytes} | ${((100 * g.bytes) / total).toFixed(1)} % | ${g.count || ""} |`,
    );
  const top = Number(arg("top", 25));
  console.log(`\n| largest functions | bytes |\n|---|---:|`);
  for (const f of [...functions].sort((a, b) => b.size - a.size).slice(0, top))
    console.log(
      `| \`${f.name.replace(/::h[0-9a-f]{16}$/, "").replace(/\[[0-9a-f]+\]/g, "")}\` | ${f.size} |`,
    );
  const strippedFile = `${file}.stripped`;
  execFileSync(`${root}node_modules/.bin/wasm-opt`, [
    file,
    "--strip-debug",
    "--strip-producers",
    "-o",
    strippedFile,
  ]);
  const stripped = fs.readFileSync(strippedFile);
  console.log(
    `\nshipped (names stripped): ${stripped.length} bytes, ${zlib.gzipSync(stripped, { level: 9 }).length} gzip`,
  );
}
