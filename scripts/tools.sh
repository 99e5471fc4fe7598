# Sourced by the scripts: installs what building and testing need, once.
# Everything comes from the package registries (crates.io, npm, Debian).

# The wasm-bindgen version pinned in Cargo.toml, as locked in Cargo.lock.
wasm_bindgen_version() {
    awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

# rustfmt, clippy and the wasm32 target (rustup's), for fmt, clippy and
# rustdoc; ensure_rust_wasm adds the CLIs that build and test the wasm.
ensure_rust_target() {
    if command -v rustup >/dev/null; then
        rustup component add rustfmt clippy >/dev/null 2>&1 || true
        rustup target add wasm32-unknown-unknown >/dev/null
    fi
}

ensure_rust_wasm() {
    ensure_rust_target
    local want
    want=$(wasm_bindgen_version)
    if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$want" ]; then
        echo "installing wasm-bindgen-cli $want (a few minutes)"
        # --locked first; its lockfile can name a crate version the registry
        # no longer serves, so fall back to a fresh resolution.
        cargo install wasm-bindgen-cli --version "$want" --locked --quiet 2>/dev/null ||
            cargo install wasm-bindgen-cli --version "$want" --quiet
    fi
    if ! command -v wasm-pack >/dev/null; then
        echo "installing wasm-pack (a few minutes)"
        cargo install wasm-pack --version 0.15.1 --locked --quiet 2>/dev/null ||
            cargo install wasm-pack --version 0.15.1 --quiet
    fi
}

ensure_npm() {
    # A node_modules that is a link (a worktree borrowing another checkout's
    # packages) is left alone: npm ci would empty the folder it points to.
    if [ -L node_modules ]; then
        return
    fi
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
        npm ci --no-audit --no-fund --loglevel=error
    fi
}

ensure_chromium() {
    if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
        echo "installing Debian chromium and chromium-driver"
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
    fi
}

# worker-build, which builds the workers-rs example (examples/workers-rs):
# pinned. It works with the wasm-bindgen of that crate's Cargo.lock.
WORKER_BUILD_VERSION=0.8.7
ensure_worker_build() {
    if [ "$(worker-build --version 2>/dev/null)" != "$WORKER_BUILD_VERSION" ]; then
        echo "installing worker-build $WORKER_BUILD_VERSION (a few minutes)"
        cargo install worker-build --version "$WORKER_BUILD_VERSION" --locked --quiet 2>/dev/null ||
            cargo install worker-build --version "$WORKER_BUILD_VERSION" --quiet
    fi
}

# Runs worker-build (arguments passed on) with the project's own tools:
# the pinned wasm-bindgen CLI, npm binaryen's wasm-opt and wrangler's
# esbuild. Left to itself it downloads wasm-bindgen and wasm-opt from
# GitHub releases, which this project's machines cannot reach, and esbuild
# from the npm registry.
tools_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
worker_build() {
    WASM_BINDGEN_BIN="$(command -v wasm-bindgen)" \
        WASM_OPT_BIN="$tools_root/node_modules/.bin/wasm-opt" \
        ESBUILD_BIN="$tools_root/node_modules/.bin/esbuild" \
        worker-build "$@"
}

# bench/web-driver: skyl::web (the Rust driver) compiled for Node, the
# benchmark's "skyl web" rows and bench/driver.mjs. Cargo into the target
# directory the Rust examples share (scripts/test builds them first, so
# skyl and the wasm crates are compiled once), the pinned wasm-bindgen CLI
# for Node, then npm binaryen's wasm-opt -O2 --converge as scripts/build
# runs it on the npm package. Writes bench/web-driver/pkg/.
build_bench_web() {
    local target="$tools_root/target/examples-wasm" out="$tools_root/bench/web-driver/pkg"
    CARGO_TARGET_DIR=$target cargo build --quiet --release --target wasm32-unknown-unknown \
        --manifest-path "$tools_root/bench/web-driver/Cargo.toml"
    wasm-bindgen --target nodejs --no-typescript --out-dir "$out" \
        "$target/wasm32-unknown-unknown/release/skyl_bench_web.wasm"
    "$tools_root/node_modules/.bin/wasm-opt" "$out/skyl_bench_web_bg.wasm" -O2 --converge \
        --strip-debug --strip-producers -o "$out/skyl_bench_web_bg.wasm"
    # wasm-bindgen's Node output is CommonJS; bench/ is "type": "module".
    printf '{ "type": "commonjs" }\n' >"$out/package.json"
}

# The providers (Provider::ALL, in its order) and the Cargo feature of each
# adapter (Provider::feature; each feature once, in that order): read from
# src/shell/js/policy.js, which the core generates (src/shell/policy_js.rs),
# so that no script writes the list out by hand. Space separated.
skyl_providers() { policy_list 'Object.keys(PROVIDER_FEATURES)'; }
skyl_adapter_features() { policy_list '[...new Set(Object.values(PROVIDER_FEATURES))]'; }
policy_list() {
    node --input-type=module -e "
const { PROVIDER_FEATURES } = await import(process.argv[1]);
console.log(($1).join(' '));
" "file://$tools_root/src/shell/js/policy.js"
}
