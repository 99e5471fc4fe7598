//! `web::Client::run`, the tool loop from Rust, against the mock provider:
//! the behaviours `tests/js/runner.test.mjs` checks of the npm package's
//! `client.run`, carried out by the Rust driver (the decisions are the
//! core's `Runner` in both).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::json;
use skyl::web::{Decision, Handler, RunEvent, RunOptions};
use skyl::{Error, Part, Provider, Request, Role, RunLimits, StopReason, StreamEvent};
use wasm_bindgen_test::wasm_bindgen_test;

use super::support::*;

pub(super) const QUESTION: &str = "What is the weather in Kampala, and convert 30 km to miles?";

pub(super) fn tools(request: &mut Request) {
    request.tools = vec![
        skyl::Tool {
            name: "get_weather".into(),
            description: Some("Current weather for a city.".into()),
            parameters: Some(
                json!({"type": "object", "properties": {"city": {"type": "string"}},
                "required": ["city"], "additionalProperties": false}),
            ),
            ..skyl::Tool::default()
        },
        skyl::Tool {
            name: "convert_units".into(),
            description: Some("Convert a value between units.".into()),
            parameters: Some(
                json!({"type": "object", "properties": {"value": {"type": "number"},
                "from": {"type": "string"}, "to": {"type": "string"}},
                "required": ["value", "from", "to"]}),
            ),
            ..skyl::Tool::default()
        },
    ];
}

pub(super) fn question() -> Request {
    let mut request = ask(QUESTION);
    tools(&mut request);
    request
}

/// The weather (after `ms`) and the conversion, as handlers.
pub(super) fn handlers(ms: u32) -> Vec<Handler> {
    vec![
        Handler::new("get_weather", move |args, _| async move {
            sleep(ms).await;
            Ok(json!({"city": args["city"], "tempC": 21}).to_string())
        }),
        Handler::new("convert_units", |args, _| async move {
            let miles = args["value"].as_f64().unwrap_or(0.0) * 0.621371;
            Ok(json!({"value": (miles * 100.0).round() / 100.0}).to_string())
        }),
    ]
}

