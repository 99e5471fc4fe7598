//! The [`Runner`] as the JS half drives it (`client.run`). Each step's
//! request goes from the runner straight into a [`BoundaryRun`], and its
//! response straight back ([`BoundaryLoop::finish_step`]), so neither
//! crosses the boundary as JSON to be read again. What crosses: a code for
//! what to do next (`LOOP` in `policy.js`), the jobs to run or ask about,
//! each tool's outcome, and the run's result at the end.

use serde_json::Value;

use super::run::{BoundaryRun, Limits};
use super::Options;
use super::{config_and_request, error_json};
use crate::error::Error;
use crate::json::read;
use crate::json::write::object_text;
use crate::model::{to_json, ToolCall};
use crate::runner::{Next, Outcome, RunLimits, Runner, StopReason, ToolSpec};

/// What the JS half does next: the `LOOP` table of `policy.js`.
pub(crate) const LOOP_REQUEST: u32 = 0;
pub(crate) const LOOP_RUN: u32 = 1;
pub(crate) const LOOP_APPROVE: u32 = 2;
pub(crate) const LOOP_WAIT: u32 = 3;
pub(crate) const LOOP_STOP: u32 = 4;
pub(crate) const LOOP_FAIL: u32 = 5;

/// One `client.run` for the JS half.
#[derive(Debug)]
pub struct BoundaryLoop {
    /// `Err`: the options or the request could not be read; `start` fails
    /// with it, before anything is sent.
    runner: Result<(Runner, Options), Error>,
    label: &'static str,
    /// The request of the last [`LOOP_REQUEST`], until it is taken.
    request: Option<crate::model::Request>,
    output: String,
}

/// The run's own options, as `client.run` passes them: `{"run": [names of
/// the tools with execute], "readOnly": [names], "maxSteps"?, "finalAnswer"?,
/// "approvals"?: {id: bool}, "asks": [ids of the history's calls that need
/// an approval]}`.
struct RunOptions {
    specs: Vec<ToolSpec>,
    limits: RunLimits,
    approvals: Vec<(String, bool)>,
    asks: Vec<String>,
}

/// A list of strings; anything else in it is left out.
fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn run_options(
    json: &str,
    request: &crate::model::Request,
    options: &Options,
) -> Result<RunOptions, Error> {
    let v = read::parse(json).unwrap_or(Value::Null);
    let max_steps = match v.get("maxSteps") {
        None | Some(Value::Null) => 20,
        Some(n) => n
            .as_u64()
            .filter(|n| *n >= 1)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                Error::invalid_request("maxSteps", "must be a whole number, 1 or more")
            })?,
    };
    let mut limits = RunLimits::new(max_steps);
    limits.final_answer = match v.get("finalAnswer") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(Error::invalid_request(
                "finalAnswer",
                "must be true or false",
            ))
        }
    };
    if limits.final_answer {
        (options.fallback).check_final_answer(&options.config, request)?;
    }
    let run = strings(v.get("run"));
    let read_only = strings(v.get("readOnly"));
    let specs = (request.tools.iter())
        .map(|t| {
            let mut spec = ToolSpec::new(t.name.clone(), t.parameters.clone());
            spec.executable = run.contains(&t.name);
            spec.read_only = read_only.contains(&t.name);
            spec
        })
        .collect();
    let mut approvals = Vec::new();
    match v.get("approvals") {
        None | Some(Value::Null) => {}
        Some(Value::Object(given)) => {
            for (id, ok) in given {
                let ok = ok.as_bool().ok_or_else(|| {
                    Error::invalid_request(format!("approvals.{id}"), "must be true or false")
                })?;
                approvals.push((id.clone(), ok));
            }
        }
        Some(_) => {
            return Err(Error::invalid_request(
                "approvals",
                "must be an object of call ids to true or false",
            ))
        }
    }
    Ok(RunOptions {
        specs,
        limits,
        approvals,
        asks: strings(v.get("asks")),
    })
}

