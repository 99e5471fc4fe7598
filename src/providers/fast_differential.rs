//! The hand-read fast paths against the general path, on frames written
//! every way a server (or a hostile proxy) might: any key order, spacing,
//! `null`s, escapes, repeated or unknown keys, odd value types.

use crate::providers::Provider;
use proptest::prelude::*;

/// Decodes `body` with and without the fast paths: `Err` shows both
/// outcomes if they differ.
pub(crate) fn fast_equals_general(provider: Provider, body: &[u8]) -> Result<(), String> {
    let fast = crate::StreamDecoder::decode_all(provider, body);
    super::frame::GENERAL_PATH_ONLY.with(|g| g.set(true));
    let general = crate::StreamDecoder::decode_all(provider, body);
    super::frame::GENERAL_PATH_ONLY.with(|g| g.set(false));
    if fast == general {
        Ok(())
    } else {
        Err(format!("fast {fast:?}\ngeneral {general:?}"))
    }
}

/// An object written from members, in the given order and spacing.
fn object(members: Vec<(String, String)>, space: &str) -> String {
    let inner: Vec<String> = members
        .into_iter()
        .map(|(k, v)| format!("{space}\"{k}\"{space}:{space}{v}"))
        .collect();
    format!("{{{}{space}}}", inner.join(","))
}