/// The tool results of `messages`: (call id, content, is_error).
pub(super) fn results(messages: &[skyl::Message]) -> Vec<(String, String, bool)> {
    (messages.iter())
        .filter(|m| m.role == Role::Tool)
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// The ids of the calls in `messages`.
pub(super) fn call_ids(messages: &[skyl::Message]) -> Vec<String> {
    (messages.iter())
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

#[wasm_bindgen_test]
async fn the_loop_runs_the_tools_and_ends_in_the_answer_in_every_format() {
    for provider in Provider::ALL {
        let client = client(provider, &[]);
        let mut run = client.run(&question(), handlers(40), RunOptions::default());
        let mut events = Vec::new();
        while let Some(event) = run.next().await {
            events.push(event.unwrap());
        }
        let outcome = run.result().await.unwrap();
        assert_eq!(outcome.stop_reason, StopReason::Done, "{provider:?}");
        let roles: Vec<Role> = outcome.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::Assistant, Role::Tool, Role::Assistant]);
        assert_eq!(outcome.steps.len(), 2);
        let answer = &outcome.response().unwrap().text;
        assert!(answer.contains("21 °C in Kampala"), "{answer}");
        // Completion order in the events (the weather is slower), call
        // order in the messages.
        let ended: Vec<String> = (events.iter())
            .filter_map(|e| match e {
                RunEvent::ToolResult { call, .. } => Some(call.name.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(ended, ["convert_units", "get_weather"], "{provider:?}");
        let answered: Vec<String> = results(&outcome.messages)
            .into_iter()
            .map(|r| r.0)
            .collect();
        assert_eq!(answered, call_ids(&outcome.messages));
        let steps: Vec<u32> = (events.iter())
            .filter_map(|e| match e {
                RunEvent::StepStart { step } => Some(*step),
                _ => None,
            })
            .collect();
        assert_eq!(steps, [1, 2]);
        let input: u64 = outcome.steps.iter().filter_map(|s| s.usage.input).sum();
        assert_eq!(outcome.usage.input, Some(input));
    }
}

#[wasm_bindgen_test]
async fn a_cut_off_turn_runs_none_of_its_calls() {
    for provider in Provider::ALL {
        let ran = Rc::new(Cell::new(0));
        let count = |name: &str| {
            let ran = Rc::clone(&ran);
            Handler::new(name, move |_, _| {
                ran.set(ran.get() + 1);
                async { Ok("ran".to_string()) }
            })
        };
        let client = client(provider, &[("cut_off", "1")]);
        let handlers = vec![count("get_weather"), count("convert_units")];
        let outcome = (client.run(&question(), handlers, RunOptions::default()))
            .result()
            .await
            .unwrap();
        assert_eq!(outcome.stop_reason, StopReason::Truncated, "{provider:?}");
        assert_eq!(ran.get(), 0);
        let r = results(&outcome.messages);
        assert_eq!(
            r.iter().map(|x| x.0.clone()).collect::<Vec<_>>(),
            call_ids(&outcome.messages)
        );
        assert!(r
            .iter()
            .all(|(_, text, err)| *err && text.contains("cut off (length)")));
    }
}

#[wasm_bindgen_test]
async fn a_read_only_tool_starts_while_the_turn_streams() {
    let client = client(Provider::Anthropic, &[("chunk", "40"), ("delay", "2")]);
    let mut list = handlers(0);
    list[0] = list[0].clone().read_only();
    let mut run = client.run(&question(), list, RunOptions::default());
    let mut order = Vec::new();
    while let Some(event) = run.next().await {
        match event.unwrap() {
            RunEvent::ToolStart { call, .. } => order.push(call.name),
            RunEvent::Stream {
                step: 1,
                event: StreamEvent::Finish { .. },
            } => order.push("finish".into()),
            _ => {}
        }
    }
    assert_eq!(order, ["get_weather", "finish", "convert_units"]);
}

/// The approval predicate is asked once per call: for the read-only tool
/// (its streamed call, for an early start) as for the other (the turn's).
#[wasm_bindgen_test]
async fn each_calls_approval_is_asked_once() {
    let client = client(Provider::Anthropic, &[("chunk", "40"), ("delay", "2")]);
    let asked: Rc<RefCell<Vec<String>>> = Rc::default();
    let mut list = handlers(0);
    for (i, h) in list.iter_mut().enumerate() {
        let log = Rc::clone(&asked);
        let tool = h.clone().needs_approval_when(move |_, call| {
            log.borrow_mut().push(call.id.clone());
            false
        });
        *h = if i == 0 { tool.read_only() } else { tool };
    }
    let outcome = (client.run(&question(), list, RunOptions::default()))
        .result()
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Done);
    assert_eq!(*asked.borrow(), call_ids(&outcome.messages));
}

#[wasm_bindgen_test]
async fn bad_calls_timeouts_and_denials_are_results_the_model_reads() {
    let client = client(Provider::OpenAi, &[]);
    let mut request = question();
    // The model sends a string city: this schema asks for a number.
    request.tools[0].parameters = Some(json!({"type": "object",
        "properties": {"city": {"type": "number"}}, "required": ["city"]}));
    let outcome = (client.run(&request, handlers(0), RunOptions::default()))
        .result()
        .await
        .unwrap();
    let r = results(&outcome.messages);
    assert!(r[0].2 && r[0].1.contains("invalid arguments"), "{r:?}");
    assert_eq!(outcome.stop_reason, StopReason::Done);

    let slow = vec![
        Handler::new("get_weather", |_, _| async {
            sleep(5_000).await;
            Ok("late".to_string())
        })
        .timeout_ms(30),
        handlers(0).remove(1).needs_approval(),
    ];
    let asked = Rc::new(RefCell::new(Vec::new()));
    let seen = Rc::clone(&asked);
    let options = RunOptions::default().with_approver(move |call, args| {
        seen.borrow_mut().push((call.name, args["value"].clone()));
        async { Decision::Deny(Some("not today".into())) }
    });
    let outcome = client
        .run(&question(), slow, options)
        .result()
        .await
        .unwrap();
    let r = results(&outcome.messages);
    assert!(r[0].2 && r[0].1.contains("timed out after 30 ms"), "{r:?}");
    assert_eq!(r[1].1, "denied: not today");
    assert_eq!(*asked.borrow(), [("convert_units".to_string(), json!(30))]);
}

#[wasm_bindgen_test]
async fn without_an_approver_the_run_pauses_and_resumes_with_decisions() {
    let client = client(Provider::Gemini, &[]);
    let mut list = handlers(0);
    list[0] = list[0].clone().needs_approval();
    let first = (client.run(&question(), list.clone(), RunOptions::default()))
        .result()
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::ApprovalPending);
    assert_eq!(first.pending.len(), 1);
    let mut history = question();
    history.messages.extend(first.messages.iter().cloned());
    let refused = client.run(&history, list.clone(), RunOptions::default());
    match refused.result().await {
        Err(f) => assert!(matches!(f.error, Error::InvalidRequest { .. }), "{f:?}"),
        Ok(o) => panic!("resumed without a decision: {o:?}"),
    }
    let id = first.pending[0].id.clone();
    let options = RunOptions::default().with_approvals(vec![(id.clone(), true)]);
    let resumed = client.run(&history, list, options).result().await.unwrap();
    assert_eq!(resumed.stop_reason, StopReason::Done);
    assert_eq!(results(&resumed.messages)[0].0, id);
}

#[wasm_bindgen_test]
async fn abort_reaches_the_running_tools_and_answers_them() {
    let client = client(Provider::Responses, &[]);
    let signal = Rc::new(RefCell::new(None));
    let keep = Rc::clone(&signal);
    let list = vec![
        Handler::new("get_weather", move |_, context| {
            *keep.borrow_mut() = context.signal;
            async {
                sleep(5_000).await;
                Ok("late".to_string())
            }
        }),
        handlers(0).remove(1),
    ];
    let mut run = client.run(&question(), list, RunOptions::default());
    while let Some(event) = run.next().await {
        if let Ok(RunEvent::ToolStart { call, .. }) = event {
            if call.name == "get_weather" {
                run.abort();
            }
        }
    }
    let failure = run.result().await.unwrap_err();
    assert!(
        matches!(failure.error, Error::Aborted { .. }),
        "{failure:?}"
    );
    assert!(signal.borrow().as_ref().unwrap().aborted());
    let r = results(&failure.partial.messages);
    assert!(
        r.iter().any(|(_, text, err)| text == "cancelled" && *err),
        "{r:?}"
    );
    assert_eq!(
        r.iter().map(|x| x.0.clone()).collect::<Vec<_>>(),
        call_ids(&failure.partial.messages)
    );
}

/// Mistakes in the run's own options are typed errors naming them, and
/// nothing is sent: no step at all, a handler for a tool the request does
/// not declare, a handler's timeout of 0.
#[wasm_bindgen_test]
async fn bad_run_options_are_refused_before_anything_is_sent() {
    let (scenario, client) = counted("runner-bad-options", Provider::OpenAi, &[]);
    let path_of = |failure: skyl::web::RunFailure| match failure.error {
        Error::InvalidRequest { path, message } => (path, message),
        other => panic!("{other:?}"),
    };
    let none = RunOptions::default().with_limits(RunLimits::new(0));
    let failure = (client.run(&question(), handlers(0), none)).result().await;
    assert_eq!(path_of(failure.unwrap_err()).0, "maxSteps");
    let mut list = handlers(0);
    list.push(Handler::new("get_wether", |_, _| async {
        Ok(String::new())
    }));
    let failure = (client.run(&question(), list, RunOptions::default()))
        .result()
        .await;
    let (path, message) = path_of(failure.unwrap_err());
    assert_eq!(path, "handlers[2].name");
    assert!(message.contains("get_weather, convert_units"), "{message}");
    let mut list = handlers(0);
    list[1] = Handler::new("convert_units", |_, _| async { Ok(String::new()) }).timeout_ms(0);
    let failure = (client.run(&question(), list, RunOptions::default()))
        .result()
        .await;
    assert_eq!(path_of(failure.unwrap_err()).0, "handlers[1].timeout_ms");
    assert_eq!(received(&scenario).await.len(), 0);
}

#[wasm_bindgen_test]
async fn the_step_limit_and_the_final_answer() {
    let client = client(Provider::Anthropic, &[]);
    let capped = RunOptions::default().with_limits(RunLimits::new(1));
    let outcome = client
        .run(&question(), handlers(0), capped)
        .result()
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::MaxSteps);
    assert!(results(&outcome.messages)
        .iter()
        .all(|r| r.1 == "not run: step limit"));
    let last = RunOptions::default().with_limits(RunLimits::new(1).with_final_answer());
    let outcome = client
        .run(&question(), handlers(0), last)
        .result()
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Done);
    assert!(!outcome.response().unwrap().text.is_empty());
}

