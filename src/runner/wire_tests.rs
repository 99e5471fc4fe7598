//! A runner-built history on the wire: the second request of a run whose
//! first turn made four calls (one answered, one that failed, one of an
//! unknown tool, one with arguments that break its schema), encoded for
//! every provider and checked against each API's rules for tool results.
//! The same request is the golden case
//! `tests/golden/requests/runner_history.json` (`BLESS=1` rewrites it), so
//! the request-encoding goldens cover what the runner sends.

use serde_json::{json, Value};

use super::*;
use crate::{encode_request, ClientConfig, Provider};

fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    }
}

/// The run's second request, as the runner builds it.
fn second_request() -> Request {
    let weather = ToolSpec::new(
        "get_weather",
        Some(
            json!({"type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"]}),
        ),
    );
    let request = Request {
        model: Some("test-model".into()),
        messages: vec![Message::user(
            "Weather in Paris and Oslo, and 3 km in miles?",
        )],
        tools: vec![
            crate::model::Tool {
                name: "get_weather".into(),
                description: Some("Current weather for a city.".into()),
                parameters: weather.parameters.clone(),
                ..Default::default()
            },
            crate::model::Tool {
                name: "convert_units".into(),
                description: Some("Convert a value between units.".into()),
                parameters: Some(json!({"type": "object",
                    "properties": {"value": {"type": "number"}}, "required": ["value"]})),
                ..Default::default()
            },
        ],
        ..Request::default()
    };
    let convert = ToolSpec::new("convert_units", request.tools[1].parameters.clone());
    let never = |_: &ToolCall| false;
    let mut runner = Runner::new(
        request,
        vec![weather, convert],
        RunLimits::default(),
        &[],
        &never,
    )
    .unwrap();
    let Next::Request(_) = runner.start() else {
        panic!("the first step")
    };
    let calls = [
        call("call_1", "get_weather", r#"{"city":"Paris"}"#),
        call("call_2", "get_weather", r#"{"city":"Oslo"}"#),
        call("call_3", "launch", "{}"),
        call("call_4", "convert_units", r#"{"value":"3"}"#),
    ];
    let mut parts = vec![Part::Text {
        text: "Checking.".into(),
        provider_data: None,
    }];
    parts.extend(calls.iter().map(|c| Part::ToolCall {
        id: c.id.clone(),
        name: c.name.clone(),
        arguments: c.arguments.clone(),
        provider_data: None,
    }));
    let turn = Response {
        message: Message {
            role: Role::Assistant,
            parts,
        },
        tool_calls: calls.to_vec(),
        finish_reason: FinishReason::ToolCalls,
        ..Response::default()
    };
    let Next::Run(jobs) = runner.finish_step(turn, &never) else {
        panic!("the weather calls run")
    };
    // They end in the other order: the results keep call order.
    assert_eq!(jobs.len(), 2);
    runner.tool_done("call_2", Outcome::Failed("service unavailable".into()));
    match runner.tool_done("call_1", Outcome::Done(r#"{"temp":21}"#.into())) {
        Next::Request(request) => *request,
        other => panic!("the second step: {other:?}"),
    }
}

/// The ids of `items` in order, by `key` (a JSON Pointer).
fn ids(items: &[&Value], key: &str) -> Vec<String> {
    (items.iter())
        .map(|v| {
            v.pointer(key)
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

const IDS: [&str; 4] = ["call_1", "call_2", "call_3", "call_4"];

/// Each API's rule for the results of one turn's calls.
fn check_results(provider: Provider, body: &Value) {
    match provider {
        // One `tool` message per call id, right after the assistant's
        // message with the calls, in their order.
        Provider::OpenAi | Provider::OpenAiCompat => {
            let messages = body["messages"].as_array().unwrap();
            let at = (messages.iter())
                .position(|m| m.get("tool_calls").is_some())
                .unwrap();
            let calls: Vec<&Value> = messages[at]["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .collect();
            assert_eq!(ids(&calls, "/id"), IDS);
            let next: Vec<&Value> = messages[at + 1..].iter().collect();
            assert_eq!(next.len(), 4, "{provider}: nothing else follows");
            assert!(next.iter().all(|m| m["role"] == "tool"));
            assert_eq!(ids(&next, "/tool_call_id"), IDS);
        }
        // Every tool_result in the one user message after the turn, first
        // in it, in call order.
        Provider::Anthropic => {
            let messages = body["messages"].as_array().unwrap();
            let uses: Vec<&Value> = (messages[1]["content"].as_array().unwrap().iter())
                .filter(|b| b["type"] == "tool_use")
                .collect();
            assert_eq!(ids(&uses, "/id"), IDS);
            assert_eq!(messages.len(), 3);
            assert_eq!(messages[2]["role"], "user");
            let results: Vec<&Value> = messages[2]["content"].as_array().unwrap().iter().collect();
            assert!(results.iter().all(|b| b["type"] == "tool_result"));
            assert_eq!(ids(&results, "/tool_use_id"), IDS);
            let errors: Vec<bool> = (results.iter()).map(|b| b["is_error"] == true).collect();
            assert_eq!(errors, [false, true, true, true]);
        }
        // A functionResponse per functionCall, in one user turn, with the
        // same names and ids in the same order.
        Provider::Gemini => {
            let contents = body["contents"].as_array().unwrap();
            let calls: Vec<&Value> = (contents[1]["parts"].as_array().unwrap().iter())
                .filter(|p| p.get("functionCall").is_some())
                .collect();
            assert_eq!(contents.len(), 3);
            assert_eq!(contents[2]["role"], "user");
            let answers: Vec<&Value> = contents[2]["parts"].as_array().unwrap().iter().collect();
            assert_eq!(ids(&calls, "/functionCall/id"), IDS);
            assert_eq!(ids(&answers, "/functionResponse/id"), IDS);
            assert_eq!(
                ids(&calls, "/functionCall/name"),
                ids(&answers, "/functionResponse/name")
            );
        }
        // A function_call_output per call_id, each once, after the calls.
        Provider::Responses => {
            let input: Vec<&Value> = body["input"].as_array().unwrap().iter().collect();
            let calls: Vec<&Value> = (input.iter().copied())
                .filter(|i| i["type"] == "function_call")
                .collect();
            let outputs: Vec<&Value> = (input.iter().copied())
                .filter(|i| i["type"] == "function_call_output")
                .collect();
            assert_eq!(ids(&calls, "/call_id"), IDS);
            assert_eq!(ids(&outputs, "/call_id"), IDS);
            let last_call = input.iter().rposition(|i| i["type"] == "function_call");
            let first_output = input
                .iter()
                .position(|i| i["type"] == "function_call_output");
            assert!(last_call < first_output);
        }
        // Every toolResult in the one user message after the turn, first in
        // it, in call order; an error's status says so.
        Provider::Bedrock => {
            let messages = body["messages"].as_array().unwrap();
            let uses: Vec<&Value> = (messages[1]["content"].as_array().unwrap().iter())
                .filter(|b| b.get("toolUse").is_some())
                .collect();
            assert_eq!(ids(&uses, "/toolUse/toolUseId"), IDS);
            assert_eq!(messages.len(), 3);
            assert_eq!(messages[2]["role"], "user");
            let results: Vec<&Value> = messages[2]["content"].as_array().unwrap().iter().collect();
            assert!(results.iter().all(|b| b.get("toolResult").is_some()));
            assert_eq!(ids(&results, "/toolResult/toolUseId"), IDS);
            let errors: Vec<bool> = (results.iter())
                .map(|b| b["toolResult"]["status"] == "error")
                .collect();
            assert_eq!(errors, [false, true, true, true]);
        }
        // (A new adapter compiles with its folder and table entry alone,
        // scripts/sixth-adapter; this test then asks for its API's rule.)
        #[allow(unreachable_patterns)]
        other => panic!("{other}: write its API's rule for tool results here"),
    }
}

#[test]
fn a_runner_built_history_follows_each_apis_rules_for_tool_results() {
    let request = second_request();
    // The runner's results: one tool message, in call order.
    let results: Vec<&Part> = (request.messages.iter())
        .filter(|m| m.role == Role::Tool)
        .flat_map(|m| &m.parts)
        .collect();
    assert_eq!(results.len(), 4);
    for provider in Provider::ALL {
        if provider.adapter().is_none() {
            continue; // (a one-adapter build)
        }
        let mut config = ClientConfig::new(provider).with_api_key("test-key");
        if provider.needs_base_url() {
            config.base_url = Some("http://127.0.0.1:11434/v1".into());
        }
        if provider.needs_region() {
            config.region = Some("us-east-1".into());
        }
        let http = encode_request(&config, &request, true).unwrap();
        let body: Value = serde_json::from_str(&http.body).unwrap();
        check_results(provider, &body);
    }
}

#[test]
fn the_golden_case_is_the_runners_request() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/requests/runner_history.json"
    );
    let want = json!({"stream": true, "request": second_request()});
    let text = serde_json::to_string_pretty(&want).unwrap() + "\n";
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &text).unwrap();
        return;
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == text,
        "{path} differs from the runner's request: run `BLESS=1 cargo test --lib runner` \
         and then `BLESS=1 cargo test --test golden`, and read the diff"
    );
}
