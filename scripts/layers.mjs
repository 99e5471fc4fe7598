// Checks the layering of src/ (ARCHITECTURE.md): a module imports only from
// its own layer or the layers below it, no modules import each other in a
// circle (top-level, or siblings inside one folder), and only the shell
// and web name wasm crates. Shipped code only: each file is read up to its test
// module, and test-only files are skipped. It also holds ARCHITECTURE.md's
// file table to the tree (fileTable below), and every file to under 600
// lines (fileLengths).
//
//   node scripts/layers.mjs    prints each violation and exits 1 if any
//   LAYERS_DEBUG=1 ...         also prints every import edge it saw
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const src = join(root, "src");

// Layers from the bottom. A top-level module not listed here is an error.
const LAYERS = [
  ["json"],
  ["model"],
  [
    "error",
    "http",
    "retry",
    "policy",
    "fallback",
    "runner",
    "sse",
    "eventstream",
    "sha256",
    "sigv4",
    "google_auth",
    "framing",
    "accumulate",
    "base64",
  ],
  ["providers"],
  ["stream"],
  // One request (or one embeddings call) as a state machine, which both
  // drivers carry out.
  ["run", "embed"],
  // The drivers: the JS boundary, and skyl::web (the wasm32 feature `web`).
  ["shell", "web"],
];
const MAX_LINES = 600;
const layerOf = new Map(LAYERS.flatMap((mods, i) => mods.map((m) => [m, i])));
const WASM_CRATES = [
  "wasm_bindgen",
  "js_sys",
  "web_sys",
  "gloo_net",
  "wasm_bindgen_futures",
  "serde_wasm_bindgen",
];

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return files(p);
    return e.name.endsWith(".rs") ? [p] : [];
  });
}

// "src/providers/openai/stream.rs" -> ["providers", "openai", "stream"].
function modulePath(file) {
  const parts = relative(src, file).replace(/\.rs$/, "").split("/");
  if (parts.at(-1) === "mod" || parts.at(-1) === "lib") parts.pop();
  return parts;
}

// The shipped part of a file: up to its test module.
function shipped(text) {
  const at = text.search(/^#\[cfg\([^\n]*\btest\b[^\n]*\)\]\s*(#\[[^\n]*\]\s*)*mod \w+ \{/m);
  return at < 0 ? text : text.slice(0, at);
}

// Test-only files: declared behind #[cfg(...test...)] by their parent,
// under their own name or at the file a #[path] attribute gives.
function testOnly(all) {
  const skip = new Set();
  for (const file of all) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(
      /#\[cfg\([^\]]*\btest\b[^\]]*\)\][^\n]*\n\s*(?:#\[path = "([^"]+)"\]\s*)?(?:pub(?:\([^)]*\))? )?mod (\w+);/g,
    )) {
      const here = modulePath(file);
      skip.add([...here, m[2]].join("::"));
      if (m[1]) skip.add(modulePath(join(dirname(file), m[1])).join("::"));
    }
  }
  return skip;
}

// Every path a file names: each leaf of its `use` trees, and each
// `crate::`, `super::` or `self::` path written inline.
function paths(text) {
  const out = [];
  const expand = (prefix, tree) => {
    tree = tree.trim();
    const brace = tree.indexOf("{");
    if (brace < 0) {
      const leaf = tree.replace(/\s+as\s+\w+$/, "").trim();
      if (leaf === "*" || leaf === "") out.push(prefix);
      else if (leaf === "self") out.push(prefix);
      else out.push([...prefix, ...leaf.split("::").filter(Boolean)]);
      return;
    }
    const head = tree.slice(0, brace).split("::").filter(Boolean);
    const body = tree.slice(brace + 1, tree.lastIndexOf("}"));
    let depth = 0;
    let start = 0;
    for (let i = 0; i <= body.length; i++) {
      const c = body[i];
      if (c === "{") depth++;
      else if (c === "}") depth--;
      else if ((c === "," && depth === 0) || i === body.length) {
        const part = body.slice(start, i);
        if (part.trim()) expand([...prefix, ...head], part);
        start = i + 1;
      }
    }
  };
  const uses = /\buse\s+([^;]+);/g;
  for (const m of text.matchAll(uses)) expand([], m[1].replace(/\s+/g, " "));
  const inline = text.replace(uses, "");
  for (const m of inline.matchAll(/\b((?:crate|super|self)(?:::\w+)+)/g)) {
    out.push(m[1].split("::"));
  }
  return out;
}

