//! What a provider cannot read of a history built on another: the
//! `provider` parts of another provider (server-tool blocks, compaction
//! summaries, ...), which every encoder leaves out (as it leaves out
//! another provider's `providerData`), and the files a model made that the
//! provider does not take back in an assistant turn ([`Files`]), which
//! [`readable`] leaves out. [`left_out`] names them for the warning a run
//! hands out before its first event.

use std::borrow::Cow;

use super::adapter::Files;
use super::Provider;
use crate::model::{Part, Request, Role};

/// The most parts a warning names one by one; the rest are counted.
const NAMED: usize = 3;

/// Whether `provider` leaves out `part` of a message of `role`, and if so
/// how to name it: `anthropic server_tool_use`, `responses file
/// image/webp`.
fn unreadable(provider: Provider, role: Role, part: &Part) -> Option<String> {
    let adapter = provider.adapter();
    match part {
        Part::Provider {
            provider: from,
            data,
        } => {
            let keeps = adapter.is_some_and(|a| a.parts) && from == provider.name();
            let kind = data.get("type").and_then(|t| t.as_str()).unwrap_or("block");
            (!keeps).then(|| format!("{from} {kind}"))
        }
        Part::File {
            data,
            media_type,
            provider_data,
            ..
        } if role == Role::Assistant => {
            let own = provider_data.as_ref().and_then(|d| d.get(provider.name()));
            let takes = match adapter.map_or(Files::None, |a| a.files) {
                Files::None => false,
                Files::Own => own.is_some(),
                Files::Any => data.is_some(),
            };
            let from = (provider_data.as_ref())
                .and_then(|d| d.keys().next().map(String::as_str))
                .unwrap_or("a");
            (!takes).then(|| format!("{from} file {media_type}"))
        }
        _ => None,
    }
}

/// The warning's message for the parts of `request` that `provider`
/// leaves out, or `None` when it leaves out none.
pub(crate) fn left_out(provider: Provider, request: &Request) -> Option<String> {
    let mut named = Vec::new();
    let mut count = 0usize;
    for (m, message) in request.messages.iter().enumerate() {
        for (p, part) in message.parts.iter().enumerate() {
            let Some(what) = unreadable(provider, message.role, part) else {
                continue;
            };
            count += 1;
            if named.len() < NAMED {
                named.push(format!("messages[{m}].parts[{p}] ({what})"));
            }
        }
    }
    if count == 0 {
        return None;
    }
    let mut message = format!(
        "{provider} cannot read {count} part{} of this history, left out: {}",
        if count == 1 { "" } else { "s" },
        named.join(", ")
    );
    if count > named.len() {
        message.push_str(&format!(" and {} more", count - named.len()));
    }
    Some(message)
}

/// `request` without the files of assistant turns that `provider` does not
/// take back (its encoder would send them as input, which an assistant
/// turn cannot hold); as it is when there are none.
pub(crate) fn readable(provider: Provider, request: Cow<'_, Request>) -> Cow<'_, Request> {
    let drops = |m: &crate::model::Message| {
        (m.parts.iter())
            .any(|p| matches!(p, Part::File { .. }) && unreadable(provider, m.role, p).is_some())
    };
    if !request.messages.iter().any(drops) {
        return request;
    }
    let mut out = request;
    for m in &mut out.to_mut().messages {
        let role = m.role;
        m.parts
            .retain(|p| !matches!(p, Part::File { .. }) || unreadable(provider, role, p).is_none());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, Role};
    use serde_json::json;

    fn part(from: &str, kind: &str) -> Part {
        Part::Provider {
            provider: from.into(),
            data: json!({ "type": kind }),
        }
    }

    #[test]
    fn another_providers_parts_are_named_and_a_providers_own_are_kept() {
        let mut turn = Message::text(Role::Assistant, "Searched.");
        turn.parts.push(part("anthropic", "server_tool_use"));
        turn.parts.push(part("anthropic", "web_search_tool_result"));
        let request = Request {
            messages: vec![Message::user("Search."), turn],
            ..Request::default()
        };
        for provider in Provider::ALL {
            if provider.adapter().is_none() {
                continue; // (a one-adapter build)
            }
            let said = left_out(provider, &request);
            if provider == Provider::Anthropic {
                assert_eq!(said, None);
                continue;
            }
            assert_eq!(
                said.as_deref(),
                Some(
                    format!(
                        "{provider} cannot read 2 parts of this history, left out: \
                         messages[1].parts[1] (anthropic server_tool_use), \
                         messages[1].parts[2] (anthropic web_search_tool_result)"
                    )
                    .as_str()
                )
            );
        }
    }

    #[test]
    fn many_parts_are_counted_past_the_first_few() {
        let mut turn = Message::text(Role::Assistant, "");
        // The Chat Completions adapter replays no provider part, even one
        // named for it.
        turn.parts.push(part("openai", "x"));
        for _ in 0..5 {
            turn.parts.push(part("gemini", "executableCode"));
        }
        let request = Request {
            messages: vec![turn],
            ..Request::default()
        };
        let said = left_out(Provider::OpenAi, &request).unwrap();
        assert!(said.starts_with("openai cannot read 6 parts"), "{said}");
        assert!(said.contains("messages[0].parts[1] (openai x)"), "{said}");
        assert!(
            said.ends_with("(gemini executableCode) and 3 more"),
            "{said}"
        );
    }
}
