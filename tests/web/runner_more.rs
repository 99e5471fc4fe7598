//! `web::Client::run` against the mock provider, continued from
//! `runner.rs`: the bytes of the next request, early results and the
//! run's end, unknown and client tools, concurrency, retries, a failed
//! chain and progress events.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::json;
use skyl::web::{Handler, RunEvent, RunOptions};
use skyl::{Error, Part, Provider, Role, StopReason, StreamEvent};
use wasm_bindgen_test::wasm_bindgen_test;

use super::runner::{handlers, question, results};
use super::support::*;

#[wasm_bindgen_test]
async fn the_next_request_is_the_same_bytes_whatever_the_latencies() {
    for provider in Provider::ALL {
        let mut bodies = Vec::new();
        for (slow, fast) in [(60, 0), (0, 60)] {
            let (scenario, client) = counted("runner-bytes", provider, &[]);
            let list = vec![
                Handler::new("get_weather", move |args, _| async move {
                    sleep(slow).await;
                    Ok(json!({"city": args["city"], "tempC": 21}).to_string())
                }),
                Handler::new("convert_units", move |_, _| async move {
                    sleep(fast).await;
                    Ok(json!({"value": 18.64}).to_string())
                }),
            ];
            let outcome = (client.run(&question(), list, RunOptions::default()))
                .result()
                .await
                .unwrap();
            assert_eq!(outcome.stop_reason, StopReason::Done, "{provider:?}");
            let sent = received(&scenario).await;
            assert_eq!(sent.len(), 2, "{provider:?}");
            bodies.push(sent[1]["body"].to_string());
        }
        assert_eq!(bodies[0], bodies[1], "{provider:?}");
    }
}

#[wasm_bindgen_test]
async fn a_cut_off_turn_discards_a_read_only_tools_early_result() {
    let ran = Rc::new(Cell::new(0));
    let count = Rc::clone(&ran);
    let mut list = handlers(0);
    list[0] = Handler::new("get_weather", move |_, _| {
        count.set(count.get() + 1);
        async { Ok("sunny".to_string()) }
    })
    .read_only();
    // Gemini hands out its whole calls before the finish that cuts the
    // turn off: the read-only one starts early, and its result is dropped.
    let client = client(Provider::Gemini, &[("cut_off", "1")]);
    let outcome = (client.run(&question(), list, RunOptions::default()))
        .result()
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Truncated);
    assert_eq!(ran.get(), 1, "it started early");
    let r = results(&outcome.messages);
    assert!(
        !r.is_empty() && r.iter().all(|r| r.2 && r.1 != "sunny"),
        "{r:?}"
    );
}

#[wasm_bindgen_test]
async fn a_tool_still_running_at_the_end_is_aborted_and_a_queued_one_never_starts() {
    let started = Rc::new(RefCell::new(Vec::new()));
    let signals = Rc::new(RefCell::new(Vec::new()));
    let slow = |name: &'static str| {
        let (started, signals) = (Rc::clone(&started), Rc::clone(&signals));
        Handler::new(name, move |_, context| {
            started.borrow_mut().push(name);
            signals.borrow_mut().push(context.signal);
            async {
                sleep(5_000).await;
                Ok("late".to_string())
            }
        })
        .read_only()
    };
    // Gemini hands out its whole calls before the finish that cuts the
    // turn off: both are read-only, so the first starts early.
    let client = client(Provider::Gemini, &[("cut_off", "1")]);
    let outcome = one_at_a_time(&client, vec![slow("get_weather"), slow("convert_units")]).await;
    assert_eq!(outcome.stop_reason, StopReason::Truncated);
    assert_eq!(*started.borrow(), ["get_weather"]);
    assert!(signals.borrow()[0].as_ref().unwrap().aborted());
    sleep(20).await;
    assert_eq!(
        *started.borrow(),
        ["get_weather"],
        "the queued call never starts"
    );
}

#[wasm_bindgen_test]
async fn an_unknown_tools_result_names_the_available_tools() {
    let mut request = question();
    request.messages = ask("hi").messages;
    request.messages.push(skyl::Message {
        role: Role::Assistant,
        parts: vec![Part::ToolCall {
            id: "call_x".into(),
            name: "launch".into(),
            arguments: "{}".into(),
            provider_data: None,
        }],
    });
    let client = client(Provider::OpenAi, &[]);
    let outcome = (client.run(&request, handlers(0), RunOptions::default()))
        .result()
        .await
        .unwrap();
    let r = results(&outcome.messages);
    assert_eq!(r[0].0, "call_x");
    assert!(r[0].2, "{r:?}");
    assert!(
        r[0].1
            .contains("no tool \"launch\"; the tools are: get_weather, convert_units"),
        "{r:?}"
    );
}

#[wasm_bindgen_test]
async fn a_tool_without_a_handler_is_handed_back() {
    let client = client(Provider::Anthropic, &[]);
    let list = vec![handlers(0).remove(1)];
    let outcome = (client.run(&question(), list, RunOptions::default()))
        .result()
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::ClientTool);
    let pending: Vec<&str> = outcome.pending.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(pending, ["get_weather"]);
    // The runner's own result went in: only the handed-back call is open.
    let answered: Vec<String> = results(&outcome.messages)
        .into_iter()
        .map(|r| r.0)
        .collect();
    let convert = (outcome.messages.iter())
        .flat_map(|m| &m.parts)
        .find_map(|p| match p {
            Part::ToolCall { id, name, .. } if name == "convert_units" => Some(id.clone()),
            _ => None,
        });
    assert_eq!(answered, Vec::from_iter(convert));
}