const all = files(src);
const skip = testOnly(all);
const edges = []; // [fromPath[], toPath[]]

// The items each module defines, to see through re-exports: an import of
// providers::FrameFailure is an import of providers::frame, where it is.
const modules = new Map(); // "a::b" -> Set(item names)
for (const file of all) {
  const names = new Set();
  const text = shipped(readFileSync(file, "utf8"));
  for (const m of text.matchAll(
    /^\s*pub(?:\([^)]*\))? (?:const |static |fn |struct |enum |type |trait |mod )(\w+)/gm,
  )) {
    names.add(m[1]);
  }
  modules.set(modulePath(file).join("::"), names);
}
function resolve(path) {
  for (let i = 0; i < path.length; i++) {
    const here = path.slice(0, i).join("::");
    const next = path[i];
    const child = i === 0 ? next : `${here}::${next}`;
    if (modules.has(child)) continue;
    if (modules.get(here)?.has(next)) return path;
    // Not defined here: re-exported from a module below that defines it
    // (the root's re-exports are the curated API, from anywhere).
    for (const [key, names] of modules) {
      const parts = key.split("::");
      const under = i === 0 ? key !== "" : parts.length === i + 1 && key.startsWith(`${here}::`);
      if (under && names.has(next)) return [...parts, ...path.slice(i)];
    }
    return path;
  }
  return path;
}
const problems = [];

for (const file of all) {
  const from = modulePath(file);
  if (skip.has(from.join("::"))) continue;
  const text = shipped(readFileSync(file, "utf8")).replace(/^\s*\/\/.*$/gm, "");
  for (const path of paths(text)) {
    let target;
    if (path[0] === "crate") target = path.slice(1);
    else if (path[0] === "super") {
      let ups = 0;
      while (path[ups] === "super") ups++;
      target = [...from.slice(0, from.length - ups), ...path.slice(ups)];
    } else if (path[0] === "self") target = [...from, ...path.slice(1)];
    else continue;
    if (target.length > 0) edges.push([from, resolve(target)]);
  }
  if (from[0] !== "shell" && from[0] !== "web" && from.length > 0) {
    for (const c of WASM_CRATES) {
      if (new RegExp(`\\b${c}::`).test(text)) {
        problems.push(`${relative(root, file)} names ${c} (only the shell and web may)`);
      }
    }
  }
}

// Top level: layers, then circles among top-level modules.
const top = new Map();
for (const [from, to] of edges) {
  const a = from[0];
  const b = to[0];
  if (a === undefined || a === b || !layerOf.has(b)) continue; // lib.rs, or an item of lib.rs
  if (!layerOf.has(a)) {
    problems.push(`module ${a} has no layer in scripts/layers.mjs`);
    continue;
  }
  if (layerOf.get(b) > layerOf.get(a)) {
    problems.push(`${from.join("::")} imports ${to.join("::")}: ${b} is above ${a}`);
  }
  if (!top.has(a)) top.set(a, new Set());
  top.get(a).add(b);
}

// Siblings inside one folder: the child modules of each module.
const inner = new Map(); // parent path -> Map(child -> Set(child))
for (const [from, to] of edges) {
  let i = 0;
  while (i < from.length && i < to.length && from[i] === to[i]) i++;
  if (i >= from.length || i >= to.length) continue; // one contains the other
  const parent = from.slice(0, i).join("::");
  if (i === 0) continue; // top level, checked above
  const a = from[i];
  const b = to[i];
  if (!inner.has(parent)) inner.set(parent, new Map());
  const g = inner.get(parent);
  if (!g.has(a)) g.set(a, new Set());
  g.get(a).add(b);
}

function circles(graph, where) {
  const state = new Map();
  const stack = [];
  const visit = (n) => {
    state.set(n, 1);
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 1) {
        problems.push(`${where}: ${[...stack.slice(stack.indexOf(m)), m].join(" -> ")}`);
      } else if (!state.has(m)) {
        visit(m);
      }
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
}

