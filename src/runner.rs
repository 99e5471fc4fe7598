//! The tool loop's decisions, sans-IO: which calls run and when, what goes
//! back to the model, and when the run stops. A driver (the npm package's
//! `client.run`, `skyl::web`, or a Rust user with any HTTP client) streams
//! each request, runs the tools the [`Runner`] hands it, and tells it what
//! happened; the runner never sleeps, sends or runs anything itself.
//!
//! The npm package's `client.run` drives it (through `shell/tool_loop.rs`),
//! and so does `skyl::web::Client::run` (`web/tool_run.rs`). A forced
//! `tool_choice` (required, or a named tool) goes only with a request whose
//! last message is the user's, as the OpenAI Agents SDK's
//! `reset_tool_choice` does: forced after the model's calls too, it could
//! never answer. Still open: the results of a
//! turn that mixes client tools and the driver's go back in two messages;
//! and [`ToolSpec`] repeats what [`Request::tools`] declares, unchecked
//! (the npm shell builds it from them).
//!
//! The rules, each the answer to a bug peers' loops have had:
//!
//! - **Whole calls from finished turns only.** A call runs only if it came
//!   whole (a [`Response::tool_calls`] entry, never an incomplete one), and
//!   only from a turn that finished [`FinishReason::ToolCalls`] or
//!   [`FinishReason::Stop`]. A turn cut off any other way runs none of its
//!   calls: the run stops [`StopReason::Truncated`] with that turn kept.
//! - **Early start only where safe.** A read-only tool may start as soon as
//!   its call is whole ([`Runner::call_whole`]); its result is kept only if
//!   the turn then finishes safely.
//! - **Each call id runs at most once** in a run.
//! - **One result per call, in call order**, whatever order the tools end
//!   in: the next request is the same bytes whatever their latencies.
//! - **Checked before running**: an unknown tool, arguments that break the
//!   tool's schema ([`crate::check_arguments`]), a denial, a step limit or
//!   an abort become error results the model reads, so the history always
//!   replays.

use serde_json::Value;

use crate::error::Error;
use crate::json::read;
use crate::json::write::quoted;
use crate::model::schema::{check_arguments, joined};
use crate::model::{
    FinishReason, Message, Part, Request, Response, Role, ToolCall, ToolChoice, ToolChoiceMode,
    Usage,
};

mod history;
mod ids;
mod types;
mod view;

use history::{add_usage, denied, error_part, not_run, result, unanswered};
pub use types::{Job, Next, Outcome, RunLimits, StopReason, ToolSpec};

/// What a call of the current turn is at.
#[derive(Clone, Debug)]
enum Slot {
    /// Waiting for its approval.
    Asking,
    /// Started, no outcome yet.
    Running,
    /// Its result part is decided.
    Result(Part),
}

/// The tool loop of one run.
///
/// A driver sends each [`Next::Request`] (streaming it, it may report each
/// whole call with [`Runner::call_whole`]), reports the response with
/// [`Runner::finish_step`], runs each [`Next::Run`] job and reports it
/// with [`Runner::tool_done`], until [`Next::Stop`]. Here the model is
/// played by two recorded-shape bodies:
///
/// ```
/// use skyl::{decode_response, Message, Next, Outcome, Provider, Request};
/// use skyl::{RunLimits, Runner, StopReason, ToolSpec};
///
/// let request = Request {
///     messages: vec![Message::user("Weather in Paris?")],
///     ..Request::default()
/// };
/// let tools = vec![ToolSpec::new("get_weather", None)];
/// let mut runner = Runner::new(request, tools, RunLimits::default(), &[], &|_| false)?;
/// let mut bodies = [
///     r#"{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}"#,
///     r#"{"choices":[{"message":{"role":"assistant","content":"Sunny, 22 C."},"finish_reason":"stop"}]}"#,
/// ]
/// .into_iter();
/// let mut next = runner.start();
/// loop {
///     next = match next {
///         Next::Request(request) => {
///             // ... encode_request(&config, &request, true), send, decode:
///             let _ = request;
///             let response = decode_response(Provider::OpenAi, bodies.next().unwrap())?;
///             runner.finish_step(response, &|_| false)
///         }
///         Next::Run(jobs) => {
///             let mut next = Next::Wait;
///             for job in jobs {
///                 assert_eq!(job.args["city"], "Paris");
///                 next = runner.tool_done(&job.call.id, Outcome::Done("22 C".into()));
///             }
///             next
///         }
///         Next::Stop(reason) => break assert_eq!(reason, StopReason::Done),
///         other => unreachable!("{other:?}"),
///     };
/// }
/// assert_eq!(runner.messages().len(), 3); // assistant, tool results, assistant
/// assert_eq!(runner.steps()[1].text, "Sunny, 22 C.");
/// # Ok::<(), skyl::Error>(())
/// ```
#[derive(Debug)]
pub struct Runner {
    request: Request,
    tools: Vec<ToolSpec>,
    limits: RunLimits,
    /// Model requests sent.
    step: u32,
    /// The new messages of the run: assistant turns and tool results.
    messages: Vec<Message>,
    steps: Vec<Response>,
    usage: Usage,
    /// Every call id that started in this run. (Vectors, not hash sets:
    /// a run has few calls, and hashing would link more into the wasm.)
    started: Vec<String>,
    /// The current turn's calls, in order, and what each is at.
    calls: Vec<(Job, Slot)>,
    /// Calls started early in the streaming turn, with their outcomes.
    early: Vec<(ToolCall, Option<Outcome>)>,
    /// The calls handed back or waiting, when the run stopped for them.
    pending: Vec<ToolCall>,
    /// The next request turns the tools off (the final answer).
    last: bool,
    /// No one to ask: the run stops for approval once the calls already
    /// started have ended.
    pausing: bool,
    stopped: Option<StopReason>,
}

