//! A chat page written in Rust (wasm-bindgen and web-sys, no framework)
//! that streams a tool-calling conversation through `skyl::web`.
//!
//! The answer's text appears as it streams; each tool call appears as a
//! card once its arguments are whole (skyl hands a call out once, at the
//! provider's end of the call), runs in the page, and its result goes back
//! to the model until it answers without a call.
//!
//! The page's query string picks the provider: `provider` (a skyl provider
//! name, `anthropic` by default), `base` (its base URL, the mock provider
//! of `scripts/demo` by default) and `model`. No key: a key in a page is
//! visible to every visitor, so a real deployment points `base` at its own
//! server, which holds the key.

use std::cell::RefCell;
use std::rc::Rc;

use skyl::web::Client;
use skyl::{
    tool_error_message, tool_result_message, ClientConfig, Message, Provider, Request, Response,
    StreamEvent, Tool, ToolCall,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Document, Element, HtmlInputElement, UrlSearchParams};

/// Model turns per question at most.
const MAX_TURNS: usize = 4;

/// Wires the form to the chat once the module is loaded.
#[wasm_bindgen(start)]
pub fn start() -> Result<(), JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let page = Page {
        document: window.document().ok_or("no document")?,
    };
    let params = UrlSearchParams::new_with_str(&window.location().search()?)?;
    let client = Rc::new(Client::new(config(&params)?));
    let history = Rc::new(RefCell::new(Vec::new()));

    let on_submit = {
        let page = page.clone();
        Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
            event.prevent_default();
            let (page, client, history) = (page.clone(), client.clone(), history.clone());
            spawn_local(async move {
                if let Err(e) = ask(&page, &client, &history).await {
                    page.status(&format!("error: {}", e.as_string().unwrap_or_default()));
                }
                page.busy(false);
            });
        })
    };
    page.get("ask")?
        .add_event_listener_with_callback("submit", on_submit.as_ref().unchecked_ref())?;
    // The form lives as long as the page.
    on_submit.forget();
    page.status("ready");
    Ok(())
}

/// The client's config from the page's query string.
fn config(params: &UrlSearchParams) -> Result<ClientConfig, JsValue> {
    let name = params.get("provider").unwrap_or_else(|| "anthropic".into());
    let provider = Provider::from_name(&name).ok_or(format!("unknown provider {name:?}"))?;
    let mut config = ClientConfig::new(provider);
    config.base_url = Some(
        params
            .get("base")
            .unwrap_or_else(|| "http://127.0.0.1:8788".into()),
    );
    config.model = Some(params.get("model").unwrap_or_else(|| "mock-model".into()));
    Ok(config)
}

/// The tool the page offers the model.
fn weather_tool() -> Tool {
    Tool {
        name: "get_weather".into(),
        description: Some("Current weather for a city.".into()),
        parameters: Some(serde_json::json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        })),
        ..Tool::default()
    }
}

/// Runs one whole tool call: its result text, or why it failed.
fn run_tool(call: &ToolCall) -> Result<String, String> {
    let args: serde_json::Value =
        serde_json::from_str(&call.arguments).map_err(|e| format!("bad arguments: {e}"))?;
    match call.name.as_str() {
        "get_weather" => {
            let city = args["city"].as_str().ok_or("no city")?;
            // A stand-in for a real weather service.
            Ok(
                serde_json::json!({"city": city, "temperature_c": 21, "conditions": "sunny"})
                    .to_string(),
            )
        }
        other => Err(format!("no tool named {other}")),
    }
}

/// Sends the question in the input box, then streams turns until the model
/// answers without calling a tool.
async fn ask(page: &Page, client: &Client, history: &RefCell<Vec<Message>>) -> Result<(), JsValue> {
    let input: HtmlInputElement = page.get("input")?.dyn_into()?;
    let question = input.value();
    if question.trim().is_empty() {
        return Ok(());
    }
    input.set_value("");
    page.busy(true);
    page.add("msg user", &question)?;
    history.borrow_mut().push(Message::user(question));

    for _ in 0..MAX_TURNS {
        let request = Request {
            messages: history.borrow().clone(),
            tools: vec![weather_tool()],
            ..Request::default()
        };
        let response = turn(page, client, &request).await?;
        history.borrow_mut().push(response.message.clone());
        if response.tool_calls.is_empty() {
            return Ok(());
        }
        for call in &response.tool_calls {
            let message = match run_tool(call) {
                Ok(result) => {
                    page.tool_result(&call.id, &result)?;
                    tool_result_message(&call.id, result)
                }
                Err(error) => {
                    page.tool_result(&call.id, &format!("error: {error}"))?;
                    tool_error_message(&call.id, error)
                }
            };
            history.borrow_mut().push(message);
        }
    }
    page.status("stopped: too many turns");
    Ok(())
}

