//! A stream and a non-streaming response with the same content decode to the
//! same `Response`.
//!
//! For each of the 60 recorded non-streaming responses, the equivalent
//! stream is written in the provider's own SSE format (text, reasoning and
//! arguments split into small pieces, as providers send them) and both are
//! decoded; the two `Response`s must be equal in every field, including the
//! replayable message and the raw usage. The body itself, answering a
//! streamed request without SSE framing (as proxies that do not stream
//! answer), must decode to the same `Response` too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{json, Value};
use skyl::{decode_response, Provider, StreamDecoder};

fn main() {
    let args = Arguments::from_args();
    let trials = common::cases()
        .into_iter()
        .filter(|c| c.kind == "response")
        .map(|case| {
            Trial::test(case.id(), move || {
                let body = String::from_utf8(case.body())?;
                check(case.provider, &body)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn check(provider: Provider, body: &str) -> Result<(), Failed> {
    let whole = decode_response(provider, body).map_err(|e| format!("response: {e:?}"))?;
    let value: Value = serde_json::from_str(body)?;
    let stream = match provider {
        Provider::OpenAi | Provider::OpenAiCompat => openai_stream(&value).into_bytes(),
        Provider::Anthropic => anthropic_stream(&value).into_bytes(),
        Provider::Gemini => gemini_stream(&value).into_bytes(),
        Provider::Responses => responses_stream(&value).into_bytes(),
        Provider::Bedrock => bedrock_stream(&value),
        other => return Err(format!("no stream writer for {other}").into()),
    };
    let (_, streamed) = StreamDecoder::decode_all(provider, &stream);
    let streamed = streamed.map_err(|e| format!("stream: {e:?}"))?;
    if streamed != whole {
        return Err(format!(
            "the stream and the response differ:\n stream:   {streamed:?}\n response: {whole:?}"
        )
        .into());
    }
    // The body itself answering a streamed request (a proxy that does not
    // stream): the same response, in any chunking.
    for chunk in [body.len(), 61] {
        let chunks: Vec<&[u8]> = body.as_bytes().chunks(chunk.max(1)).collect();
        let (events, unframed) = common::decode_chunked(provider, &chunks);
        let unframed =
            unframed.map_err(|e| format!("unframed body in {chunk}-byte chunks: {e:?}"))?;
        if unframed != whole {
            return Err(format!(
                "the unframed body and the response differ:\n unframed: {unframed:?}\n response: {whole:?}"
            )
            .into());
        }
        if !matches!(events.last(), Some(skyl::StreamEvent::Finish { .. })) {
            return Err(format!("the unframed body did not finish: {events:?}").into());
        }
    }
    Ok(())
}

/// `s` in pieces of at most 7 characters (never splitting a character).
fn pieces(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(7).map(|c| c.iter().collect()).collect()
}

fn sse(frames: &[Value]) -> String {
    frames.iter().map(|f| format!("data: {f}\n\n")).collect()
}

fn openai_stream(body: &Value) -> String {
    let head = |delta: Value| json!({"id": body["id"], "model": body["model"], "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]});
    let msg = &body["choices"][0]["message"];
    let mut frames = vec![head(json!({"role": "assistant"}))];
    for field in ["reasoning_content", "reasoning"] {
        if let Some(r) = msg[field].as_str() {
            frames.extend(pieces(r).into_iter().map(|p| head(json!({ field: p }))));
        }
    }
    match &msg["content"] {
        Value::String(s) => {
            frames.extend(pieces(s).into_iter().map(|p| head(json!({"content": p}))))
        }
        Value::Array(chunks) => frames.extend(chunks.iter().map(|c| head(json!({"content": [c]})))),
        _ => {}
    }
    if let Some(r) = msg["refusal"].as_str() {
        frames.push(head(json!({ "refusal": r })));
    }
    for (i, call) in msg["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mut first = json!({"index": i, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}});
        if let Some(extra) = call.get("extra_content") {
            first["extra_content"] = extra.clone();
        }
        frames.push(head(json!({ "tool_calls": [first] })));
        let args = call["function"]["arguments"].as_str().unwrap_or_default();
        for p in pieces(args) {
            frames.push(head(
                json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
            ));
        }
    }
    let mut finish = head(json!({}));
    finish["choices"][0]["finish_reason"] = body["choices"][0]["finish_reason"].clone();
    frames.push(finish);
    if body["usage"].is_object() {
        frames.push(json!({"id": body["id"], "model": body["model"], "choices": [], "usage": body["usage"]}));
    }
    sse(&frames) + "data: [DONE]\n\n"
}

fn anthropic_stream(body: &Value) -> String {
    let mut out = String::new();
    let mut event = |v: Value| {
        out.push_str(&format!(
            "event: {}\ndata: {v}\n\n",
            v["type"].as_str().unwrap()
        ))
    };
    event(json!({"type": "message_start", "message": {
        "id": body["id"], "type": "message", "role": "assistant", "model": body["model"],
        "content": [], "stop_reason": null, "stop_sequence": null, "usage": body["usage"]}}));
    for (index, block) in body["content"].as_array().unwrap().iter().enumerate() {
        let delta = |d: Value| json!({"type": "content_block_delta", "index": index, "delta": d});
        match block["type"].as_str().unwrap() {
            "text" => {
                event(
                    json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
                );
                // Its sources, one delta each, before its text (as the
                // recorded web-search stream sends them).
                for c in block["citations"].as_array().into_iter().flatten() {
                    event(delta(json!({"type": "citations_delta", "citation": c})));
                }
                for p in pieces(block["text"].as_str().unwrap()) {
                    event(delta(json!({"type": "text_delta", "text": p})));
                }
            }
            "thinking" => {
                event(
                    json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                );
                for p in pieces(block["thinking"].as_str().unwrap()) {
                    event(delta(json!({"type": "thinking_delta", "thinking": p})));
                }
                if let Some(sig) = block["signature"].as_str() {
                    event(delta(json!({"type": "signature_delta", "signature": sig})));
                }
            }
            "tool_use" => {
                let mut start = block.clone();
                start["input"] = json!({});
                event(
                    json!({"type": "content_block_start", "index": index, "content_block": start}),
                );
                for p in pieces(&block["input"].to_string()) {
                    event(delta(
                        json!({"type": "input_json_delta", "partial_json": p}),
                    ));
                }
            }
            _ => event(
                json!({"type": "content_block_start", "index": index, "content_block": block}),
            ),
        }
        event(json!({"type": "content_block_stop", "index": index}));
    }
    let mut delta =
        json!({"stop_reason": body["stop_reason"], "stop_sequence": body["stop_sequence"]});
    if body.get("stop_details").is_some() {
        delta["stop_details"] = body["stop_details"].clone();
    }
    event(
        json!({"type": "message_delta", "delta": delta, "usage": {"output_tokens": body["usage"]["output_tokens"]}}),
    );
    event(json!({"type": "message_stop"}));
    out
}

fn gemini_stream(body: &Value) -> String {
    let chunk = |parts: Vec<Value>| {
        json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
               "modelVersion": body["modelVersion"], "responseId": body["responseId"]})
    };
    let candidate = &body["candidates"][0];
    let mut frames = Vec::new();
    for part in candidate["content"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        match part["text"].as_str() {
            Some(text) if !text.is_empty() => {
                let ps = pieces(text);
                let last = ps.len() - 1;
                for (i, p) in ps.into_iter().enumerate() {
                    let mut piece = part.clone();
                    piece["text"] = json!(p);
                    if i != last {
                        piece.as_object_mut().unwrap().remove("thoughtSignature");
                    }
                    frames.push(chunk(vec![piece]));
                }
            }
            _ => frames.push(chunk(vec![part.clone()])),
        }
    }
    let mut last = chunk(vec![]);
    last["candidates"][0]["finishReason"] = candidate["finishReason"].clone();
    last["usageMetadata"] = body["usageMetadata"].clone();
    frames.push(last);
    frames
        .iter()
        .map(|f| format!("data: {f}\r\n\r\n"))
        .collect()
}

/// A Responses body as the stream of it: `response.created`, each output
/// item added, its text, reasoning or arguments in pieces, done, then the
/// terminal event with the whole response (as the API repeats it).
fn responses_stream(body: &Value) -> String {
    let mut out = String::new();
    let mut seq = 0;
    let mut event = |mut v: Value| {
        v["sequence_number"] = json!(seq);
        seq += 1;
        out.push_str(&format!(
            "event: {}\ndata: {v}\n\n",
            v["type"].as_str().unwrap()
        ));
    };
    let mut start = body.clone();
    start["status"] = json!("in_progress");
    start["output"] = json!([]);
    start["usage"] = Value::Null;
    event(json!({"type": "response.created", "response": start}));
    for (index, item) in body["output"].as_array().unwrap().iter().enumerate() {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        match item["type"].as_str().unwrap() {
            "message" => added["content"] = json!([]),
            "reasoning" => added["summary"] = json!([]),
            "function_call" => added["arguments"] = json!(""),
            _ => {}
        }
        event(json!({"type": "response.output_item.added", "output_index": index, "item": added}));
        let id = &item["id"];
        match item["type"].as_str().unwrap() {
            "message" => {
                for (c, part) in item["content"].as_array().unwrap().iter().enumerate() {
                    let (kind, key) = match part["type"].as_str().unwrap() {
                        "output_text" => ("response.output_text.delta", "text"),
                        "refusal" => ("response.refusal.delta", "refusal"),
                        _ => continue,
                    };
                    for p in pieces(part[key].as_str().unwrap()) {
                        event(
                            json!({"type": kind, "item_id": id, "output_index": index, "content_index": c, "delta": p}),
                        );
                    }
                }
            }
            "reasoning" => {
                for (key, kind) in [
                    ("summary", "response.reasoning_summary_text.delta"),
                    ("content", "response.reasoning_text.delta"),
                ] {
                    for (i, part) in item[key].as_array().into_iter().flatten().enumerate() {
                        for p in pieces(part["text"].as_str().unwrap_or_default()) {
                            event(
                                json!({"type": kind, "item_id": id, "output_index": index, "summary_index": i, "delta": p}),
                            );
                        }
                    }
                }
            }
            "function_call" => {
                for p in pieces(item["arguments"].as_str().unwrap()) {
                    event(
                        json!({"type": "response.function_call_arguments.delta", "item_id": id, "output_index": index, "delta": p}),
                    );
                }
            }
            _ => {}
        }
        event(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
    }
    let terminal = match body["status"].as_str() {
        Some("incomplete") => "response.incomplete",
        Some("failed") => "response.failed",
        _ => "response.completed",
    };
    event(json!({"type": terminal, "response": body}));
    out
}

/// A Converse body as ConverseStream sends it: one event stream message
/// per event, AWS's header order, text, reasoning and tool input in
/// pieces, the signature as its own delta at the block's end.
fn bedrock_stream(body: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let mut event = |kind: &str, v: Value| {
        out.extend(skyl::encode_event_stream_message(
            &[
                (":event-type", kind),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            v.to_string().as_bytes(),
        ));
    };
    event("messageStart", json!({"role": "assistant"}));
    let content = body["output"]["message"]["content"].as_array().unwrap();
    for (index, block) in content.iter().enumerate() {
        let delta = |d: Value| json!({"contentBlockIndex": index, "delta": d});
        if let Some(text) = block["text"].as_str() {
            for p in pieces(text) {
                event("contentBlockDelta", delta(json!({"text": p})));
            }
        } else if let Some(tool) = block.get("toolUse") {
            let start = json!({"toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"]}});
            event(
                "contentBlockStart",
                json!({"contentBlockIndex": index, "start": start}),
            );
            for p in pieces(&tool["input"].to_string()) {
                event("contentBlockDelta", delta(json!({"toolUse": {"input": p}})));
            }
        } else if let Some(r) = block.get("reasoningContent") {
            if let Some(data) = r.get("redactedContent") {
                let d = json!({"reasoningContent": {"redactedContent": data}});
                event("contentBlockDelta", delta(d));
            } else {
                let t = &r["reasoningText"];
                for p in pieces(t["text"].as_str().unwrap_or_default()) {
                    event(
                        "contentBlockDelta",
                        delta(json!({"reasoningContent": {"text": p}})),
                    );
                }
                if let Some(sig) = t.get("signature") {
                    let d = json!({"reasoningContent": {"signature": sig}});
                    event("contentBlockDelta", delta(d));
                }
            }
        } else if let Some(cited) = block.get("citationsContent") {
            for c in cited["citations"].as_array().into_iter().flatten() {
                event("contentBlockDelta", delta(json!({"citation": c})));
            }
            for t in cited["content"].as_array().into_iter().flatten() {
                for p in pieces(t["text"].as_str().unwrap_or_default()) {
                    event("contentBlockDelta", delta(json!({"text": p})));
                }
            }
        } else {
            panic!("no stream form for the block {block}");
        }
        event("contentBlockStop", json!({"contentBlockIndex": index}));
    }
    event("messageStop", json!({"stopReason": body["stopReason"]}));
    event(
        "metadata",
        json!({"usage": body["usage"], "metrics": body["metrics"]}),
    );
    out
}