impl Runner {
    /// A runner for `request` with `tools` (the driver's, by name) and
    /// `limits`. `approvals` decides, by call id, the calls of the history
    /// left unanswered when a run stopped for approval. A call of the
    /// history without a result that needs a decision and has none is an
    /// [`Error::InvalidRequest`] naming it: it is never skipped; so are a
    /// `max_steps` of 0 and a request `validate_request` refuses (before
    /// a call of the history runs).
    pub fn new(
        request: Request,
        tools: Vec<ToolSpec>,
        limits: RunLimits,
        approvals: &[(String, bool)],
        needs_approval: &dyn Fn(&ToolCall) -> bool,
    ) -> Result<Runner, Error> {
        limits.check()?;
        crate::model::validate::validate_request(&request)?;
        let mut runner = Runner {
            request,
            tools,
            limits,
            step: 0,
            messages: Vec::new(),
            steps: Vec::new(),
            usage: Usage::default(),
            started: Vec::new(),
            calls: Vec::new(),
            early: Vec::new(),
            pending: Vec::new(),
            last: false,
            pausing: false,
            stopped: None,
        };
        for (call, path) in unanswered(&runner.request.messages) {
            let decided = (approvals.iter())
                .find(|(id, _)| *id == call.id)
                .map(|(_, ok)| *ok);
            let slot = match runner.tool(&call.name) {
                Some(t) if !t.executable => {
                    return Err(Error::invalid_request(
                        path,
                        format!(
                        "the call {} of the client tool {} has no result: add it before running",
                        quoted(&call.id),
                        quoted(&call.name)
                    ),
                    ))
                }
                Some(_) if needs_approval(&call) && decided.is_none() => {
                    return Err(Error::invalid_request(
                        path,
                        format!(
                            "the call {} has no result and no decision: pass approvals[{}]",
                            quoted(&call.id),
                            quoted(&call.id)
                        ),
                    ))
                }
                None => Slot::Result(runner.unknown(&call)),
                _ if decided == Some(false) => Slot::Result(denied(&call.id)),
                _ => match runner.checked(&call) {
                    Err(message) => Slot::Result(error_part(&call.id, message)),
                    Ok(_) => Slot::Running,
                },
            };
            runner.add_call(call, 0, slot);
        }
        Ok(runner)
    }

    /// The first thing to do: run the history's approved calls, or send the
    /// first request.
    pub fn start(&mut self) -> Next {
        self.advance()
    }

    /// The step being streamed or last streamed (1-based; 0 before the
    /// first request).
    pub fn step(&self) -> u32 {
        self.step
    }

    /// A call of the streaming turn came whole. A read-only tool whose
    /// arguments pass and that needs no approval may start now: its job is
    /// returned, and its outcome is reported with [`Runner::tool_done`]
    /// like any other.
    pub fn call_whole(
        &mut self,
        call: &ToolCall,
        needs_approval: &dyn Fn(&ToolCall) -> bool,
    ) -> Option<Job> {
        // (Not in a turn whose calls will not run: the final answer's, or
        // one at the step limit; not an id used before, which the turn's
        // end renames.)
        if self.stopped.is_some()
            || self.last
            || self.step >= self.limits.max_steps
            || self.id_used(&call.id)
            || self.early.iter().any(|(c, _)| c.id == call.id)
            || needs_approval(call)
        {
            return None;
        }
        let tool = self.tool(&call.name)?;
        if !(tool.executable && tool.read_only) {
            return None;
        }
        let args = self.checked(call).ok()?;
        self.started.push(call.id.clone());
        self.early.push((call.clone(), None));
        Some(Job {
            call: call.clone(),
            args,
            step: self.step,
        })
    }

    /// The step's turn is over: `response` is its whole response.
    /// `needs_approval` says which of its calls need one; it sees each
    /// call as the provider sent it, before a repeated id is renamed.
    pub fn finish_step(
        &mut self,
        response: Response,
        needs_approval: &dyn Fn(&ToolCall) -> bool,
    ) -> Next {
        if let Some(reason) = self.stopped {
            return Next::Stop(reason);
        }
        // Asked of the calls as the provider sent them, before any rename.
        let asks: Vec<bool> = response.tool_calls.iter().map(needs_approval).collect();
        let mut response = response;
        self.unique_ids(&mut response);
        self.usage = add_usage(&self.usage, &response.usage);
        self.messages.push(response.message.clone());
        let calls = response.tool_calls.clone();
        let safe = matches!(
            response.finish_reason,
            FinishReason::ToolCalls | FinishReason::Stop
        );
        self.steps.push(response);
        let early = std::mem::take(&mut self.early);
        if !safe {
            // None of a cut-off turn's calls runs; early results are
            // discarded, never sent. Each call gets a result, so the
            // history replays and no later run takes them up.
            let why = format!(
                "not run: the turn was cut off ({})",
                crate::model::to_json::finish_reason_name(
                    self.steps
                        .last()
                        .map_or(FinishReason::Other, |r| r.finish_reason)
                )
            );
            for call in calls {
                let part = not_run(&call.id, &why);
                self.add_call(call, self.step, Slot::Result(part));
            }
            self.flush();
            return self.stop(StopReason::Truncated);
        }
        if calls.is_empty() {
            return self.stop(StopReason::Done);
        }
        if self.last {
            // The final answer's turn called tools all the same.
            for call in calls {
                let part = not_run(&call.id, "not run: step limit");
                self.add_call(call, self.step, Slot::Result(part));
            }
            self.flush();
            return self.stop(StopReason::MaxSteps);
        }
        let at_limit = self.step >= self.limits.max_steps;
        for (call, asks) in calls.into_iter().zip(asks) {
            let slot = if self.calls.iter().any(|(j, _)| j.call.id == call.id) {
                Slot::Result(not_run(&call.id, "not run: the turn repeats this call id"))
            } else if let Some((_, outcome)) = early.iter().find(|(c, _)| *c == call) {
                // (At the limit too: an early result is kept. Only for the
                // very call that started: a call that reuses its id for
                // another tool or other arguments takes nothing from it.)
                match outcome {
                    Some(outcome) => Slot::Result(result(&call.id, outcome)),
                    None => Slot::Running,
                }
            } else if at_limit {
                Slot::Result(not_run(&call.id, "not run: step limit"))
            } else if self.started.contains(&call.id) {
                Slot::Result(not_run(
                    &call.id,
                    "not run: this call id already ran in this run",
                ))
            } else {
                match self.tool(&call.name) {
                    None => Slot::Result(self.unknown(&call)),
                    Some(t) if !t.executable => Slot::Asking, // handed back below
                    Some(_) => match self.checked(&call) {
                        Err(message) => Slot::Result(error_part(&call.id, message)),
                        Ok(_) if asks => Slot::Asking,
                        Ok(_) => Slot::Running,
                    },
                }
            };
            self.add_call(call, self.step, slot);
        }
        if at_limit {
            if self.limits.final_answer {
                self.last = true;
                return self.advance();
            }
            self.flush();
            return self.stop(StopReason::MaxSteps);
        }
        self.advance()
    }