/// Streams one model turn into the page: reasoning and text as they come,
/// each tool call as a card when it is whole.
async fn turn(page: &Page, client: &Client, request: &Request) -> Result<Response, JsValue> {
    page.status("streaming");
    let mut reasoning: Option<(Element, String)> = None;
    let mut text: Option<(Element, String)> = None;
    let mut events = client.stream(request);
    while let Some(event) = events.next().await {
        match event.map_err(|e| e.to_string())? {
            StreamEvent::Reasoning { text: piece, .. } => {
                page.grow(&mut reasoning, "reasoning", &piece)?
            }
            StreamEvent::Text { text: piece, .. } => {
                page.grow(&mut text, "msg assistant", &piece)?
            }
            StreamEvent::ToolCall { call, .. } => page.card(&call)?,
            StreamEvent::Finish { response, .. } => {
                page.status(&format!("finish: {}", finish_name(&response)));
                return Ok(*response);
            }
            // usage, warnings, and events added in later releases
            _ => {}
        }
    }
    Err("the stream ended without a finish".into())
}

/// The finish reason as the npm package spells it (`stop`, `tool_calls`).
fn finish_name(response: &Response) -> String {
    serde_json::to_value(response.finish_reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The page's elements.
#[derive(Clone)]
struct Page {
    document: Document,
}

impl Page {
    fn get(&self, id: &str) -> Result<Element, JsValue> {
        self.document
            .get_element_by_id(id)
            .ok_or_else(|| format!("no #{id}").into())
    }

    fn status(&self, text: &str) {
        if let Ok(status) = self.get("status") {
            status.set_text_content(Some(text));
        }
    }

    /// Disables the form while a question is being answered.
    fn busy(&self, busy: bool) {
        if let Ok(send) = self.get("send") {
            let _ = if busy {
                send.set_attribute("disabled", "")
            } else {
                send.remove_attribute("disabled")
            };
        }
    }

    /// Adds an element of `class` with `text` to the conversation.
    fn add(&self, class: &str, text: &str) -> Result<Element, JsValue> {
        let el = self.document.create_element("div")?;
        el.set_class_name(class);
        el.set_text_content(Some(text));
        self.get("chat")?.append_child(&el)?;
        Ok(el)
    }

    /// Appends streamed text to the turn's element of `class`, adding it
    /// on the first piece.
    fn grow(
        &self,
        slot: &mut Option<(Element, String)>,
        class: &str,
        piece: &str,
    ) -> Result<(), JsValue> {
        let (el, all) = match slot {
            Some(held) => held,
            None => slot.insert((self.add(class, "")?, String::new())),
        };
        all.push_str(piece);
        el.set_text_content(Some(all));
        Ok(())
    }

    /// A whole tool call, as a card: its name and arguments.
    fn card(&self, call: &ToolCall) -> Result<(), JsValue> {
        let card = self.add("card", "")?;
        card.set_id(&format!("call-{}", call.id));
        let name = self.document.create_element("div")?;
        name.set_class_name("name");
        name.set_text_content(Some(&call.name));
        let args = self.document.create_element("code")?;
        args.set_class_name("args");
        args.set_text_content(Some(&call.arguments));
        card.append_child(&name)?;
        card.append_child(&args)?;
        Ok(())
    }

    /// A tool's result, under its call's card.
    fn tool_result(&self, call_id: &str, text: &str) -> Result<(), JsValue> {
        let result = self.document.create_element("div")?;
        result.set_class_name("result");
        result.set_text_content(Some(&format!("→ {text}")));
        self.get(&format!("call-{call_id}"))?
            .append_child(&result)?;
        Ok(())
    }
}
