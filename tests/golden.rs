//! Request-encoding golden tests: every neutral request in
//! `tests/golden/requests/` encoded for every provider, compared with
//! `tests/golden/<provider>/<case>.json` (method, URL, headers, body).
//!
//! Regenerate on purpose with `BLESS=1 cargo test --test golden`, then read
//! the diff against the provider's API reference before committing it.
//!
//! The references each fixture was read against:
//!
//! - `openai`, `openaicompat`: <https://platform.openai.com/docs/api-reference/chat/create>
//!   (`response_format`, `tools[].function.strict`; files:
//!   <https://platform.openai.com/docs/guides/pdf-files>);
//! - `anthropic`: <https://docs.claude.com/en/api/messages> (`output_config`:
//!   <https://docs.claude.com/en/docs/build-with-claude/structured-outputs>;
//!   documents: <https://docs.claude.com/en/docs/build-with-claude/pdf-support>;
//!   `cache_control`: <https://docs.claude.com/en/docs/build-with-claude/prompt-caching>);
//! - `gemini`: <https://ai.google.dev/api/generate-content> (`responseJsonSchema`:
//!   <https://ai.google.dev/gemini-api/docs/structured-output>; files:
//!   <https://ai.google.dev/gemini-api/docs/document-processing>);
//! - `responses`: <https://platform.openai.com/docs/api-reference/responses/create>
//!   (`input` items, flat `tools`, `text.format`, `input_file`, `store`,
//!   `include`);
//! - `bedrock`: <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html>
//!   (content blocks: `API_runtime_ContentBlock.html`; `cachePoint`;
//!   `outputConfig.textFormat`:
//!   <https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html>;
//!   `additionalModelRequestFields`). Signed requests: `src/sigv4_tests.rs`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{json, Value};
use skyl::{encode_request, ClientConfig, Provider, Request};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn main() {
    let args = Arguments::from_args();
    let mut names: Vec<String> = std::fs::read_dir(dir().join("requests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
        .collect();
    names.sort();
    let mut trials = Vec::new();
    for provider in Provider::ALL {
        for name in &names {
            let name = name.clone();
            trials.push(Trial::test(format!("{provider}/{name}"), move || {
                check(provider, &name)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The encoded request as a JSON document.
fn encode(provider: Provider, input: &Value) -> Value {
    let request: Request = serde_json::from_value(input["request"].clone()).unwrap();
    let cfg = &input["config"];
    let mut config = ClientConfig::new(provider);
    config.api_key = Some("test-key".into());
    if provider == Provider::OpenAiCompat {
        config.base_url = Some("http://127.0.0.1:11434/v1".into());
    }
    if provider.needs_region() {
        config.region = Some("us-east-1".into());
    }
    config.include_usage = cfg["includeUsage"].as_bool().unwrap_or(false);
    config.browser = cfg["browser"].as_bool().unwrap_or(false);
    if let Some(headers) = cfg["headers"].as_array() {
        for h in headers {
            config
                .headers
                .push((h[0].as_str().unwrap().into(), h[1].as_str().unwrap().into()));
        }
    }
    let stream = input["stream"].as_bool().unwrap();
    match encode_request(&config, &request, stream) {
        Ok(http) => json!({
            "method": http.method,
            "url": http.url,
            "headers": http.headers,
            "body": serde_json::from_str::<Value>(&http.body).unwrap(),
        }),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

fn check(provider: Provider, name: &str) -> Result<(), Failed> {
    let input: Value = serde_json::from_slice(&std::fs::read(
        dir().join("requests").join(format!("{name}.json")),
    )?)?;
    let got = encode(provider, &input);
    let path = dir().join(provider.name()).join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(&got)? + "\n";
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap())?;
        std::fs::write(&path, text)?;
        return Ok(());
    }
    let want = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (run with BLESS=1 to create it)", path.display()))?;
    if want != text {
        return Err(format!(
            "{} differs:\n--- want\n{want}\n--- got\n{text}",
            path.display()
        )
        .into());
    }
    Ok(())
}
