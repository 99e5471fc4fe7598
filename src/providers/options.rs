//! `providerOptions` keyed by provider: `{"anthropic": {"thinking": ...},
//! "openai": {"service_tier": ...}}`, each provider merging only its own
//! entry, so that one request (or one history, in a fallback chain or when
//! a user switches providers) can carry every provider's options without
//! sending any of them to another. The flat form (the fields of one
//! provider's body) is unchanged. The two are told apart by their keys: a
//! key named like a provider makes the map keyed, since no provider's body
//! has a top-level field of that name; a keyed map with another key is an
//! error naming it.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::Provider;
use crate::error::Error;
use crate::model::Request;

type Options = Map<String, Value>;

/// How a `providerOptions` map applies to a provider.
enum Own<'a> {
    /// The fields of a body: they apply as they are.
    Flat,
    /// Keyed by provider: this provider's entry, if it has one.
    Keyed(Option<&'a Options>),
}

/// How `options` applies to `provider`; `path` names the field in errors.
fn own<'a>(options: &'a Options, provider: Provider, path: &str) -> Result<Own<'a>, Error> {
    let is_provider = |k: &str| Provider::ALL.iter().any(|p| p.name() == k);
    if !options.keys().any(|k| is_provider(k)) {
        return Ok(Own::Flat);
    }
    for (k, v) in options {
        if !is_provider(k) {
            return Err(Error::invalid_request(
                format!("{path}.{k}"),
                "is not a provider: options keyed by provider hold only provider names \
                 (openai, anthropic, ...); put this field inside one of them",
            ));
        }
        if !v.is_object() {
            return Err(Error::invalid_request(
                format!("{path}.{k}"),
                "must be an object of that provider's body fields",
            ));
        }
    }
    Ok(Own::Keyed(
        options.get(provider.name()).and_then(Value::as_object),
    ))
}

/// The path of the first flat `providerOptions` of `request` (the
/// request's, or a tool's), if one is flat: it would go to every provider.
pub(crate) fn first_flat(request: &Request) -> Option<String> {
    let flat = |o: &Options| {
        !o.is_empty()
            && !o
                .keys()
                .any(|k| Provider::ALL.iter().any(|p| p.name() == k))
    };
    if request.provider_options.as_ref().is_some_and(flat) {
        return Some("providerOptions".into());
    }
    (request.tools.iter().enumerate())
        .find(|(_, t)| t.provider_options.as_ref().is_some_and(flat))
        .map(|(i, _)| format!("tools[{i}].providerOptions"))
}

/// `request` with every `providerOptions` (the request's and each tool's)
/// resolved for `provider`: borrowed as it is when none is keyed.
pub(crate) fn resolved(request: &Request, provider: Provider) -> Result<Cow<'_, Request>, Error> {
    let mut out = Cow::Borrowed(request);
    if let Some(options) = &request.provider_options {
        if let Own::Keyed(entry) = own(options, provider, "providerOptions")? {
            out.to_mut().provider_options = entry.cloned();
        }
    }
    for (i, tool) in request.tools.iter().enumerate() {
        let Some(options) = &tool.provider_options else {
            continue;
        };
        let path = format!("tools[{i}].providerOptions");
        if let Own::Keyed(entry) = own(options, provider, &path)? {
            if let Some(t) = out.to_mut().tools.get_mut(i) {
                t.provider_options = entry.cloned();
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::Tool;

    fn request(options: Value, tool_options: Value) -> Request {
        Request {
            provider_options: options.as_object().cloned(),
            tools: vec![Tool {
                name: "f".into(),
                provider_options: tool_options.as_object().cloned(),
                ..Tool::default()
            }],
            ..Request::default()
        }
    }

    #[test]
    fn each_provider_takes_only_its_own_entry() {
        let r = request(
            json!({"anthropic": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
                   "openai": {"service_tier": "flex"}}),
            json!({"anthropic": {"eager_input_streaming": true}}),
        );
        let a = resolved(&r, Provider::Anthropic).unwrap();
        assert_eq!(
            Value::Object(a.provider_options.clone().unwrap()),
            json!({"thinking": {"type": "enabled", "budget_tokens": 1024}})
        );
        assert_eq!(
            Value::Object(a.tools[0].provider_options.clone().unwrap()),
            json!({"eager_input_streaming": true})
        );
        let o = resolved(&r, Provider::OpenAi).unwrap();
        assert_eq!(
            Value::Object(o.provider_options.clone().unwrap()),
            json!({"service_tier": "flex"})
        );
        assert_eq!(o.tools[0].provider_options, None);
        let g = resolved(&r, Provider::Gemini).unwrap();
        assert_eq!(g.provider_options, None);
    }

    #[test]
    fn the_flat_form_is_kept_as_it_is() {
        let r = request(json!({"top_k": 5}), json!({"strict": true}));
        assert!(matches!(
            resolved(&r, Provider::Gemini).unwrap(),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_keyed_map_with_another_key_or_a_non_object_is_an_error_naming_it() {
        let r = request(
            json!({"anthropic": {"top_k": 5}, "top_p": 0.5}),
            Value::Null,
        );
        match resolved(&r, Provider::Anthropic) {
            Err(Error::InvalidRequest { path, message }) => {
                assert_eq!(path, "providerOptions.top_p");
                assert!(message.contains("not a provider"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let r = request(Value::Null, json!({"openai": true}));
        match resolved(&r, Provider::OpenAi) {
            Err(Error::InvalidRequest { path, .. }) => {
                assert_eq!(path, "tools[0].providerOptions.openai");
            }
            other => panic!("{other:?}"),
        }
    }
}