impl BoundaryLoop {
    /// A run of `request_json` with the client's `config_json`, as for
    /// [`super::encode`], and the run's own `options_json` (see
    /// [`RunOptions`]).
    pub fn new(config_json: &str, request_json: &str, options_json: &str) -> Self {
        let (label, input) = config_and_request(config_json, request_json);
        let runner = input.and_then(|(options, request)| {
            let o = run_options(options_json, &request, &options)?;
            let asks = |c: &ToolCall| o.asks.contains(&c.id);
            let runner = Runner::new(request, o.specs, o.limits, &o.approvals, &asks)?;
            Ok((runner, options))
        });
        BoundaryLoop {
            runner,
            label,
            request: None,
            output: String::new(),
        }
    }

    fn on(&mut self, f: impl FnOnce(&mut Runner) -> Next) -> u32 {
        match &mut self.runner {
            Ok((runner, _)) => {
                let next = f(runner);
                self.code(next)
            }
            Err(e) => {
                self.output = error_json(e, self.label);
                LOOP_FAIL
            }
        }
    }

    fn code(&mut self, next: Next) -> u32 {
        let run = matches!(next, Next::Run(_));
        match next {
            Next::Request(request) => {
                self.request = Some(*request);
                LOOP_REQUEST
            }
            Next::Run(jobs) | Next::Approve(jobs) if jobs.is_empty() => LOOP_WAIT,
            Next::Run(jobs) | Next::Approve(jobs) => {
                self.output = object_text(|o| {
                    let mut list = o.array("jobs");
                    for job in &jobs {
                        let mut item = list.object();
                        to_json::tool_call(&mut item.object("call"), &job.call);
                        item.uint("step", job.step.into());
                    }
                });
                if run {
                    LOOP_RUN
                } else {
                    LOOP_APPROVE
                }
            }
            Next::Stop(_) => LOOP_STOP,
            _ => LOOP_WAIT,
        }
    }

    /// The first thing to do.
    pub fn start(&mut self) -> u32 {
        self.on(Runner::start)
    }

    /// The request of the last [`LOOP_REQUEST`], as a run machine with the
    /// client's retries and timers.
    pub fn request(&mut self, limits: &Limits) -> BoundaryRun {
        let input = match (&self.runner, self.request.take()) {
            (Ok((_, options)), Some(request)) => Ok((options.clone(), request)),
            _ => Err(Error::invalid_request("driver", "no request to send now")),
        };
        BoundaryRun::of(input, self.label, true, limits)
    }