// ARCHITECTURE.md's table "The files, by layer": the first table after that
// line. Each row is `| layer | folder | files |`; the folder is one
// backticked path under src/ ending in "/"; the files are the names in
// backticks in the third cell outside parentheses (what is in parentheses
// describes the file), each relative to the folder. Together the rows must
// name every file under src/ (.rs, and the JS half's .js and .d.ts) exactly
// once, and only files that exist.
function fileTable() {
  const doc = readFileSync(join(root, "ARCHITECTURE.md"), "utf8");
  const at = doc.indexOf("The files, by layer");
  if (at < 0) return ['ARCHITECTURE.md has no "The files, by layer" table'];
  const lines = doc.slice(at).split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  const rows = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith("|")) break;
    rows.push(line);
  }
  const found = [];
  const named = new Map(); // path -> times named
  for (const row of rows.slice(2)) {
    const cells = row.split("|").slice(1, -1);
    const folder = cells[1]?.match(/^\s*`(src\/(?:[\w-]+\/)*)`\s*$/)?.[1];
    if (cells.length !== 3 || !folder) {
      found.push(`ARCHITECTURE.md's file table: not | layer | \`src/folder/\` | files |: ${row}`);
      continue;
    }
    let outside = "";
    let depth = 0;
    for (const c of cells[2]) {
      if (c === "(") depth++;
      else if (c === ")") depth--;
      else if (depth === 0) outside += c;
    }
    for (const m of outside.matchAll(/`([^`]+)`/g)) {
      const path = folder + m[1];
      named.set(path, (named.get(path) ?? 0) + 1);
    }
  }
  const tree = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? tree(join(dir, e.name)) : [relative(root, join(dir, e.name))],
    );
  const actual = new Set(tree(src).filter((f) => /\.(rs|js|d\.ts)$/.test(f)));
  for (const [path, times] of named) {
    if (!actual.has(path)) {
      found.push(`ARCHITECTURE.md's file table names ${path}, which does not exist`);
    } else if (times > 1) {
      found.push(`ARCHITECTURE.md's file table names ${path} ${times} times`);
    }
  }
  for (const path of actual) {
    if (!named.has(path)) {
      found.push(`${path} is not in ARCHITECTURE.md's file table ("The files, by layer")`);
    }
  }
  return found;
}
problems.push(...fileTable());
problems.push(...fileLengths());

// Every file of these folders whose name ends so (recursively, without
// node_modules and fixtures).
function sources(dir, ends) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory())
      return ["node_modules", "fixtures", "pkg", "target"].includes(e.name) ? [] : sources(p, ends);
    return ends.some((x) => e.name.endsWith(x)) ? [p] : [];
  });
}

// CONTRIBUTING.md's small files: under MAX_LINES lines, a Rust file of src/
// counted up to its test module (the first `#[cfg(test)]` or
// `#[cfg(all(test, ...))]` item); the JS half and its typings, the tests,
// the scripts, the bench and the demo whole.
function fileLengths() {
  const found = [];
  const whole = [
    ...sources(join(src, "shell", "js"), [".js", ".d.ts"]),
    ...sources(join(root, "tests"), [".rs", ".mjs", ".ts"]),
    ...["scripts", "bench", "www", "examples"].flatMap((d) =>
      sources(join(root, d), [".mjs", ".js", ".rs"]),
    ),
  ];
  for (const file of [...all.filter((f) => !skip.has(f)), ...whole]) {
    const lines = readFileSync(file, "utf8").split("\n");
    const test =
      file.startsWith(src) && file.endsWith(".rs")
        ? lines.findIndex((l) => /^#\[cfg\((all\()?test\b/.test(l))
        : -1;
    const n = test < 0 ? lines.length : test;
    if (n >= MAX_LINES)
      found.push(
        `${relative(root, file)} has ${n} lines${test < 0 ? "" : " (above its tests)"}: split it by concern`,
      );
  }
  return found;
}

if (process.env.LAYERS_DEBUG) {
  for (const [f, t] of edges) console.log(f.join("::"), "->", t.join("::"));
}
circles(top, "circle at the top level");
for (const [parent, g] of inner) circles(g, `circle inside ${parent}`);

if (problems.length > 0) {
  console.error([...new Set(problems)].join("\n"));
  process.exit(1);
}
console.log(
  `layers: ${all.length - skip.size} shipped files, no upward import, no circle; ` +
    `ARCHITECTURE.md's file table names every file under src/; every file of src/, tests/, scripts/, bench/, www/ and examples/ under ${MAX_LINES} lines`,
);
