//! Writes and checks `js/policy.js`: the few rules the JS half needs
//! before its WebAssembly module can answer, as constants generated from
//! the core. In a browser the module loads on first use, but `new Client`
//! checks its options at once and synchronously, so the provider list, the
//! base-URL rule, the defaults and the scrubbing rule cannot be asked of the
//! module there: they are data in the JS, written from the Rust that owns
//! them. `cargo test` fails when the file differs from what the core says;
//! `BLESS=1 cargo test --lib policy_js` rewrites it.

use crate::error::Timeout;
use crate::http::HEADER_NAME_SYMBOLS;
use crate::json::write::quoted;
use crate::policy::{MIN_SECRET_CHARS, REDACTED};
use crate::providers::{Provider, BASE_URL_NEEDED};
use crate::retry::RetryPolicy;

/// One exported object, its entries one a line (as biome keeps them).
fn table(out: &mut String, doc: &str, name: &str, entries: &[(&str, &str)]) {
    out.push_str(&format!(
        "\n/** {doc} */\nexport const {name} = /* @__PURE__ */ Object.freeze({{\n"
    ));
    for (k, v) in entries {
        // A line over biome's width breaks after the key, as biome writes it.
        let line = format!("  {k}: {},", quoted(v));
        if line.len() > 100 {
            out.push_str(&format!("  {k}:\n    {},\n", quoted(v)));
        } else {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push_str("});\n");
}

/// The text of `js/policy.js`.
fn render() -> String {
    let mut out = String::from(
        "// Generated from the Rust core by src/shell/policy_js.rs: do not edit.\n\
         // `BLESS=1 cargo test --lib policy_js` rewrites it, and `cargo test`\n\
         // fails while it differs from the core. These are the rules the JS half\n\
         // needs synchronously, before the WebAssembly module has loaded (a\n\
         // browser loads it on first use; `new Client` checks its options at\n\
         // once); every other decision is asked of the module.\n",
    );
    let features: Vec<_> = Provider::ALL
        .iter()
        .map(|p| (p.name(), p.feature()))
        .collect();
    table(
        &mut out,
        "Every provider, and the Cargo feature that builds its adapter (`Provider::feature`).",
        "PROVIDER_FEATURES",
        &features,
    );
    let base_urls: Vec<_> = Provider::ALL
        .iter()
        .filter(|p| p.needs_base_url())
        .map(|p| (p.name(), BASE_URL_NEEDED))
        .collect();
    table(
        &mut out,
        "The providers with no default endpoint, and why a baseURL is needed.",
        "BASE_URL_REQUIRED",
        &base_urls,
    );
    let regions: Vec<_> = Provider::ALL
        .iter()
        .filter(|p| p.needs_region())
        .map(|p| (p.name(), crate::providers::REGION_NEEDED))
        .collect();
    table(
        &mut out,
        "The providers whose endpoint is their region's, and why a region (or a baseURL) is needed.",
        "REGION_REQUIRED",
        &regions,
    );
    // (Read from the provider table: the adapters whose entry has no
    // embedder. A build without any embedder leaves the wasm class out, and
    // the JS half answers `client.embed` with this.)
    let no_embeddings: Vec<_> = Provider::ALL
        .iter()
        .filter_map(|&p| match crate::providers::embed::embedder(p) {
            Err(crate::Error::InvalidRequest { message, .. }) => Some((p.name(), message)),
            _ => None,
        })
        .collect();
    let no_embeddings: Vec<_> = no_embeddings
        .iter()
        .map(|(k, v)| (*k, v.as_str()))
        .collect();
    table(
        &mut out,
        "The providers with no embeddings API, and where to go instead (`Adapter::embed`).",
        "NO_EMBEDDINGS",
        &no_embeddings,
    );
    let consts = [
        (
            "Retries after the first attempt, unless maxRetries says otherwise (`RetryPolicy`).",
            "DEFAULT_MAX_RETRIES",
            RetryPolicy::default().max_retries.to_string(),
        ),
        (
            "The total timeout in milliseconds, unless one is given (`Timeout::DEFAULT_TOTAL_MS`).",
            "DEFAULT_TOTAL_TIMEOUT_MS",
            Timeout::DEFAULT_TOTAL_MS.to_string(),
        ),
        (
            "How long before their expiration a `credentials()` callback's credentials are fetched again (`CREDENTIALS_REFRESH_MS`).",
            "CREDENTIALS_REFRESH_MS",
            crate::policy::CREDENTIALS_REFRESH_MS.to_string(),
        ),
        (
            "How long a service account's token exchange may take (`TOKEN_EXCHANGE_TIMEOUT_MS`).",
            "TOKEN_EXCHANGE_TIMEOUT_MS",
            crate::policy::TOKEN_EXCHANGE_TIMEOUT_MS.to_string(),
        ),
        (
            "The fewest characters (code points) a secret must have to be scrubbed (`scrub`).",
            "MIN_SECRET_CHARS",
            MIN_SECRET_CHARS.to_string(),
        ),
        (
            "What replaces a secret in scrubbed text.",
            "REDACTED",
            quoted(REDACTED),
        ),
        (
            "The characters a header name may have besides ASCII letters and digits (RFC 9110 `tchar`).",
            "HEADER_NAME_SYMBOLS",
            quoted(HEADER_NAME_SYMBOLS),
        ),
        (
            "The headers whose values are credentials, scrubbed from errors as keys are (`SECRET_HEADERS`).",
            "SECRET_HEADERS",
            // (One per line, as Biome formats a list this long.)
            format!(
                "[\n{}]",
                (crate::http::SECRET_HEADERS.iter())
                    .map(|h| format!("  {},\n", quoted(h)))
                    .collect::<String>()
            ),
        ),
    ];
    for (doc, name, value) in consts {
        out.push_str(&format!("\n/** {doc} */\nexport const {name} = {value};\n"));
    }
    use super::run::{
        CANCEL_ATTEMPT, CANCEL_BODY, CANCEL_NOTHING, CANCEL_RUN, DELIVER, DONE, FAIL, READ, SEND,
        TAKE, WAIT,
    };
    numbers(
        &mut out,
        "The step codes of the run machine's wasm class (`shell/run.rs`).",
        "STEP",
        &[
            ("READ", READ),
            ("SEND", SEND),
            ("TAKE", TAKE),
            ("WAIT", WAIT),
            ("DELIVER", DELIVER),
            ("DONE", DONE),
            ("FAIL", FAIL),
        ],
    );
    numbers(
        &mut out,
        "What a fired timer or an abort cancels (`shell/run.rs`, `Cancel`).",
        "CANCEL",
        &[
            ("NOTHING", CANCEL_NOTHING),
            ("BODY", CANCEL_BODY),
            ("ATTEMPT", CANCEL_ATTEMPT),
            ("RUN", CANCEL_RUN),
        ],
    );
    use super::run::{
        IN_DELIVERED, IN_ENDED, IN_LOST, IN_NEXT, IN_UNREACHABLE, IN_UNSIGNED, IN_WAITED,
    };
    numbers(
        &mut out,
        "What a driver tells a machine's `input` (`shell/run.rs`); the last three take a cause.",
        "INPUT",
        &[
            ("ENDED", IN_ENDED),
            ("DELIVERED", IN_DELIVERED),
            ("WAITED", IN_WAITED),
            ("NEXT", IN_NEXT),
            ("UNREACHABLE", IN_UNREACHABLE),
            ("LOST", IN_LOST),
            ("UNSIGNED", IN_UNSIGNED),
        ],
    );
    use super::tool_loop::{LOOP_APPROVE, LOOP_FAIL, LOOP_REQUEST, LOOP_RUN, LOOP_STOP, LOOP_WAIT};
    numbers(
        &mut out,
        "What `client.run` does next, as the tool loop's wasm class says (`shell/tool_loop.rs`).",
        "LOOP",
        &[
            ("REQUEST", LOOP_REQUEST),
            ("RUN", LOOP_RUN),
            ("APPROVE", LOOP_APPROVE),
            ("WAIT", LOOP_WAIT),
            ("STOP", LOOP_STOP),
            ("FAIL", LOOP_FAIL),
        ],
    );
    out
}

/// One exported object of numbers.
fn numbers(out: &mut String, doc: &str, name: &str, entries: &[(&str, u32)]) {
    out.push_str(&format!(
        "\n/** {doc} */\nexport const {name} = /* @__PURE__ */ Object.freeze({{\n"
    ));
    for (k, v) in entries {
        out.push_str(&format!("  {k}: {v},\n"));
    }
    out.push_str("});\n");
}

#[test]
fn the_js_policy_is_generated_from_the_core() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/shell/js/policy.js");
    let want = render();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "src/shell/js/policy.js differs from the core's rules: run \
         `BLESS=1 cargo test --lib policy_js` and commit the result.\nwant:\n{want}"
    );
}
