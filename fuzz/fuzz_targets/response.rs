//! Each adapter's non-streaming and HTTP-error decoders on arbitrary bodies:
//! never panic; a decoded response's calls are whole JSON objects.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let p = common::provider(which);
    let body = String::from_utf8_lossy(rest);
    if let Ok(r) = skyl::decode_response(p, &body) {
        for c in &r.tool_calls {
            let v: serde_json::Value = serde_json::from_str(&c.arguments).expect("whole JSON");
            assert!(v.is_object());
        }
    }
    let status = 400 + u16::from(which % 200);
    let headers = [(
        "retry-after".to_string(),
        body.chars().take(12).collect::<String>(),
    )];
    let _ = skyl::decode_error(p, status, &headers, &body);
});