    /// A call of the streaming turn came whole: whether it starts now (a
    /// read-only tool's; `asks`: it needs an approval).
    pub fn call_whole(&mut self, id: &str, name: &str, arguments: &str, asks: bool) -> bool {
        let Ok((runner, _)) = &mut self.runner else {
            return false;
        };
        let call = ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        };
        runner.call_whole(&call, &|_| asks).is_some()
    }

    /// The step's stream is done: its response goes to the runner.
    /// `asks_json` lists the ids of its calls that need an approval.
    pub fn finish_step(&mut self, run: &mut BoundaryRun, asks_json: &str) -> u32 {
        let asks = strings(read::parse(asks_json).ok().as_ref());
        match run.take_response() {
            Some(response) => self.on(|r| r.finish_step(response, &|c| asks.contains(&c.id))),
            None => {
                let e = Error::invalid_request("driver", "the step has no response yet");
                self.output = error_json(&e, self.label);
                LOOP_FAIL
            }
        }
    }

    /// The decision on a call the runner asked about (`reason`: why it was
    /// denied, or empty).
    pub fn decide(&mut self, call_id: &str, approved: bool, reason: &str) -> u32 {
        let reason = Some(reason).filter(|r| !r.is_empty());
        self.on(|r| r.decide(call_id, approved, reason))
    }

    /// No one to ask: the run stops for approval.
    pub fn pause_for_approval(&mut self) -> u32 {
        self.on(Runner::pause_for_approval)
    }

    /// A call ended: its result text, or (`failed`) its error message.
    pub fn tool_done(&mut self, call_id: &str, failed: bool, text: &str) -> u32 {
        let outcome = if failed {
            Outcome::Failed(text.into())
        } else {
            Outcome::Done(text.into())
        };
        self.on(|r| r.tool_done(call_id, outcome))
    }

    /// The run was aborted for `reason` (empty: none), or a step failed:
    /// every call of the turn gets a result, so the messages replay.
    /// Returns the run's `AbortError` (`{"error": ...}`).
    pub fn abort(&mut self, reason: &str) -> String {
        let mut began = false;
        if let Ok((runner, _)) = &mut self.runner {
            began = runner.step() > 0;
            runner.abort();
        }
        error_json(&Error::aborted(Some(reason), began), self.label)
    }

    /// `{"stopReason"?, "messages", "steps", "usage", "pending"}`: the
    /// run's new messages, every step's response, the usage summed, and
    /// the calls handed back or waiting for a decision.
    /// (Empty lists before a runner could be made.)
    pub fn result(&self) -> String {
        let r = self.runner.as_ref().ok().map(|(r, _)| r);
        object_text(|o| {
            if let Some(reason) = r.and_then(Runner::stop_reason) {
                o.str("stopReason", reason_name(reason));
            }
            let mut list = o.array("messages");
            for m in r.map_or(&[][..], Runner::messages) {
                to_json::message(&mut list.object(), m);
            }
            drop(list);
            let mut list = o.array("steps");
            for s in r.map_or(&[][..], Runner::steps) {
                to_json::response(&mut list.object(), s, to_json::Fields::All);
            }
            drop(list);
            if let Some(r) = r {
                to_json::usage(&mut o.object("usage"), r.usage());
            }
            let mut list = o.array("pending");
            for c in r.map_or(&[][..], Runner::pending) {
                to_json::tool_call(&mut list.object(), c);
            }
        })
    }

    /// The text of the last step: the jobs, or the error.
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.output)
    }
}

fn reason_name(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Done => "done",
        StopReason::MaxSteps => "max_steps",
        StopReason::Truncated => "truncated",
        StopReason::ClientTool => "client_tool",
        StopReason::ApprovalPending => "approval_pending",
        _ => "aborted",
    }
}

// (Recorded-shape Chat Completions bodies: the builds with that adapter.)
#[cfg(all(test, feature = "openai"))]
mod tests {
    use super::*;
    use crate::shell::run::{DELIVER, DONE, READ, SEND};
    use serde_json::json;

    const CONFIG: &str = r#"{"provider":"openai","apiKey":"sk-test-0001","model":"m"}"#;
    const LIMITS: Limits = Limits {
        max_retries: 0,
        total: 0.0,
        first_byte: 0.0,
        idle: 0.0,
        seed: 1.0,
    };

    fn request() -> String {
        json!({
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]}],
            "tools": [{"name": "get_weather", "parameters": {"type": "object",
                "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
        })
        .to_string()
    }

    /// Streams one step through its run machine, as the JS half does.
    fn step(l: &mut BoundaryLoop, body: &str, asks: &str) -> (u32, String) {
        let mut run = l.request(&LIMITS);
        assert_eq!(run.start(false), SEND);
        let sent = run.take_output();
        assert_eq!(run.responded(200, "[]", 0.0), READ);
        let mut code = run.feed(body.as_bytes());
        while code == DELIVER {
            code = run.delivered();
        }
        if code == READ {
            code = run.ended();
            while code == DELIVER {
                code = run.delivered();
            }
        }
        assert_eq!(code, DONE);
        (l.finish_step(&mut run, asks), sent)
    }

    fn sse(frames: &[serde_json::Value]) -> String {
        let mut out: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
        out.push_str("data: [DONE]\n\n");
        out
    }

