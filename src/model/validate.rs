//! Validation of tools, tool calls and requests, with precise errors.
//!
//! [`crate::encode_request`] runs [`validate_request`] first, so nothing
//! invalid is ever sent.

use std::collections::HashMap;

use crate::json::write::quoted;
use crate::model::{Part, Request, Role, Tool, ToolCall};

/// Why a request, tool or tool call cannot be sent: the offending field's
/// path (`messages[2].parts[0].callId`) and what is wrong. It converts into
/// [`crate::Error::InvalidRequest`], which every encode returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// Where the problem is, e.g. `messages[2].parts[0].arguments`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl Invalid {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "invalid request: {}", self.message)
        } else {
            write!(f, "invalid request: {}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for Invalid {}

/// A tool needs a non-empty name; its parameters, when given, must be a JSON
/// object (a schema).
pub fn validate_tool(tool: &Tool) -> Result<(), Invalid> {
    check_tool(tool, &|| "tool".into())
}

/// `path` gives the field's path, only when there is an error to report
/// (formatting it for every valid item would cost more than the checks).
fn check_tool(tool: &Tool, path: &dyn Fn() -> String) -> Result<(), Invalid> {
    if tool.name.trim().is_empty() {
        return Err(Invalid::new(
            format!("{}.name", path()),
            "a tool needs a non-empty name",
        ));
    }
    if let Some(p) = &tool.parameters {
        if !p.is_object() {
            return Err(Invalid::new(
                format!("{}.parameters", path()),
                format!(
                    "tool {}: parameters must be a JSON Schema object",
                    quoted(&tool.name)
                ),
            ));
        }
    }
    if let Some(Some(ttl)) = &tool.cache {
        if !CACHE_TTLS.contains(&ttl.as_str()) {
            return Err(Invalid::new(
                format!("{}.cache.ttl", path()),
                format!("a cache lifetime is \"5m\" or \"1h\", not {}", quoted(ttl)),
            ));
        }
    }
    Ok(())
}

/// The cache lifetimes Anthropic takes.
const CACHE_TTLS: &[&str] = &["5m", "1h"];

/// A tool call needs an id and a name.
pub fn validate_tool_call(call: &ToolCall) -> Result<(), Invalid> {
    check_call(&call.id, &call.name, &|| "toolCall".into())
}

fn check_call(id: &str, name: &str, path: &dyn Fn() -> String) -> Result<(), Invalid> {
    if id.is_empty() {
        return Err(Invalid::new(
            format!("{}.id", path()),
            "a tool call needs an id",
        ));
    }
    if name.is_empty() {
        return Err(Invalid::new(
            format!("{}.name", path()),
            format!("tool call {} needs a name", quoted(id)),
        ));
    }
    Ok(())
}

/// Checks a whole request: tools (names unique), tool calls in the history,
/// and that every tool result answers a call made earlier in the history.
pub fn validate_request(req: &Request) -> Result<(), Invalid> {
    if req.partial.output && req.response_format.is_none() {
        return Err(Invalid::new(
            "partial.output",
            "output_delta events read the answer as JSON: give a responseFormat too",
        ));
    }
    // (Maps of the type Gemini's encoder uses, to share its code: a set
    // of its own would link another copy of the hash table's.)
    let mut names: HashMap<&str, &str> = HashMap::new();
    for (i, tool) in req.tools.iter().enumerate() {
        let path = || format!("tools[{i}]");
        check_tool(tool, &path)?;
        if names.insert(&tool.name, "").is_some() {
            return Err(Invalid::new(
                format!("{}.name", path()),
                format!("tool {} is declared twice", quoted(&tool.name)),
            ));
        }
    }
    if let Some(crate::model::ToolChoice::Tool(named)) = &req.tool_choice {
        if !names.contains_key(named.name.as_str()) {
            return Err(Invalid::new(
                "toolChoice.name",
                format!(
                    "tool choice names {}, which is not among the tools",
                    quoted(&named.name)
                ),
            ));
        }
    }
    let mut calls: HashMap<&str, &str> = HashMap::new();
    for (m, msg) in req.messages.iter().enumerate() {
        for (p, part) in msg.parts.iter().enumerate() {
            let path = || format!("messages[{m}].parts[{p}]");
            match part {
                Part::ToolCall { id, name, .. } => {
                    if msg.role != Role::Assistant {
                        return Err(Invalid::new(
                            path(),
                            "tool calls belong in assistant messages",
                        ));
                    }
                    check_call(id, name, &path)?;
                    calls.insert(id, "");
                }
                Part::ToolResult { call_id, .. } => {
                    if msg.role == Role::Assistant || msg.role == Role::System {
                        return Err(Invalid::new(
                            path(),
                            "tool results belong in tool (or user) messages",
                        ));
                    }
                    if !calls.contains_key(call_id.as_str()) {
                        return Err(Invalid::new(
                            format!("{}.callId", path()),
                            format!("tool result answers unknown call id {}", quoted(call_id)),
                        ));
                    }
                }
                Part::Image {
                    url: None,
                    data: None,
                    ..
                } => {
                    return Err(Invalid::new(path(), "an image needs a url or base64 data"));
                }
                Part::File {
                    url: None,
                    data: None,
                    ..
                } => {
                    return Err(Invalid::new(path(), "a file needs a url or base64 data"));
                }
                Part::Cache { ttl: Some(ttl) } if !CACHE_TTLS.contains(&ttl.as_str()) => {
                    return Err(Invalid::new(
                        format!("{}.ttl", path()),
                        format!("a cache lifetime is \"5m\" or \"1h\", not {}", quoted(ttl)),
                    ));
                }
                Part::Image {
                    url: None,
                    media_type: None,
                    ..
                } => {
                    return Err(Invalid::new(
                        format!("{}.mediaType", path()),
                        "base64 image data needs a mediaType",
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{tool_result_message, Message};

    fn call_msg(id: &str, name: &str) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: "{}".into(),
                provider_data: None,
            }],
        }
    }

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.into(),
            ..Tool::default()
        }
    }

    #[test]
    fn a_tool_without_a_name_is_rejected() {
        let err = validate_tool(&tool(" ")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid request: tool.name: a tool needs a non-empty name"
        );
    }

    #[test]
    fn a_tool_whose_parameters_are_not_an_object_is_rejected() {
        let mut t = tool("f");
        t.parameters = Some(serde_json::json!("string"));
        assert!(validate_tool(&t).is_err());
    }

    #[test]
    fn a_tool_call_without_id_or_name_is_rejected() {
        let no_id = ToolCall {
            id: "".into(),
            name: "f".into(),
            arguments: "{}".into(),
        };
        let no_name = ToolCall {
            id: "c".into(),
            name: "".into(),
            arguments: "{}".into(),
        };
        assert!(
            matches!(validate_tool_call(&no_id), Err(Invalid { path, .. }) if path == "toolCall.id")
        );
        assert!(
            matches!(validate_tool_call(&no_name), Err(Invalid { path, .. }) if path == "toolCall.name")
        );
    }

    #[test]
    fn a_tool_result_for_an_unknown_call_is_rejected_with_its_path() {
        let req = Request {
            messages: vec![
                Message::user("hi"),
                call_msg("c1", "f"),
                tool_result_message("c2", "x"),
            ],
            ..Request::default()
        };
        let err = validate_request(&req).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid request: messages[2].parts[0].callId: tool result answers unknown call id \"c2\""
        );
        let ok = Request {
            messages: vec![
                Message::user("hi"),
                call_msg("c1", "f"),
                tool_result_message("c1", "x"),
            ],
            ..Request::default()
        };
        assert!(validate_request(&ok).is_ok());
    }

    #[test]
    fn duplicate_tools_and_an_unknown_tool_choice_are_rejected() {
        let req = Request {
            tools: vec![tool("f"), tool("f")],
            ..Request::default()
        };
        assert!(validate_request(&req).is_err());
        let req = Request {
            tools: vec![tool("f")],
            tool_choice: Some(serde_json::from_str(r#"{"type":"tool","name":"g"}"#).unwrap()),
            ..Request::default()
        };
        assert!(validate_request(&req).is_err());
    }

    #[test]
    fn a_file_without_url_or_data_is_rejected_with_its_path() {
        let req = Request {
            messages: vec![Message {
                role: crate::model::Role::User,
                parts: vec![Part::File {
                    url: None,
                    data: None,
                    media_type: "application/pdf".into(),
                    filename: None,
                    provider_data: None,
                }],
            }],
            ..Request::default()
        };
        assert_eq!(
            validate_request(&req).unwrap_err().to_string(),
            "invalid request: messages[0].parts[0]: a file needs a url or base64 data"
        );
    }
}