fn space() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just(""), Just(""), Just(" "), Just("\t ")] // (no line ends: they would split the SSE line)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => Just(r#""plain""#.to_string()),
        2 => Just(r#""""#.to_string()),
        4 => Just(r#""\"q\" \\ \/ \n \u00e9 \ud83c\udf0d""#.to_string()),
        1 => Just(r#""\ud83c""#.to_string()),
        1 => Just("null".to_string()),
        1 => Just("7".to_string()),
        1 => Just(r#"{"a":1}"#.to_string()),
    ]
}

/// The `usual` members (each 90% of the time) and the `rare` ones
/// (10%), plus one drawn again (a repeated key, perhaps with another
/// value, 10%), shuffled.
fn members(
    usual: Vec<BoxedStrategy<(String, String)>>,
    rare: Vec<BoxedStrategy<(String, String)>>,
) -> impl Strategy<Value = Vec<(String, String)>> {
    let all: Vec<_> = usual.iter().chain(&rare).cloned().collect();
    let again = prop::sample::select(all).prop_flat_map(|m| m);
    let pick = |p: f64, pool: Vec<BoxedStrategy<(String, String)>>| {
        pool.into_iter()
            .map(move |m| prop::option::weighted(p, m))
            .collect::<Vec<_>>()
    };
    (
        pick(0.9, usual),
        pick(0.1, rare),
        prop::option::weighted(0.1, again),
    )
        .prop_map(|(usual, rare, again)| {
            usual
                .into_iter()
                .chain(rare)
                .chain([again])
                .flatten()
                .collect::<Vec<_>>()
        })
        .prop_shuffle()
}

fn member(key: &'static str, value: BoxedStrategy<String>) -> BoxedStrategy<(String, String)> {
    value.prop_map(move |v| (key.to_string(), v)).boxed()
}

fn openai_chunk() -> impl Strategy<Value = String> {
    let call = (0u64..3, text(), space()).prop_map(|(i, args, sp)| {
        object(
            vec![
                ("index".into(), i.to_string()),
                (
                    "function".into(),
                    object(vec![("arguments".into(), args)], sp),
                ),
            ],
            sp,
        )
    });
    let delta = (
        members(
            vec![
                member("content", text().boxed()),
                member(
                    "tool_calls",
                    prop_oneof![
                        prop::collection::vec(call, 0..3)
                            .prop_map(|c| format!("[{}]", c.join(","))),
                        Just("null".to_string()),
                    ]
                    .boxed(),
                ),
            ],
            vec![
                member("role", Just(r#""assistant""#.to_string()).boxed()),
                member(
                    "refusal",
                    prop_oneof![Just("null".to_string()), Just(r#""no""#.to_string())].boxed(),
                ),
                member("con\\u0074ent", Just(r#""x""#.to_string()).boxed()),
            ],
        ),
        space(),
    )
        .prop_map(|(m, sp)| object(m, sp));
    let choice = (
        members(
            vec![
                member("index", Just("0".to_string()).boxed()),
                member("delta", delta.boxed()),
                member("logprobs", Just("null".to_string()).boxed()),
            ],
            vec![
                member(
                    "finish_reason",
                    prop_oneof![Just("null".to_string()), Just(r#""stop""#.to_string())].boxed(),
                ),
                // Azure's, on every choice.
                member(
                    "content_filter_results",
                    prop_oneof![
                        Just("{}".to_string()),
                        Just(r#"{"hate":{"filtered":false,"severity":"safe"}}"#.to_string()),
                    ]
                    .boxed(),
                ),
            ],
        ),
        space(),
    )
        .prop_map(|(m, sp)| object(m, sp));
    (
        members(
            vec![
                member("id", Just(r#""c1""#.to_string()).boxed()),
                member(
                    "choices",
                    prop::collection::vec(choice, 0..3)
                        .prop_map(|c| format!("[{}]", c.join(",")))
                        .boxed(),
                ),
            ],
            vec![
                member(
                    "usage",
                    prop_oneof![
                        Just("null".to_string()),
                        Just(r#"{"total_tokens":3}"#.to_string())
                    ]
                    .boxed(),
                ),
                member("x_groq", Just(r#"{"id":"g"}"#.to_string()).boxed()),
                member(
                    "system_fingerprint",
                    Just(r#""fp\u0031""#.to_string()).boxed(),
                ),
                member(
                    "created",
                    prop_oneof![Just("1767225600".to_string()), Just("1e400".to_string())].boxed(),
                ),
                // OpenAI's on every chunk, and Azure's first chunk.
                member("obfuscation", Just(r#""Qup1BsQ3""#.to_string()).boxed()),
                member("service_tier", Just(r#""default""#.to_string()).boxed()),
                member(
                    "prompt_filter_results",
                    Just(r#"[{"prompt_index":0,"content_filter_results":{}}]"#.to_string()).boxed(),
                ),
            ],
        ),
        space(),
    )
        .prop_map(|(m, sp)| object(m, sp))
}

fn anthropic_frame() -> impl Strategy<Value = String> {
    let delta = (
        members(
            vec![
                member(
                    "type",
                    prop_oneof![
                        Just(r#""text_delta""#.to_string()),
                        Just(r#""thinking_delta""#.to_string()),
                        Just(r#""input_json_delta""#.to_string()),
                        Just(r#""signature_delta""#.to_string()),
                    ]
                    .boxed(),
                ),
                member("text", text().boxed()),
                member("partial_json", text().boxed()),
            ],
            vec![member("thinking", text().boxed())],
        ),
        space(),
    )
        .prop_map(|(m, sp)| object(m, sp));
    (
        members(vec![
            member(
                "index",
                prop_oneof![3 => Just("0".to_string()), 3 => Just("1".to_string()), 1 => Just("1.0".to_string())]
                    .boxed(),
            ),
            member("delta", delta.boxed()),
        ], vec![
            member(
                "extra",
                prop_oneof![
                    Just(r#"[1,{"b":null}]"#.to_string()),
                    Just("-1e400".to_string())
                ]
                .boxed(),
            ),
        ]),
        space(),
    )
        .prop_map(|(m, sp)| {
            // The fast path is only tried on frames that start this way.
            let mut m = m;
            m.insert(0, ("type".into(), r#""content_block_delta""#.into()));
            object(m, sp).replacen(&format!("{{{sp}\"type\"{sp}:{sp}"), "{\"type\":", 1)
        })
}

/// A delta frame as the API writes it, member for member (the fast
/// path's reading by position), with what could be wrong at each place:
/// the index, a delta type and value key that do not go together, a
/// value of another type, whitespace, more members after the delta.
fn anthropic_frame_as_sent() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            4 => Just("1"),
            1 => Just("0"),
            1 => Just("01"),
            1 => Just(" 1"),
            1 => Just("1.0"),
            1 => Just("-1"),
        ],
        prop_oneof![
            Just(r#""text_delta","text":"#),
            Just(r#""input_json_delta","partial_json":"#),
            Just(r#""thinking_delta","thinking":"#),
            Just(r#""text_delta","partial_json":"#),
            Just(r#""signature_delta","signature":"#),
        ],
        text(),
        prop_oneof![
            6 => Just("}}"),
            1 => Just("} }"),
            1 => Just("}}\t"),
            1 => Just(r#","text":"again"}}"#),
            1 => Just(r#"},"index":2}"#),
            1 => Just(r#"},"extra":[1]}"#),
            1 => Just("}"),
            1 => Just("}}}"),
        ],
    )
        .prop_map(|(index, kind, value, tail)| {
            format!(r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":{kind}{value}{tail}"#)
        })
}

/// Gemini's usage as servers write it: repeated in every frame with counts
/// that change (Google's printer: `"key": value`), or in another order,
/// spacing or spelling, or not an object.
fn usage_metadata() -> impl Strategy<Value = String> {
    let real = |candidates: u32, spaced: bool| {
        let u = format!(
            r#"{{"promptTokenCount":9,"candidatesTokenCount":{candidates},"totalTokenCount":{},"promptTokensDetails":[{{"modality":"TEXT","tokenCount":9}}],"thoughtsTokenCount":185}}"#,
            194 + candidates
        );
        if spaced {
            u.replace("\":", "\": ")
        } else {
            u
        }
    };
    prop_oneof![
        4 => (prop_oneof![Just(5u32), Just(23), Just(40)], any::<bool>())
            .prop_map(move |(c, spaced)| real(c, spaced)),
        1 => Just(r#"{"candidatesTokenCount":5,"promptTokenCount":9,"totalTokenCount":199,"promptTokensDetails":[{"tokenCount":9,"modality":"TEXT"}],"thoughtsTokenCount":185}"#.to_string()),
        1 => Just(r#"{"promptTokenCount":1}"#.to_string()),
        1 => Just(r#"{ "promptTokenCount" : 1 }"#.to_string()),
        1 => Just(r#"{"promptTokenCount":2}"#.to_string()),
        1 => Just(r#"{"promptTokenCount":1,"ratio":0.0}"#.to_string()),
        1 => Just(r#"{"promptTokenCount":1,"ratio":-0.0}"#.to_string()),
        1 => Just(r#"{"promptTokenCount":1,"promptTokenCount":2}"#.to_string()),
        1 => Just(r#"{"prompt\u0054okenCount":1}"#.to_string()),
        1 => Just(r#"{"promptTokenCount":1e400}"#.to_string()),
        1 => Just("5".to_string()),
        1 => Just("null".to_string()),
    ]
}

fn gemini_frame() -> impl Strategy<Value = String> {
    let args = prop_oneof![
        3 => Just(r#"{"city":"Paris","days":3,"tags":["a"],"v":1.5}"#.to_string()),
        1 => Just(r#"{ "city": "Paris" }"#.to_string()),
        1 => Just(r#"{"city": "Paris","days": 3,"tags": ["a", "b"],"v": 1.5}"#.to_string()),
        1 => Just(r#"{"city": "Par is","days": 3.50}"#.to_string()),
        1 => Just(r#"{"a":1,"a":2}"#.to_string()),
        1 => Just("null".to_string()),
        1 => Just("[1]".to_string()),
    ];
    let call = (
        members(
            vec![
                member(
                    "name",
                    prop_oneof![4 => Just(r#""f""#.to_string()), 1 => Just(r#""""#.to_string())]
                        .boxed(),
                ),
                member("args", args.boxed()),
            ],
            vec![
                member(
                    "id",
                    prop_oneof![Just(r#""c1""#.to_string()), Just("null".to_string())].boxed(),
                ),
                member("willContinue", Just("false".to_string()).boxed()),
            ],
        ),
        space(),
    )
        .prop_map(|(m, sp)| object(m, sp));
    let part = prop_oneof![
        (
            members(
                vec![member("text", text().boxed())],
                vec![
                    member(
                        "thought",
                        prop_oneof![
                            Just("true".to_string()),
                            Just("null".to_string()),
                            Just("1".to_string())
                        ]
                        .boxed()
                    ),
                    member("thoughtSignature", Just(r#""c2ln""#.to_string()).boxed()),
                ]
            ),
            space()
        )
            .prop_map(|(m, sp)| object(m, sp)),
        (
            members(
                vec![member("functionCall", call.boxed())],
                vec![
                    member("thoughtSignature", Just(r#""c2ln""#.to_string()).boxed()),
                    member("text", text().boxed()),
                ]
            ),
            space()
        )
            .prop_map(|(m, sp)| object(m, sp)),
    ];
    let content = (
        members(
            vec![member(
                "parts",
                prop::collection::vec(part, 0..3)
                    .prop_map(|p| format!("[{}]", p.join(",")))
                    .boxed(),
            )],
            vec![member("role", Just(r#""model""#.to_string()).boxed())],
        ),
        space(),
    )
        .prop_map(|(m, sp)| object(m, sp));
    let candidate = (
        members(
            vec![member("content", content.boxed())],
            vec![
                member("index", Just("0".to_string()).boxed()),
                member(
                    "finishReason",
                    prop_oneof![Just("null".to_string()), Just(r#""STOP""#.to_string())].boxed(),
                ),
            ],
        ),
        space(),
    )
        .prop_map(|(m, sp)| object(m, sp))
        .boxed();
    (
        members(
            vec![
                member(
                    "candidates",
                    prop_oneof![
                        8 => prop::collection::vec(candidate.clone(), 1..2),
                        1 => prop::collection::vec(candidate, 0..3),
                    ]
                    .prop_map(|c| format!("[{}]", c.join(",")))
                    .boxed(),
                ),
                member("usageMetadata", usage_metadata().boxed()),
                member(
                    "modelVersion",
                    prop_oneof![Just(r#""m""#.to_string()), Just(r#""m2""#.to_string())].boxed(),
                ),
            ],
            vec![
                member("responseId", Just(r#""r""#.to_string()).boxed()),
                member("promptFeedback", Just("null".to_string()).boxed()),
                member("error", Just(r#"{"code":500}"#.to_string()).boxed()),
            ],
        ),
        space(),
    )
        .prop_map(|(m, sp)| object(m, sp))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn openai_chunks_decode_alike(
        frames in prop::collection::vec(openai_chunk(), 1..6),
        done_at in prop::option::of(0usize..6),
    ) {
        // Start two calls (index 0 twice: a reused index) so argument
        // fragments have calls to continue; `[DONE]` at the end, inside
        // (fragments after it) or nowhere (the body just ends).
        let mut body = String::from(
            "data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}},{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"\"}}]}}]}\n\n",
        );
        for (i, f) in frames.iter().enumerate() {
            if done_at == Some(i) {
                body.push_str("data: [DONE]\n\n");
            }
            body.push_str(&format!("data: {f}\n\n"));
        }
        if done_at.is_some_and(|i| i >= frames.len()) {
            body.push_str("data: [DONE]\n\n");
        }
        prop_assert_eq!(fast_equals_general(Provider::OpenAi, body.as_bytes()), Ok(()));
        prop_assert_eq!(fast_equals_general(Provider::OpenAiCompat, body.as_bytes()), Ok(()));
    }

    #[test]
    fn anthropic_deltas_decode_alike(
        frames in prop::collection::vec(prop_oneof![anthropic_frame(), anthropic_frame_as_sent()], 1..6),
    ) {
        let mut body = String::from(concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n",
        ));
        for f in &frames {
            body.push_str(&format!("event: content_block_delta\ndata: {f}\n\n"));
        }
        body.push_str("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n");
        body.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        prop_assert_eq!(fast_equals_general(Provider::Anthropic, body.as_bytes()), Ok(()));
    }

    #[test]
    fn gemini_frames_decode_alike(frames in prop::collection::vec(gemini_frame(), 1..6)) {
        let mut body = String::new();
        for f in &frames {
            body.push_str(&format!("data: {f}\r\n\r\n"));
        }
        prop_assert_eq!(fast_equals_general(Provider::Gemini, body.as_bytes()), Ok(()));
    }
}