    fn call_turn() -> String {
        sse(&[
            json!({"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}),
            json!({"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
        ])
    }

    fn text_turn() -> String {
        sse(&[
            json!({"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Sunny."},"finish_reason":"stop"}]}),
        ])
    }

    #[test]
    fn a_run_goes_from_the_runner_to_the_run_machine_and_back() {
        let mut l = BoundaryLoop::new(CONFIG, &request(), r#"{"run":["get_weather"]}"#);
        assert_eq!(l.start(), LOOP_REQUEST);
        let (code, _) = step(&mut l, &call_turn(), "[]");
        assert_eq!(code, LOOP_RUN);
        let jobs: Value = serde_json::from_str(&l.take_output()).unwrap();
        assert_eq!(jobs["jobs"][0]["call"]["id"], "call_1");
        assert_eq!(jobs["jobs"][0]["step"], 1);
        assert_eq!(l.tool_done("call_1", false, "22 C"), LOOP_REQUEST);
        let (code, sent) = step(&mut l, &text_turn(), "[]");
        assert_eq!(code, LOOP_STOP);
        // The second request carried the turn and its result.
        let body: Value = serde_json::from_str(sent.split('\0').nth(1).unwrap()).unwrap();
        assert_eq!(body["messages"][2]["tool_call_id"], "call_1");
        assert_eq!(body["messages"][2]["content"], "22 C");
        let r: Value = serde_json::from_str(&l.result()).unwrap();
        assert_eq!(r["stopReason"], "done");
        assert_eq!(r["messages"].as_array().unwrap().len(), 3);
        assert_eq!(r["steps"][1]["text"], "Sunny.");
    }

    #[test]
    fn approvals_are_asked_by_the_ids_the_driver_names() {
        let mut l = BoundaryLoop::new(CONFIG, &request(), r#"{"run":["get_weather"]}"#);
        l.start();
        let (code, _) = step(&mut l, &call_turn(), r#"["call_1"]"#);
        assert_eq!(code, LOOP_APPROVE);
        assert!(l.take_output().contains("call_1"));
        assert_eq!(l.decide("call_1", false, "not now"), LOOP_REQUEST);
        assert!(l.result().contains("denied: not now"));
    }

    #[test]
    fn bad_options_fail_the_start_naming_the_field() {
        let mut l = BoundaryLoop::new(CONFIG, &request(), r#"{"maxSteps":0}"#);
        assert_eq!(l.start(), LOOP_FAIL);
        let e: Value = serde_json::from_str(&l.take_output()).unwrap();
        assert_eq!(e["error"]["path"], "maxSteps");
        // The result is still well-formed: empty lists.
        let r: Value = serde_json::from_str(&l.result()).unwrap();
        assert_eq!(r["messages"], json!([]));
        // A request out of turn is a driver error, never a panic.
        let mut run = l.request(&LIMITS);
        assert_eq!(run.start(false), crate::shell::run::FAIL);
        // Options of the wrong type are refused by name, never read as
        // false or left out.
        for (options, path) in [
            (r#"{"finalAnswer":"yes"}"#, "finalAnswer"),
            (r#"{"approvals":{"call_1":"true"}}"#, "approvals.call_1"),
            (r#"{"approvals":["call_1"]}"#, "approvals"),
        ] {
            let mut l = BoundaryLoop::new(CONFIG, &request(), options);
            assert_eq!(l.start(), LOOP_FAIL, "{options}");
            let e: Value = serde_json::from_str(&l.take_output()).unwrap();
            assert_eq!(e["error"]["path"], path);
        }
        let fine = r#"{"finalAnswer":true,"approvals":{"call_1":false}}"#;
        assert_eq!(
            BoundaryLoop::new(CONFIG, &request(), fine).start(),
            LOOP_REQUEST
        );
    }

    #[test]
    fn an_abort_answers_the_started_calls_and_says_why() {
        let mut l = BoundaryLoop::new(CONFIG, &request(), r#"{"run":["get_weather"]}"#);
        l.start();
        assert_eq!(step(&mut l, &call_turn(), "[]").0, LOOP_RUN);
        let e: Value = serde_json::from_str(&l.abort("user left")).unwrap();
        assert_eq!(e["error"]["name"], "AbortError");
        assert!(l.result().contains("cancelled"));
        assert_eq!(l.tool_done("call_1", false, "late"), LOOP_STOP);
    }
}
