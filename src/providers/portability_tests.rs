//! A history built on one provider, sent to another: the bodies carry none
//! of the first provider's own fields (signatures, encrypted reasoning,
//! server-tool blocks), only what the second can read (issue 32).

use serde_json::Value;

use super::*;
use crate::model::{Message, Request, Role};
#[cfg(feature = "openai")]
use crate::model::{Part, StreamEvent};
use crate::StreamDecoder;

/// The assistant turn of a recorded stream, decoded.
fn turn(provider: Provider, case: &str) -> Message {
    let path = format!(
        "{}/tests/fixtures/conformance/{}/{case}.stream.sse",
        env!("CARGO_MANIFEST_DIR"),
        provider.name()
    );
    let body = std::fs::read(path).unwrap();
    let (_, res) = StreamDecoder::decode_all(provider, &body);
    let message = res.unwrap().message;
    assert_eq!(message.role, Role::Assistant);
    message
}

/// Every key of a JSON value, at any depth, and every string `type`.
fn names(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                out.push(k.clone());
                if k == "type" {
                    if let Some(t) = v.as_str() {
                        out.push(t.to_string());
                    }
                }
                names(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| names(v, out)),
        _ => {}
    }
}

/// Two recorded Anthropic turns (a thinking turn with its signature, a
/// code-execution turn with its server-tool blocks) between user messages.
pub(super) fn anthropic_history() -> Request {
    Request {
        model: Some("m".into()),
        messages: vec![
            Message::user("Think about it."),
            turn(Provider::Anthropic, "anthropic-clear-thinking.1"),
            Message::user("Now search."),
            turn(Provider::Anthropic, "anthropic-code-execution-20250825.1"),
            Message::user("Thanks."),
        ],
        ..Request::default()
    }
}

#[test]
fn an_anthropic_history_carries_no_anthropic_field_to_another_provider() {
    let history = anthropic_history();
    let anthropic_only = [
        "signature",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "web_search_tool_result",
        "cache_control",
        "citations",
    ];
    for provider in [
        Provider::OpenAi,
        Provider::OpenAiCompat,
        Provider::Gemini,
        Provider::Responses,
    ] {
        if provider.adapter().is_none() {
            continue; // (a one-adapter build)
        }
        let mut config = ClientConfig::new(provider).with_api_key("k");
        if provider.needs_base_url() {
            config.base_url = Some("http://127.0.0.1:1/v1".into());
        }
        if provider.needs_region() {
            config.region = Some("us-east-1".into());
        }
        let http = encode_request(&config, &history, true).unwrap();
        let body: Value = serde_json::from_str(&http.body).unwrap();
        let mut seen = Vec::new();
        names(&body, &mut seen);
        let leaked: Vec<&&str> = (anthropic_only.iter())
            .filter(|n| seen.iter().any(|s| s == **n))
            .collect();
        assert!(leaked.is_empty(), "{provider}: {leaked:?} in {body}");
        // What every provider reads: the turns' text.
        assert!(http.body.contains("Thanks."), "{provider}");
    }
    // Replayed to Anthropic itself, the same history keeps them all: the
    // signatures and the server-tool blocks go back as they came.
    let config = ClientConfig::new(Provider::Anthropic).with_api_key("k");
    let http = encode_request(&config, &history, true).unwrap();
    let body: Value = serde_json::from_str(&http.body).unwrap();
    let mut seen = Vec::new();
    names(&body, &mut seen);
    for kept in ["signature", "thinking", "server_tool_use"] {
        assert!(
            seen.iter().any(|s| s == kept),
            "{kept} replayed to Anthropic"
        );
    }
}

/// The assistant turn of a recorded Responses case (stream or body).
#[cfg(feature = "openai")]
fn responses_turn(case: &str) -> crate::model::Response {
    let dir = format!(
        "{}/tests/fixtures/conformance/responses",
        env!("CARGO_MANIFEST_DIR")
    );
    if case.ends_with(".stream") {
        let body = std::fs::read(format!("{dir}/{case}.sse")).unwrap();
        StreamDecoder::decode_all(Provider::Responses, &body)
            .1
            .unwrap()
    } else {
        let body = std::fs::read_to_string(format!("{dir}/{case}.json")).unwrap();
        crate::decode_response(Provider::Responses, &body).unwrap()
    }
}