#[wasm_bindgen_test]
async fn max_concurrency_holds_tools_back() {
    let (now, most) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let slow = |name: &str| {
        let (now, most) = (Rc::clone(&now), Rc::clone(&most));
        Handler::new(name, move |_, _| {
            now.set(now.get() + 1);
            most.set(most.get().max(now.get()));
            let now = Rc::clone(&now);
            async move {
                sleep(20).await;
                now.set(now.get() - 1);
                Ok("ok".to_string())
            }
        })
    };
    let client = client(Provider::OpenAi, &[]);
    let outcome = one_at_a_time(&client, vec![slow("get_weather"), slow("convert_units")]).await;
    assert_eq!(outcome.stop_reason, StopReason::Done);
    assert_eq!(most.get(), 1);
}

/// The question's run with at most one tool running at a time.
async fn one_at_a_time(client: &skyl::web::Client, list: Vec<Handler>) -> skyl::web::RunOutcome {
    let options = RunOptions::default().with_max_concurrency(1);
    client
        .run(&question(), list, options)
        .result()
        .await
        .unwrap()
}

#[wasm_bindgen_test]
async fn a_step_is_retried_only_before_its_first_event() {
    let (scenario, client) = counted("runner-retry", Provider::OpenAi, &[("fail", "500")]);
    let client = client.with_retry(quick_retries(1));
    let outcome = (client.run(&question(), handlers(0), RunOptions::default()))
        .result()
        .await
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Done);
    // A 500, then the two steps.
    assert_eq!(received(&scenario).await.len(), 3);
}

/// A step whose fallback chain fails for good: the run's failure says who
/// failed before the last provider, as the step's stream does.
#[wasm_bindgen_test]
async fn a_failed_chain_names_its_attempts() {
    let name = scenario("runner-chain");
    let fallback = skyl::Fallback::new().then(
        config(
            Provider::Anthropic,
            &[("scenario", &format!("{name}#1")), ("fail", "529")],
        ),
        quick_retries(0),
    );
    let client = client(Provider::OpenAi, &[("scenario", &name), ("fail", "500")])
        .with_retry(quick_retries(0))
        .with_fallback(fallback);
    let failure = (client.run(&question(), handlers(0), RunOptions::default()))
        .result()
        .await
        .unwrap_err();
    assert!(
        matches!(&failure.error, Error::Api(api) if api.status == Some(529)),
        "{:?}",
        failure.error
    );
    let failed: Vec<_> = (failure.failed_attempts.iter())
        .map(|a| format!("{} {}", a.provider, a.error.code))
        .collect();
    assert_eq!(failed, ["openai server"]);
    assert!(failure.partial.steps.is_empty());
}

#[wasm_bindgen_test]
async fn each_calls_progress_passes_through_with_its_step_before_it_runs() {
    for provider in Provider::ALL {
        let client = client(provider, &[]);
        let mut request = question();
        request.partial.tools = true;
        let mut run = client.run(&request, handlers(0), RunOptions::default());
        let mut events = Vec::new();
        while let Some(event) = run.next().await {
            events.push(event.unwrap());
        }
        assert_eq!(run.result().await.unwrap().stop_reason, StopReason::Done);
        let at = |f: &dyn Fn(&RunEvent) -> bool| events.iter().position(f);
        let calls: Vec<(u32, skyl::ToolCall)> = (events.iter())
            .filter_map(|e| match e {
                RunEvent::Stream {
                    step,
                    event: StreamEvent::ToolCall { call, .. },
                } => Some((*step, call.clone())),
                _ => None,
            })
            .collect();
        assert!(calls.len() >= 2, "{provider:?}");
        for (step, call) in calls {
            let start = at(&|e| {
                matches!(e, RunEvent::Stream { step: s, event: StreamEvent::ToolCallStart { id, name, .. } }
                    if *s == step && *id == call.id && *name == call.name)
            });
            let deltas: String = (events.iter())
                .filter_map(|e| match e {
                    RunEvent::Stream {
                        step: s,
                        event:
                            StreamEvent::ToolCallDelta {
                                id,
                                arguments_delta,
                                ..
                            },
                    } if *s == step && *id == call.id => Some(arguments_delta.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(deltas, call.arguments, "{provider:?}");
            let whole = at(
                &|e| matches!(e, RunEvent::Stream { event: StreamEvent::ToolCall { call: c, .. }, .. } if c.id == call.id),
            );
            let ran = at(&|e| matches!(e, RunEvent::ToolStart { call: c, .. } if c.id == call.id));
            let [start, whole, ran] = [start, whole, ran].map(|i| i.expect("each event came"));
            assert!(
                start < whole && whole < ran,
                "{provider:?}: {start} {whole} {ran}"
            );
        }
    }
}