/// A final answer that a provider of the chain cannot send (Bedrock has no
/// tool choice "none") is refused at the run's start: nothing runs or is
/// sent, where the run would have failed after its last step.
#[wasm_bindgen_test]
async fn a_final_answer_bedrock_cannot_send_is_refused_at_the_start() {
    let (scenario, own) = counted("runner-final-bedrock", Provider::Bedrock, &[]);
    let scenario_pair = [("scenario", scenario.as_str())];
    let chained = client(Provider::OpenAi, &scenario_pair).with_fallback(
        skyl::Fallback::new().then(config(Provider::Bedrock, &scenario_pair), quick_retries(0)),
    );
    let last = RunOptions::default().with_limits(RunLimits::new(1).with_final_answer());
    for (c, expected) in [(own, "finalAnswer"), (chained, "fallback[0].finalAnswer")] {
        let ran = Rc::new(Cell::new(0));
        let seen = Rc::clone(&ran);
        let list = vec![Handler::new("get_weather", move |_, _| {
            seen.set(seen.get() + 1);
            async { Ok(String::new()) }
        })];
        let failure = c.run(&question(), list, last.clone()).result().await;
        let failure = failure.unwrap_err();
        let Error::InvalidRequest { path, message } = failure.error else {
            panic!("{:?}", failure.error)
        };
        assert_eq!(path, expected);
        assert!(message.contains("no tool choice \"none\""), "{message}");
        assert_eq!(ran.get(), 0);
    }
    assert_eq!(received(&scenario).await.len(), 0);
}