/// The base64 image of the recorded `image_generation_call` item of a
/// case (in a stream's `output_item.done`, or a body's output), as it came.
#[cfg(feature = "openai")]
fn recorded_image(case: &str) -> String {
    fn find(v: &Value) -> Option<String> {
        match v {
            Value::Object(o)
                if o.get("type").and_then(Value::as_str) == Some("image_generation_call") =>
            {
                o.get("result").and_then(Value::as_str).map(str::to_string)
            }
            Value::Object(o) => o.values().find_map(find),
            Value::Array(a) => a.iter().find_map(find),
            _ => None,
        }
    }
    let dir = format!(
        "{}/tests/fixtures/conformance/responses",
        env!("CARGO_MANIFEST_DIR")
    );
    if case.ends_with(".stream") {
        let text = std::fs::read_to_string(format!("{dir}/{case}.sse")).unwrap();
        (text.lines())
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| d.contains("\"response.output_item.done\""))
            .find_map(|d| find(&serde_json::from_str(d).unwrap()))
            .unwrap()
    } else {
        let text = std::fs::read_to_string(format!("{dir}/{case}.json")).unwrap();
        find(&serde_json::from_str(&text).unwrap()).unwrap()
    }
}

/// With `partial.files`, each recorded `partial_image` is one
/// `file_partial` event before the file: the recorded base64, the item it
/// belongs to, its frame without the image; never a part of the message.
/// Without it, none.
#[cfg(feature = "openai")]
#[test]
fn a_partial_image_is_a_file_partial_event_only_when_asked() {
    let dir = format!(
        "{}/tests/fixtures/conformance/responses",
        env!("CARGO_MANIFEST_DIR")
    );
    for case in ["openai", "azure"] {
        let path = format!("{dir}/{case}-image-generation-tool.1.stream.sse");
        let body = std::fs::read_to_string(path).unwrap();
        let recorded: Value = (body.lines())
            .filter_map(|l| l.strip_prefix("data: "))
            .find(|d| d.contains("\"response.image_generation_call.partial_image\""))
            .map(|d| serde_json::from_str(d).unwrap())
            .unwrap();
        let which = crate::PartialEvents {
            files: true,
            ..crate::PartialEvents::default()
        };
        let mut d = StreamDecoder::new(Provider::Responses).with_partial_events(which);
        let mut events = Vec::new();
        d.feed(body.as_bytes(), &mut events).unwrap();
        let response = d.finish(&mut events).unwrap();
        let kinds: Vec<&str> = (events.iter())
            .filter_map(|e| match e {
                StreamEvent::FilePartial { .. } => Some("partial"),
                StreamEvent::File { .. } => Some("file"),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, ["partial", "file"], "{case}");
        let Some(StreamEvent::FilePartial { index, file, raw }) = events
            .iter()
            .find(|e| matches!(e, StreamEvent::FilePartial { .. }))
        else {
            panic!()
        };
        let Part::File {
            data: Some(data),
            media_type,
            provider_data: Some(kept),
            ..
        } = file
        else {
            panic!("{file:?}")
        };
        assert_eq!(*index, 0, "{case}");
        assert_eq!(
            data,
            recorded["partial_image_b64"].as_str().unwrap(),
            "{case}"
        );
        assert_eq!(
            media_type,
            &format!("image/{}", recorded["output_format"].as_str().unwrap())
        );
        assert_eq!(kept["responses"]["id"], recorded["item_id"], "{case}");
        assert!(!raw.contains(data.as_str()), "{case}");
        assert_eq!(response.files().count(), 1, "{case}: only the whole image");
        // Not asked: no partial event, the rest the same.
        let (plain, _) = StreamDecoder::decode_all(Provider::Responses, body.as_bytes());
        assert_eq!(plain.len(), events.len() - 1, "{case}");
        assert!(!plain
            .iter()
            .any(|e| matches!(e, StreamEvent::FilePartial { .. })));
    }
}

#[cfg(feature = "openai")]
#[test]
fn a_generated_image_is_one_file_part_and_event_not_three_copies() {
    for case in [
        "openai-image-generation-tool.1.stream",
        "azure-image-generation-tool.1.stream",
        "xai-image-generation-tool.1.stream",
        "openai-image-generation-tool.1",
        "azure-image-generation-tool.1",
        "xai-image-generation-tool.1",
    ] {
        let response = responses_turn(case);
        let files: Vec<&Part> = response.files().collect();
        assert_eq!(files.len(), 1, "{case}");
        let Part::File {
            data,
            media_type,
            provider_data,
            ..
        } = files[0]
        else {
            panic!()
        };
        assert_eq!(
            data.as_deref(),
            Some(recorded_image(case).as_str()),
            "{case}"
        );
        assert!(media_type.starts_with("image/"), "{case}: {media_type}");
        // Its item stays, without the image, to replay it.
        let item = &provider_data.as_ref().unwrap()["responses"];
        assert_eq!(item["type"], "image_generation_call", "{case}");
        assert!(item["id"].as_str().unwrap().starts_with("ig_"), "{case}");
        assert!(item.get("result").is_none(), "{case}");
        assert!(
            !response.message.parts.iter().any(|p| matches!(p,
                Part::Provider { data, .. } if data["type"] == "image_generation_call")),
            "{case}: not also a provider part"
        );
    }
    // A stream hands the file out once, as an event, whatever the partial
    // images and the completed response repeat.
    let dir = format!(
        "{}/tests/fixtures/conformance/responses",
        env!("CARGO_MANIFEST_DIR")
    );
    let body = std::fs::read(format!("{dir}/openai-image-generation-tool.1.stream.sse")).unwrap();
    let (events, response) = StreamDecoder::decode_all(Provider::Responses, &body);
    let files: Vec<&StreamEvent> = (events.iter())
        .filter(|e| matches!(e, StreamEvent::File { .. }))
        .collect();
    assert_eq!(files.len(), 1);
    let StreamEvent::File { file, raw } = files[0] else {
        panic!()
    };
    assert_eq!(Some(file), response.unwrap().files().next());
    // Its frame is kept without the image, which the file carries.
    assert!(raw.contains("response.output_item.done"));
    let image = recorded_image("openai-image-generation-tool.1.stream");
    assert!(!raw.contains(&image));
    let marker = format!(
        "<skyl: {} bytes of base64, in the event's file.data>",
        image.len()
    );
    assert!(raw.contains(&marker), "{raw}");
}

#[cfg(all(feature = "openai", feature = "gemini"))]
#[test]
fn a_generated_image_replays_to_its_provider_and_is_left_out_where_a_turn_cannot_hold_it() {
    let turn = responses_turn("openai-image-generation-tool.1").message;
    let image = recorded_image("openai-image-generation-tool.1");
    let history = Request {
        model: Some("m".into()),
        messages: vec![
            Message::user("Draw a cat."),
            turn,
            Message::user("Now a dog."),
        ],
        ..Request::default()
    };
    for provider in Provider::ALL {
        if provider.adapter().is_none() {
            continue;
        }
        let mut config = ClientConfig::new(provider).with_api_key("k");
        if provider.needs_base_url() {
            config.base_url = Some("http://127.0.0.1:1/v1".into());
        }
        if provider.needs_region() {
            config.region = Some("us-east-1".into());
        }
        let http = encode_request(&config, &history, true).unwrap();
        let body: Value = serde_json::from_str(&http.body).unwrap();
        let said = left_out(provider, &history);
        match provider {
            Provider::Responses => {
                // Its item as it came, with its image.
                let items = body["input"].as_array().unwrap();
                let item = items
                    .iter()
                    .find(|i| i["type"] == "image_generation_call")
                    .unwrap();
                assert_eq!(item["result"], image.as_str());
                assert!(item["id"].as_str().unwrap().starts_with("ig_"));
                assert!(!http.body.contains("input_file"));
                assert_eq!(said, None);
            }
            Provider::Gemini => {
                // inlineData in the model's turn.
                let model = &body["contents"][1];
                assert_eq!(model["role"], "model");
                assert!(model["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["inlineData"]["data"] == image.as_str()));
                assert_eq!(said, None);
            }
            _ => {
                assert!(!http.body.contains(&image), "{provider}");
                let said = said.unwrap_or_else(|| panic!("{provider}: no warning"));
                assert!(
                    said.contains("(responses file image/webp)"),
                    "{provider}: {said}"
                );
            }
        }
    }
}