    /// The driver's decision on a call it was asked to approve.
    pub fn decide(&mut self, call_id: &str, approved: bool, reason: Option<&str>) -> Next {
        let asked = (self.calls.iter()).position(|(j, s)| {
            j.call.id == call_id
                && matches!(s, Slot::Asking)
                && self.tool(&j.call.name).is_some_and(|t| t.executable)
        });
        let Some(at) = asked.filter(|_| self.stopped.is_none()) else {
            return self.idle(); // not asked about: nothing changes
        };
        if let Some((_, slot)) = self.calls.get_mut(at) {
            *slot = if approved {
                Slot::Running
            } else {
                Slot::Result(match reason {
                    Some(r) => error_part(call_id, format!("denied: {r}")),
                    None => denied(call_id),
                })
            };
        }
        self.advance()
    }

    /// A call the runner handed out ended.
    pub fn tool_done(&mut self, call_id: &str, outcome: Outcome) -> Next {
        if let Some((_, slot)) = self.early.iter_mut().find(|(c, _)| c.id == call_id) {
            if slot.is_none() {
                *slot = Some(outcome);
            }
            return self.idle();
        }
        let stopped = self.stopped.is_some();
        let running = (self.calls.iter_mut())
            .find(|(j, s)| j.call.id == call_id && matches!(s, Slot::Running));
        match running {
            Some((_, slot)) if !stopped => {
                *slot = Slot::Result(result(call_id, &outcome));
                self.advance()
            }
            // Unknown, finished already, or after the stop: nothing changes.
            _ => self.idle(),
        }
    }

    /// There is no one to ask ([`Next::Approve`] with no approver): the
    /// run stops [`StopReason::ApprovalPending`]. Calls that already
    /// started end first ([`Next::Wait`] until then), so that none is left
    /// to run again on resume. The results decided go into
    /// [`Runner::messages`]; the calls that need a decision
    /// ([`Runner::pending`]), and those never started, stay unanswered.
    /// The caller resumes with the same history and its decisions
    /// ([`Runner::new`]'s `approvals`).
    pub fn pause_for_approval(&mut self) -> Next {
        if self.stopped.is_some() {
            return self.idle();
        }
        if self.started_running() {
            self.pausing = true;
            return Next::Wait;
        }
        self.pausing = false;
        self.pending = (self.calls.iter())
            .filter(|(_, s)| matches!(s, Slot::Asking))
            .map(|(j, _)| j.call.clone())
            .collect();
        // The results decided so far go in; the calls waiting for a
        // decision, and those still running, stay unanswered for the
        // resumed run.
        self.flush();
        self.early.clear();
        self.stop(StopReason::ApprovalPending)
    }

    /// The run was aborted: every call of the turn without a result gets
    /// one ("cancelled" if it had started), so the messages still replay.
    pub fn abort(&mut self) {
        self.early.clear();
        for (job, slot) in &mut self.calls {
            if !matches!(slot, Slot::Result(_)) {
                let why = if matches!(slot, Slot::Running) {
                    "cancelled"
                } else {
                    "not run: the run was aborted"
                };
                *slot = Slot::Result(error_part(&job.call.id, why.into()));
            }
        }
        self.flush();
        self.stopped.get_or_insert(StopReason::Aborted);
    }

    // ------------------------------------------------------------ inside

    /// What to do when nothing changed: the stop, or wait.
    fn idle(&self) -> Next {
        self.stopped.map_or(Next::Wait, Next::Stop)
    }

    fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }

    fn add_call(&mut self, call: ToolCall, step: u32, slot: Slot) {
        let args = read::parse(&call.arguments).unwrap_or(Value::Null);
        self.calls.push((Job { call, args, step }, slot));
    }

    /// The call's arguments, parsed and checked against its tool's schema;
    /// else the error result's text.
    fn checked(&self, call: &ToolCall) -> Result<Value, String> {
        let args =
            read::parse(&call.arguments).map_err(|e| format!("the arguments are not JSON: {e}"))?;
        if let Some(schema) = self.tool(&call.name).and_then(|t| t.parameters.as_ref()) {
            check_arguments(schema, &args)
                .map_err(|e| format!("invalid arguments: {e}. Fix them and call again."))?;
        }
        Ok(args)
    }

    fn unknown(&self, call: &ToolCall) -> Part {
        let names = joined(self.tools.iter().map(|t| t.name.as_str()), ", ");
        error_part(
            &call.id,
            format!(
                "there is no tool {}; the tools are: {names}",
                quoted(&call.name)
            ),
        )
    }

    /// Whether a call of the turn that started has no outcome yet.
    fn started_running(&self) -> bool {
        (self.calls.iter())
            .any(|(j, s)| matches!(s, Slot::Running) && self.started.contains(&j.call.id))
    }

    /// Moves the turn on: asks, runs, waits, or sends the results and the
    /// next request.
    fn advance(&mut self) -> Next {
        if let Some(reason) = self.stopped {
            return Next::Stop(reason);
        }
        if self.pausing {
            return self.pause_for_approval();
        }
        let handed_back: Vec<ToolCall> = (self.calls.iter())
            .filter(|(j, s)| {
                matches!(s, Slot::Asking) && self.tool(&j.call.name).is_some_and(|t| !t.executable)
            })
            .map(|(j, _)| j.call.clone())
            .collect();
        let asking: Vec<Job> = (self.calls.iter())
            .filter(|(j, s)| matches!(s, Slot::Asking) && !handed_back.contains(&j.call))
            .map(|(j, _)| j.clone())
            .collect();
        if !asking.is_empty() {
            return Next::Approve(asking);
        }
        let to_start: Vec<Job> = (self.calls.iter())
            .filter(|(j, s)| matches!(s, Slot::Running) && !self.started.contains(&j.call.id))
            .map(|(j, _)| j.clone())
            .collect();
        if !to_start.is_empty() {
            self.started
                .extend(to_start.iter().map(|j| j.call.id.clone()));
            return Next::Run(to_start);
        }
        if self.calls.iter().any(|(_, s)| matches!(s, Slot::Running)) {
            return Next::Wait;
        }
        if !handed_back.is_empty() {
            // The driver's results go in; the caller answers the rest and
            // runs again.
            self.pending = handed_back;
            self.flush();
            return self.stop(StopReason::ClientTool);
        }
        self.flush();
        if self.step >= self.limits.max_steps && !self.last {
            return self.stop(StopReason::MaxSteps);
        }
        if self.step > self.limits.max_steps {
            return self.stop(StopReason::MaxSteps);
        }
        self.step += 1;
        let mut request = self.request.clone();
        request.messages.extend(self.messages.iter().cloned());
        if self.last {
            request.tool_choice = Some(ToolChoice::Mode(ToolChoiceMode::None));
        } else if (request.messages.last()).is_some_and(|m| m.role != Role::User) {
            // A forced choice (required, or a named tool) is for the
            // model's answer to the user: after its calls (this run's, or
            // those of the history a run resumes), the model chooses;
            // forced at every step, it could never answer.
            if let Some(ToolChoice::Mode(ToolChoiceMode::Required) | ToolChoice::Tool(_)) =
                request.tool_choice
            {
                request.tool_choice = None;
            }
        }
        Next::Request(Box::new(request))
    }

    /// The turn's decided results, in call order, as one tool message.
    fn flush(&mut self) {
        let parts: Vec<Part> = (std::mem::take(&mut self.calls).into_iter())
            .filter_map(|(_, slot)| match slot {
                Slot::Result(part) => Some(part),
                _ => None,
            })
            .collect();
        if !parts.is_empty() {
            self.messages.push(Message {
                role: Role::Tool,
                parts,
            });
        }
    }

    fn stop(&mut self, reason: StopReason) -> Next {
        self.stopped = Some(reason);
        Next::Stop(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{encode_request, ClientConfig, Provider};
    use serde_json::json;

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    /// A turn with `calls`, finished `finish`, with 10 input and 5 output
    /// tokens.
    fn turn(text: &str, calls: &[ToolCall], finish: FinishReason) -> Response {
        let mut parts = vec![Part::Text {
            text: text.into(),
            provider_data: None,
        }];
        parts.extend(calls.iter().map(|c| Part::ToolCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.clone(),
            provider_data: None,
        }));
        Response {
            message: Message {
                role: Role::Assistant,
                parts,
            },
            text: text.into(),
            tool_calls: calls.to_vec(),
            finish_reason: finish,
            usage: Usage {
                input: Some(10),
                output: Some(5),
                ..Usage::default()
            },
            ..Response::default()
        }
    }

    fn weather() -> ToolSpec {
        ToolSpec::new(
            "get_weather",
            Some(
                json!({"type": "object", "properties": {"city": {"type": "string"}},
                "required": ["city"], "additionalProperties": false}),
            ),
        )
    }

    fn runner(tools: Vec<ToolSpec>, limits: RunLimits) -> Runner {
        let request = Request {
            messages: vec![Message::user("Weather in Paris and Rome?")],
            ..Request::default()
        };
        Runner::new(request, tools, limits, &[], &|_| false).unwrap()
    }

    fn never(_: &ToolCall) -> bool {
        false
    }

    /// The tool results of the last message: (call id, content, is_error).
    fn results(r: &Runner) -> Vec<(String, String, bool)> {
        let last = r.messages().last().unwrap();
        assert_eq!(last.role, Role::Tool);
        (last.parts.iter())
            .map(|p| match p {
                Part::ToolResult {
                    call_id,
                    content,
                    is_error,
                    ..
                } => (call_id.clone(), content.clone(), *is_error),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    fn request_of(next: Next) -> Request {
        match next {
            Next::Request(r) => *r,
            other => panic!("not a request: {other:?}"),
        }
    }

    fn jobs_of(next: Next) -> Vec<Job> {
        match next {
            Next::Run(jobs) | Next::Approve(jobs) => jobs,
            other => panic!("no jobs: {other:?}"),
        }
    }

    /// A request that will not go is refused before anything runs: the
    /// approved call of the history would run first, for nothing.
    #[test]
    fn an_invalid_request_runs_no_call_of_the_history() {
        fn weather_tool() -> crate::Tool {
            crate::Tool {
                name: "get_weather".into(),
                ..crate::Tool::default()
            }
        }
        let call = call("call_1", "get_weather", r#"{"city":"Paris"}"#);
        let request = Request {
            messages: vec![
                Message::user("Weather?"),
                turn("", &[call], FinishReason::ToolCalls).message,
            ],
            tools: vec![weather_tool(), weather_tool()],
            ..Request::default()
        };
        let approvals = [("call_1".to_string(), true)];
        let made = Runner::new(
            request,
            vec![weather()],
            RunLimits::default(),
            &approvals,
            &|_| true,
        );
        assert!(
            matches!(&made, Err(Error::InvalidRequest { path, .. }) if path.starts_with("tools[1]")),
            "{made:?}"
        );
    }

    /// No step at all is no run: refused by name before anything is sent,
    /// in every driver (the JS shell and skyl::web build on this check).
    #[test]
    fn a_step_limit_of_zero_is_refused() {
        let request = Request {
            messages: vec![Message::user("Hi")],
            ..Request::default()
        };
        let made = Runner::new(request, vec![weather()], RunLimits::new(0), &[], &never);
        assert!(
            matches!(&made, Err(Error::InvalidRequest { path, .. }) if path == "maxSteps"),
            "{made:?}"
        );
    }

    #[test]
    fn a_turn_without_calls_is_done() {
        let mut r = runner(vec![weather()], RunLimits::default());
        let first = request_of(r.start());
        assert_eq!(first.messages.len(), 1);
        assert_eq!(r.step(), 1);
        let next = r.finish_step(turn("Hi", &[], FinishReason::Stop), &never);
        assert_eq!(next, Next::Stop(StopReason::Done));
        assert_eq!(r.messages().len(), 1);
        assert_eq!(r.usage().input, Some(10));
    }

    /// Results go back in call order, whatever order the tools end in,
    /// and the next request is the history plus the new messages.
    #[test]
    fn results_go_back_in_call_order_whatever_order_tools_end() {
        let mut r = runner(vec![weather()], RunLimits::default());
        r.start();
        let calls = [
            call("a", "get_weather", r#"{"city":"Paris"}"#),
            call("b", "get_weather", r#"{"city":"Rome"}"#),
        ];
        let jobs = jobs_of(r.finish_step(turn("", &calls, FinishReason::ToolCalls), &never));
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[1].args, json!({"city": "Rome"}));
        assert_eq!(jobs[0].step, 1);
        assert_eq!(r.tool_done("b", Outcome::Done("22 C".into())), Next::Wait);
        let second = request_of(r.tool_done("a", Outcome::Failed("timeout".into())));
        assert_eq!(
            results(&r),
            [
                ("a".into(), "timeout".into(), true),
                ("b".into(), "22 C".into(), false)
            ]
        );
        assert_eq!(second.messages.len(), 3, "user, assistant, tool");
        assert_eq!(r.step(), 2);
        assert_eq!(
            r.finish_step(turn("Sunny.", &[], FinishReason::Stop), &never),
            Next::Stop(StopReason::Done)
        );
        assert_eq!(r.steps().len(), 2);
        assert_eq!((r.usage().input, r.usage().output), (Some(20), Some(10)));
        // The second request is valid for every provider this build has.
        for p in Provider::ALL.into_iter().filter(|p| p.adapter().is_some()) {
            let config = ClientConfig::new(p)
                .with_model("m")
                .with_base_url("http://127.0.0.1:1/v1");
            let sent = encode_request(&config, &second, false);
            assert!(sent.is_ok(), "{p}: {sent:?}");
        }
    }

    /// A turn cut off (here by the output limit) runs none of its calls,
    /// even whole ones, and drops a read-only tool's early result.
    #[test]
    fn a_cut_off_turn_runs_none_of_its_calls() {
        for finish in [
            FinishReason::Length,
            FinishReason::ContentFilter,
            FinishReason::Refusal,
            FinishReason::Error,
            FinishReason::Pause,
            FinishReason::Other,
        ] {
            let mut r = runner(vec![weather().read_only()], RunLimits::default());
            r.start();
            let c = call("a", "get_weather", r#"{"city":"Paris"}"#);
            assert!(
                r.call_whole(&c, &never).is_some(),
                "read-only: starts early"
            );
            let next = r.finish_step(turn("", &[c], finish), &never);
            assert_eq!(next, Next::Stop(StopReason::Truncated), "{finish:?}");
            assert_eq!(r.messages().len(), 2, "the turn is kept, with results");
            let (_, text, is_error) = &results(&r)[0];
            assert!(
                text.starts_with("not run: the turn was cut off ("),
                "{text}"
            );
            assert!(is_error);
            assert_eq!(
                r.tool_done("a", Outcome::Done("x".into())),
                Next::Stop(StopReason::Truncated)
            );
        }
    }

    /// Only a read-only tool starts while the turn streams; its early
    /// outcome is used, and it does not run again.
    #[test]
    fn only_read_only_tools_start_early() {
        let write = ToolSpec::new("write", None);
        let mut r = runner(vec![weather().read_only(), write], RunLimits::default());
        r.start();
        let read = call("a", "get_weather", r#"{"city":"Paris"}"#);
        let w = call("b", "write", "{}");
        let early = r.call_whole(&read, &never).unwrap();
        assert_eq!(early.call.id, "a");
        assert_eq!(r.call_whole(&read, &never), None, "once");
        assert_eq!(r.call_whole(&w, &never), None, "not read-only");
        assert_eq!(
            r.call_whole(&call("c", "get_weather", r#"{"town":"x"}"#), &never),
            None,
            "invalid arguments never start"
        );
        assert_eq!(r.tool_done("a", Outcome::Done("9 C".into())), Next::Wait);
        let jobs = jobs_of(r.finish_step(turn("", &[read, w], FinishReason::ToolCalls), &never));
        assert_eq!(
            jobs.iter().map(|j| j.call.id.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
        request_of(r.tool_done("b", Outcome::Done("ok".into())));
        assert_eq!(
            results(&r),
            [
                ("a".into(), "9 C".into(), false),
                ("b".into(), "ok".into(), false)
            ]
        );
    }

    /// Unknown tools, arguments that break the schema and a call id seen
    /// before get error results the model reads; the loop goes on.
    #[test]
    fn bad_calls_become_error_results_and_the_loop_goes_on() {
        let mut r = runner(vec![weather()], RunLimits::default());
        r.start();
        let calls = [
            call("a", "get_wether", "{}"),
            call("b", "get_weather", r#"{"city":1}"#),
        ];
        let second = request_of(r.finish_step(turn("", &calls, FinishReason::ToolCalls), &never));
        let got = results(&r);
        assert_eq!(
            got[0].1,
            "there is no tool \"get_wether\"; the tools are: get_weather"
        );
        assert_eq!(
            got[1].1,
            "invalid arguments: $.city: must be string, not number (type). Fix them and call again."
        );
        assert!(got.iter().all(|g| g.2));
        assert_eq!(second.messages.len(), 3);
        // An id used in an earlier turn (one a provider made up per turn)
        // is renamed, in the message too, and runs as the new call it is.
        let again = [call("c", "get_weather", r#"{"city":"x"}"#)];
        let jobs = jobs_of(r.finish_step(turn("", &again, FinishReason::ToolCalls), &never));
        request_of(r.tool_done(&jobs[0].call.id, Outcome::Done("1".into())));
        let jobs = jobs_of(r.finish_step(turn("", &again, FinishReason::ToolCalls), &never));
        assert_eq!(jobs[0].call.id, "c#2");
        let turn_parts = &r.messages()[r.messages().len() - 1].parts;
        assert!(
            turn_parts
                .iter()
                .any(|p| matches!(p, Part::ToolCall { id, .. } if id == "c#2")),
            "{turn_parts:?}"
        );
        request_of(r.tool_done("c#2", Outcome::Done("2".into())));
        assert_eq!(results(&r), [("c#2".into(), "2".into(), false)]);
        // A report for a call that is not running changes nothing.
        assert_eq!(
            r.tool_done("c#2", Outcome::Done("again".into())),
            Next::Wait
        );
        assert_eq!(r.tool_done("zzz", Outcome::Done("x".into())), Next::Wait);
        assert_eq!(r.decide("zzz", true, None), Next::Wait);
        assert_eq!(r.step(), 4);
        // The same id twice in one turn: the second gets an error result.
        let twice = [
            call("d", "get_weather", r#"{"city":"x"}"#),
            call("d", "get_weather", r#"{"city":"y"}"#),
        ];
        let jobs = jobs_of(r.finish_step(turn("", &twice, FinishReason::ToolCalls), &never));
        assert_eq!(jobs.len(), 1);
        request_of(r.tool_done("d", Outcome::Done("3".into())));
        let got = results(&r);
        assert_eq!(got[1].1, "not run: the turn repeats this call id");
    }

    /// A forced tool choice (required, or a named tool) goes with the first
    /// request only: forced again, the model could never answer, and the
    /// run would end only at the step limit. Auto and none stay as given.
    #[test]
    fn a_forced_tool_choice_holds_for_the_first_step_only() {
        let named = ToolChoice::try_from(json!({"type": "tool", "name": "get_weather"})).unwrap();
        let kept = |choice: ToolChoice| {
            let mut r = runner(vec![weather()], RunLimits::new(5));
            r.request.tool_choice = Some(choice);
            let first = request_of(r.start());
            let c = [call("a", "get_weather", r#"{"city":"Paris"}"#)];
            jobs_of(r.finish_step(turn("", &c, FinishReason::ToolCalls), &never));
            let second = request_of(r.tool_done("a", Outcome::Done("22 C".into())));
            (first.tool_choice, second.tool_choice)
        };
        for forced in [ToolChoice::Mode(ToolChoiceMode::Required), named] {
            assert_eq!(kept(forced.clone()), (Some(forced), None));
        }
        let auto = ToolChoice::Mode(ToolChoiceMode::Auto);
        assert_eq!(kept(auto.clone()), (Some(auto.clone()), Some(auto)));
        // A run resumed after the model's answer (its calls answered, or
        // decided now) is past its first request: no forced choice.
        let c = call("a", "get_weather", r#"{"city":"Paris"}"#);
        let asked = turn("", &[c], FinishReason::ToolCalls).message;
        let answered = Message {
            role: Role::Tool,
            parts: vec![result("a", &Outcome::Done("22 C".into()))],
        };
        for (history, approvals) in [
            (vec![asked.clone()], vec![("a".to_string(), true)]),
            (vec![asked, answered], vec![]),
        ] {
            let mut request = Request {
                messages: vec![Message::user("Weather in Paris?")],
                tool_choice: Some(ToolChoice::Mode(ToolChoiceMode::Required)),
                ..Request::default()
            };
            request.messages.extend(history);
            let mut r = Runner::new(
                request,
                vec![weather()],
                RunLimits::new(5),
                &approvals,
                &never,
            )
            .unwrap();
            let mut next = r.start();
            if let Next::Run(_) = next {
                next = r.tool_done("a", Outcome::Done("22 C".into()));
            }
            assert_eq!(request_of(next).tool_choice, None);
        }
    }

    /// The step limit counts requests; the calls not run get results; with
    /// a final answer one more request goes out with the tools off.
    #[test]
    fn the_step_limit_leaves_a_valid_history() {
        let c = [call("a", "get_weather", r#"{"city":"Paris"}"#)];
        let limits = RunLimits {
            max_steps: 1,
            final_answer: false,
        };
        let mut r = runner(vec![weather()], limits);
        r.start();
        let next = r.finish_step(turn("", &c, FinishReason::ToolCalls), &never);
        assert_eq!(next, Next::Stop(StopReason::MaxSteps));
        assert_eq!(
            results(&r),
            [("a".into(), "not run: step limit".into(), true)]
        );
        let mut r = runner(
            vec![weather()],
            RunLimits {
                final_answer: true,
                ..limits
            },
        );
        r.start();
        let last = request_of(r.finish_step(turn("", &c, FinishReason::ToolCalls), &never));
        assert_eq!(
            last.tool_choice,
            Some(ToolChoice::Mode(ToolChoiceMode::None))
        );
        assert_eq!(last.messages.len(), 3);
        assert_eq!(
            r.finish_step(turn("It is sunny.", &[], FinishReason::Stop), &never),
            Next::Stop(StopReason::Done)
        );
        assert_eq!(r.steps().len(), 2);
    }

    /// Calls that need approval are asked about; a denial is an error
    /// result; with no one to ask the run stops, and resumes with the
    /// caller's decisions.
    #[test]
    fn approvals_are_asked_denied_or_resumed() {
        let c = [
            call("a", "get_weather", r#"{"city":"Paris"}"#),
            call("b", "get_weather", r#"{"city":"Rome"}"#),
        ];
        let rome = |call: &ToolCall| call.arguments.contains("Rome");
        let mut r = runner(vec![weather()], RunLimits::default());
        r.start();
        let asked = jobs_of(r.finish_step(turn("", &c, FinishReason::ToolCalls), &rome));
        assert_eq!(asked.len(), 1);
        let run = jobs_of(r.decide("b", false, Some("not Rome")));
        assert_eq!(
            run.iter().map(|j| j.call.id.as_str()).collect::<Vec<_>>(),
            ["a"]
        );
        request_of(r.tool_done("a", Outcome::Done("9 C".into())));
        assert_eq!(
            results(&r)[1],
            ("b".into(), "denied: not Rome".into(), true)
        );

        // No approver: stop before any call runs, then resume.
        let mut r = runner(vec![weather()], RunLimits::default());
        let first = request_of(r.start());
        assert!(matches!(
            r.finish_step(turn("", &c, FinishReason::ToolCalls), &rome),
            Next::Approve(_)
        ));
        assert_eq!(
            r.pause_for_approval(),
            Next::Stop(StopReason::ApprovalPending)
        );
        assert_eq!(r.pending().len(), 1);
        assert_eq!(r.messages().len(), 1, "the turn, its calls unanswered");
        let mut history = first.clone();
        history.messages.extend(r.messages().iter().cloned());
        let none = [];
        let err = Runner::new(
            history.clone(),
            vec![weather()],
            RunLimits::default(),
            &none,
            &rome,
        )
        .unwrap_err();
        assert_eq!(
            err,
            Error::invalid_request(
                "messages[1].parts[2]",
                "the call \"b\" has no result and no decision: pass approvals[\"b\"]"
            )
        );
        let yes = [("b".to_string(), true)];
        let mut r =
            Runner::new(history, vec![weather()], RunLimits::default(), &yes, &rome).unwrap();
        let jobs = jobs_of(r.start());
        assert_eq!(
            jobs.iter()
                .map(|j| (j.call.id.as_str(), j.step))
                .collect::<Vec<_>>(),
            [("a", 0), ("b", 0)]
        );
        r.tool_done("b", Outcome::Done("20 C".into()));
        let next = request_of(r.tool_done("a", Outcome::Done("9 C".into())));
        assert_eq!(next.messages.len(), 3, "user, assistant, the results");
        assert_eq!(r.step(), 1);
    }

    /// A call of a tool the driver cannot run is handed back after the
    /// others' results; a history still missing its result is refused.
    #[test]
    fn client_tools_are_handed_back() {
        let pick = ToolSpec::new("pick_file", None).client();
        let mut r = runner(vec![weather(), pick.clone()], RunLimits::default());
        let first = request_of(r.start());
        let c = [
            call("a", "pick_file", "{}"),
            call("b", "get_weather", r#"{"city":"Rome"}"#),
        ];
        let jobs = jobs_of(r.finish_step(turn("", &c, FinishReason::ToolCalls), &never));
        assert_eq!(jobs.len(), 1);
        assert_eq!(
            r.tool_done("b", Outcome::Done("20 C".into())),
            Next::Stop(StopReason::ClientTool)
        );
        assert_eq!(r.pending()[0].id, "a");
        assert_eq!(results(&r), [("b".into(), "20 C".into(), false)]);
        let mut history = first;
        history.messages.extend(r.messages().iter().cloned());
        let err = Runner::new(
            history,
            vec![weather(), pick],
            RunLimits::default(),
            &[],
            &never,
        )
        .unwrap_err();
        assert!(err.to_string().contains("client tool"), "{err}");
    }

    /// An abort gives every call of the turn a result, so the history
    /// replays, and nothing more is sent.
    #[test]
    fn an_abort_leaves_a_replayable_history() {
        let mut r = runner(vec![weather()], RunLimits::default());
        r.start();
        let c = [
            call("a", "get_weather", r#"{"city":"Paris"}"#),
            call("b", "get_weather", r#"{"city":"Rome"}"#),
        ];
        jobs_of(r.finish_step(turn("", &c, FinishReason::ToolCalls), &never));
        r.tool_done("a", Outcome::Done("9 C".into()));
        r.abort();
        assert_eq!(
            results(&r),
            [
                ("a".into(), "9 C".into(), false),
                ("b".into(), "cancelled".into(), true)
            ]
        );
        assert_eq!(r.stop_reason(), Some(StopReason::Aborted));
        assert_eq!(
            r.tool_done("b", Outcome::Done("x".into())),
            Next::Stop(StopReason::Aborted)
        );
    }

    /// The review's cases: an approval is never skipped by an early start;
    /// a pause keeps the results already decided; the history's calls are
    /// checked like a turn's; a Gemini-style id repeated in the next step
    /// is renamed; an early result at the step limit is kept.
    #[test]
    fn approvals_pauses_history_and_ids_hold_up() {
        let all = |_: &ToolCall| true;
        let mut r = runner(vec![weather().read_only()], RunLimits::default());
        r.start();
        let a = call("a", "get_weather", r#"{"city":"Paris"}"#);
        assert_eq!(r.call_whole(&a, &all), None, "needs approval: not early");

        // A pause keeps what was decided (here an unknown tool's error).
        let mut r = runner(vec![weather()], RunLimits::default());
        let first = request_of(r.start());
        let turn_calls = [call("x", "gone", "{}"), a.clone()];
        let asked = jobs_of(r.finish_step(turn("", &turn_calls, FinishReason::ToolCalls), &all));
        assert_eq!(asked.len(), 1);
        assert_eq!(
            r.pause_for_approval(),
            Next::Stop(StopReason::ApprovalPending)
        );
        assert_eq!(
            r.pause_for_approval(),
            Next::Stop(StopReason::ApprovalPending)
        );
        assert_eq!(results(&r).len(), 1, "the unknown tool's result is kept");
        let mut history = first.clone();
        history.messages.extend(r.messages().iter().cloned());
        let yes = [("a".to_string(), true)];
        let mut resumed =
            Runner::new(history, vec![weather()], RunLimits::default(), &yes, &all).unwrap();
        let jobs = jobs_of(resumed.start());
        assert_eq!(
            jobs.iter().map(|j| j.call.id.as_str()).collect::<Vec<_>>(),
            ["a"]
        );

        // The history's unanswered calls are checked like a turn's.
        let mut history = first.clone();
        history.messages.push(
            turn(
                "",
                &[
                    call("u", "gone", "{}"),
                    call("v", "get_weather", r#"{"city":1}"#),
                ],
                FinishReason::ToolCalls,
            )
            .message,
        );
        let mut r =
            Runner::new(history, vec![weather()], RunLimits::default(), &[], &never).unwrap();
        request_of(r.start());
        let got = results(&r);
        assert!(got[0].1.starts_with("there is no tool"), "{got:?}");
        assert!(got[1].1.starts_with("invalid arguments: $.city"), "{got:?}");

        // Gemini names its calls by the tool: the next step's is renamed.
        let mut r = runner(vec![weather()], RunLimits::default());
        r.start();
        let g = [call("get_weather", "get_weather", r#"{"city":"Paris"}"#)];
        let jobs = jobs_of(r.finish_step(turn("", &g, FinishReason::ToolCalls), &never));
        request_of(r.tool_done(&jobs[0].call.id, Outcome::Done("9 C".into())));
        let jobs = jobs_of(r.finish_step(turn("", &g, FinishReason::ToolCalls), &never));
        assert_eq!(jobs[0].call.id, "get_weather#2");
        // The approval is asked of the call as the provider sent it: a
        // driver names the ids it saw, before the rename.
        let mut r = runner(vec![weather()], RunLimits::default());
        r.start();
        let seen = |c: &ToolCall| c.id == "get_weather";
        let jobs = jobs_of(r.finish_step(turn("", &g, FinishReason::ToolCalls), &never));
        request_of(r.tool_done(&jobs[0].call.id, Outcome::Done("9 C".into())));
        let asked = r.finish_step(turn("", &g, FinishReason::ToolCalls), &seen);
        assert!(matches!(&asked, Next::Approve(j) if j[0].call.id == "get_weather#2"));

        // At the step limit an early result is kept, not relabelled.
        let limits = RunLimits {
            max_steps: 1,
            final_answer: false,
        };
        let mut r = runner(vec![weather().read_only()], limits);
        r.start();
        assert_eq!(
            r.call_whole(&a, &never),
            None,
            "the last step's calls never run"
        );
        let mut r = runner(
            vec![weather().read_only()],
            RunLimits {
                max_steps: 2,
                ..limits
            },
        );
        r.start();
        let early = r.call_whole(&a, &never).unwrap();
        assert_eq!(
            r.tool_done(&early.call.id, Outcome::Done("9 C".into())),
            Next::Wait
        );
        request_of(r.finish_step(
            turn("", std::slice::from_ref(&a), FinishReason::ToolCalls),
            &never,
        ));
        assert_eq!(results(&r), [("a".into(), "9 C".into(), false)]);
    }

    /// The review's second round: a pause waits for the calls already
    /// started, so none runs twice on resume; an early result goes only to
    /// the very call that started, so a call reusing its id is still asked.
    #[test]
    fn a_pause_waits_for_started_calls_and_early_results_match_the_call() {
        let asks = |c: &ToolCall| c.name == "delete_file";
        let tools = vec![weather().read_only(), ToolSpec::new("delete_file", None)];
        let mut r = runner(tools.clone(), RunLimits::default());
        let first = request_of(r.start());
        let a = call("a", "get_weather", r#"{"city":"Paris"}"#);
        let b = call("b", "delete_file", "{}");
        let early = r.call_whole(&a, &asks).unwrap();
        let turn_calls = [a.clone(), b.clone()];
        let asked = jobs_of(r.finish_step(turn("", &turn_calls, FinishReason::ToolCalls), &asks));
        assert_eq!(asked[0].call.id, "b");
        // The weather is still running: the pause waits for it.
        assert_eq!(r.pause_for_approval(), Next::Wait);
        assert_eq!(
            r.tool_done(&early.call.id, Outcome::Done("9 C".into())),
            Next::Stop(StopReason::ApprovalPending)
        );
        assert_eq!(results(&r), [("a".into(), "9 C".into(), false)]);
        assert_eq!(r.pending(), std::slice::from_ref(&b));
        // Resumed: only the call that waited for its decision runs.
        let mut history = first;
        history.messages.extend(r.messages().iter().cloned());
        let yes = [("b".to_string(), true)];
        let mut resumed =
            Runner::new(history, tools.clone(), RunLimits::default(), &yes, &asks).unwrap();
        let jobs = jobs_of(resumed.start());
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].call.id, "b");

        // A turn that reuses the early call's id for a call that needs an
        // approval: it never takes the early result, nor runs unasked
        // (the id ran already: both get "not run" results).
        let mut r = runner(tools, RunLimits::default());
        r.start();
        let read = call("d", "get_weather", r#"{"city":"Oslo"}"#);
        let delete = call("d", "delete_file", "{}");
        let early = r.call_whole(&read, &asks).unwrap();
        assert_eq!(
            r.tool_done(&early.call.id, Outcome::Done("4 C".into())),
            Next::Wait
        );
        let turn_calls = [delete, read];
        let next = r.finish_step(turn("", &turn_calls, FinishReason::ToolCalls), &asks);
        assert!(matches!(next, Next::Request(_)), "{next:?}");
        let got = results(&r);
        assert_eq!(got.len(), 2);
        assert!(got
            .iter()
            .all(|(id, text, err)| id == "d" && *err && text.starts_with("not run")));
    }
}

#[cfg(test)]
mod wire_tests;