#[wasm_bindgen_test]
async fn a_pause_waits_for_the_running_calls_so_none_runs_twice() {
    let client = client(Provider::Responses, &[]);
    let runs = Rc::new(Cell::new(0));
    let count = Rc::clone(&runs);
    let list = vec![
        Handler::new("get_weather", move |_, _| {
            count.set(count.get() + 1);
            async {
                sleep(40).await;
                Ok("21 C".to_string())
            }
        })
        .read_only(),
        handlers(0).remove(1).needs_approval(),
    ];
    let mut run = client.run(&question(), list.clone(), RunOptions::default());
    let mut order = Vec::new();
    while let Some(event) = run.next().await {
        match event.unwrap() {
            RunEvent::ToolResult { call, .. } => order.push(call.name),
            RunEvent::StepFinish { .. } => order.push("step_finish".into()),
            _ => {}
        }
    }
    let first = run.result().await.unwrap();
    assert_eq!(first.stop_reason, StopReason::ApprovalPending);
    assert_eq!(
        results(&first.messages).len(),
        1,
        "the weather's result is kept"
    );
    assert!(order.contains(&"get_weather".to_string()), "{order:?}");
    let mut history = question();
    history.messages.extend(first.messages.iter().cloned());
    let id = first.pending[0].id.clone();
    let options = RunOptions::default().with_approvals(vec![(id, true)]);
    let resumed = client.run(&history, list, options).result().await.unwrap();
    assert_eq!(resumed.stop_reason, StopReason::Done);
    assert_eq!(runs.get(), 1, "the weather ran once");
}
