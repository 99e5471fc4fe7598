//! `skyl::web` on Vertex AI with a service account: the JWT signed with
//! WebCrypto from Rust, exchanged at the mock's token endpoint (which
//! verifies the signature with the key's public half), one exchange for
//! requests made at once on a cold client, and a refused key typed.

use js_sys::{Array, Promise};
use serde_json::Value;
use skyl::web::Client;
use skyl::{ApiErrorKind, Error, Provider, ServiceAccount, Vertex};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use wasm_bindgen_test::wasm_bindgen_test;

use super::support::*;

/// The test key file, exchanged at `token_uri`.
fn account(token_uri: &str) -> ServiceAccount {
    let text = include_str!("../fixtures/google/service-account.json");
    let mut file: Value = serde_json::from_str(text).unwrap();
    file["token_uri"] = token_uri.into();
    ServiceAccount::from_json(&file.to_string()).unwrap()
}

/// `config` (support.rs) that may send its service account's token from a
/// page too (the browser tests run these in Chromium).
fn keyed(provider: Provider, options: &[(&str, &str)]) -> skyl::ClientConfig {
    config(provider, options).with_browser(true)
}

/// A Gemini client on Vertex against the mock, its requests counted.
fn vertex_client(name: &str, token_uri: &str) -> Client {
    let mut config = keyed(Provider::Gemini, &[("scenario", name)]);
    config.vertex = Some(Vertex::new("skyl-test", "us-central1"));
    Client::new(config)
        .with_retry(quick_retries(0))
        .with_service_account(account(token_uri))
}

#[wasm_bindgen_test]
async fn a_service_account_token_signed_with_webcrypto_authorizes_each_request() {
    let name = scenario("vertex-sa");
    let client = vertex_client(&name, &format!("{MOCK}/oauth2/token"));
    // Three requests at once on a cold client.
    let all = Array::new();
    for _ in 0..3 {
        let c = client.clone();
        all.push(&future_to_promise(async move {
            let r = c.complete(&ask("What's the weather in Oslo?")).await;
            r.map(|_| JsValue::TRUE)
                .map_err(|e| JsValue::from_str(&e.to_string()))
        }));
    }
    JsFuture::from(Promise::all(&all)).await.unwrap();
    let sent = received(&name).await;
    assert_eq!(sent.len(), 3);
    let auth: Vec<&str> = sent
        .iter()
        .map(|r| r["headers"]["authorization"].as_str().unwrap_or_default())
        .collect();
    assert!(auth[0].starts_with("Bearer ya29.mock-token-"), "{auth:?}");
    assert!(auth.iter().all(|a| *a == auth[0]), "one exchange: {auth:?}");
    for r in &sent {
        assert_eq!(
            r["path"],
            "/v1/projects/skyl-test/locations/us-central1/publishers/google/models/mock-model:generateContent"
        );
    }
    // Kept: a later request uses it without another exchange.
    client.complete(&ask("Hi")).await.unwrap();
    let later = received(&name).await;
    assert_eq!(later[3]["headers"]["authorization"], auth[0]);
}

#[wasm_bindgen_test]
async fn a_refused_key_is_an_authentication_error_with_googles_reason() {
    let name = scenario("vertex-refused");
    // The JWT's audience is the key file's token_uri: this one is not the
    // endpoint's own, so the mock refuses it as Google would.
    let client = vertex_client(&name, &format!("{MOCK}/oauth2/token?elsewhere=1"));
    let Err(Error::Api(e)) = client.complete(&ask("Hi")).await else {
        panic!("an ApiError");
    };
    assert_eq!(e.kind, ApiErrorKind::Authentication);
    assert_eq!(e.status, Some(400));
    assert_eq!(e.provider_type.as_deref(), Some("invalid_grant"));
    assert!(e.message.contains("aud must be"), "{}", e.message);
    assert!(
        received(&name).await.is_empty(),
        "nothing sent to the provider"
    );
}

/// A tool's text is scrubbed of the service account's token, which the
/// run got after it began (a cold client): the tool here reads it off the
/// request the mock received and hands it back.
#[wasm_bindgen_test]
async fn a_token_new_since_the_run_began_is_scrubbed_from_tool_results() {
    use skyl::web::{Handler, RunOptions};
    let name = scenario("vertex-run-scrub");
    let client = vertex_client(&name, &format!("{MOCK}/oauth2/token"));
    let mut request = ask("What is the weather in Kampala, and convert 30 km to miles?");
    let object = |props: Value| serde_json::json!({"type": "object", "properties": props});
    request.tools = vec![
        skyl::Tool {
            name: "get_weather".into(),
            parameters: Some(object(serde_json::json!({"city": {"type": "string"}}))),
            ..skyl::Tool::default()
        },
        skyl::Tool {
            name: "convert_units".into(),
            parameters: Some(object(serde_json::json!({"value": {"type": "number"}}))),
            ..skyl::Tool::default()
        },
    ];
    let seen = name.clone();
    let handlers = vec![
        Handler::new("get_weather", move |_, _| {
            let seen = seen.clone();
            async move {
                let sent = received(&seen).await;
                let auth = sent[0]["headers"]["authorization"]
                    .as_str()
                    .unwrap_or_default();
                Ok(format!("sunny; the header was {auth}"))
            }
        }),
        Handler::new("convert_units", |_, _| async { Ok("18.64".to_string()) }),
    ];
    let outcome = (client
        .run(&request, handlers, RunOptions::default())
        .result()
        .await)
        .unwrap();
    let sent = received(&name).await;
    let auth = sent[0]["headers"]["authorization"]
        .as_str()
        .unwrap()
        .to_string();
    let token = auth.strip_prefix("Bearer ").unwrap();
    assert!(token.starts_with("ya29."), "{auth}");
    let history = serde_json::to_string(&outcome.messages).unwrap();
    assert!(
        history.contains("sunny; the header was Bearer "),
        "{history}"
    );
    assert!(!history.contains(token), "the token in the history");
    let later: Vec<String> = sent[1..].iter().map(|r| r["body"].to_string()).collect();
    assert!(!later.is_empty() && later.iter().all(|b| !b.contains(token)));
}

/// Requests that wait for an exchange that fails share its error: one
/// exchange for three requests on a cold client, not one each in turn.
#[wasm_bindgen_test]
async fn requests_waiting_for_a_failed_exchange_share_its_error() {
    let name = scenario("vertex-refused-shared");
    let exchanges = std::rc::Rc::new(std::cell::Cell::new(0));
    let counted = std::rc::Rc::clone(&exchanges);
    let fetch = function(move |request| {
        let url = js_sys::Reflect::get(&request, &"url".into()).unwrap();
        if url
            .as_string()
            .unwrap_or_default()
            .contains("/oauth2/token")
        {
            counted.set(counted.get() + 1);
        }
        global_fetch().call1(&JsValue::NULL, &request).unwrap()
    });
    let client =
        vertex_client(&name, &format!("{MOCK}/oauth2/token?elsewhere=1")).with_fetch(fetch);
    let all = Array::new();
    for _ in 0..3 {
        let c = client.clone();
        all.push(&future_to_promise(async move {
            match c.complete(&ask("Hi")).await {
                Err(Error::Api(e)) if e.kind == ApiErrorKind::Authentication => Ok(JsValue::TRUE),
                other => Err(JsValue::from_str(&format!("{other:?}"))),
            }
        }));
    }
    JsFuture::from(Promise::all(&all)).await.unwrap();
    assert_eq!(exchanges.get(), 1);
    assert!(received(&name).await.is_empty());
}

/// The key is exchanged only for a request that will be sent: a config
/// that cannot take the token, or an invalid request, fails by name first.
/// (The token endpoint here is a port where nothing listens: an exchange
/// would end in a connection error.)
#[wasm_bindgen_test]
async fn nothing_is_exchanged_for_a_request_that_cannot_go() {
    let nowhere = "http://127.0.0.1:9/token";
    let name = scenario("vertex-not-sent");
    let not_vertex = Client::new(keyed(Provider::Gemini, &[("scenario", &name)]))
        .with_retry(quick_retries(0))
        .with_service_account(account(nowhere));
    let with_key = {
        let mut config = keyed(Provider::Gemini, &[("scenario", &name)]);
        config.vertex = Some(Vertex::new("skyl-test", "us-central1"));
        config.api_key = Some("AIza-test".into());
        Client::new(config).with_service_account(account(nowhere))
    };
    for client in [not_vertex, with_key] {
        let e = client.complete(&ask("Hi")).await.unwrap_err();
        assert!(
            matches!(&e, Error::InvalidRequest { path, .. } if path == "serviceAccount"),
            "{e:?}"
        );
    }
    let mut bad = ask("Hi");
    bad.tools = vec![skyl::Tool::default()];
    let e = (vertex_client(&name, nowhere).complete(&bad).await).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidRequest { path, .. } if path.starts_with("tools[0]")),
        "{e:?}"
    );
    assert!(received(&name).await.is_empty());
}

/// A Vertex client with `retries` whose token endpoint answers with
/// `exchange()` (the number of exchanges counted), with openai (its
/// scenario `name#1`) as its fallback; `options` are its own mock's.
fn chain_with_exchange(
    name: &str,
    options: &[(&str, &str)],
    retries: u32,
    exchange: impl Fn() -> Promise + 'static,
) -> (Client, std::rc::Rc<std::cell::Cell<u32>>) {
    let exchanges = std::rc::Rc::new(std::cell::Cell::new(0));
    let counted = std::rc::Rc::clone(&exchanges);
    let fetch = function(move |request| {
        let url = js_sys::Reflect::get(&request, &"url".into()).unwrap();
        if !url
            .as_string()
            .unwrap_or_default()
            .contains("/oauth2/token")
        {
            return global_fetch().call1(&JsValue::NULL, &request).unwrap();
        }
        counted.set(counted.get() + 1);
        exchange().into()
    });
    let mut own = keyed(Provider::Gemini, &[&[("scenario", name)], options].concat());
    own.vertex = Some(Vertex::new("skyl-test", "us-central1"));
    let next = config(Provider::OpenAi, &[("scenario", &format!("{name}#1"))]);
    let client = Client::new(own)
        .with_retry(quick_retries(retries))
        .with_service_account(account(&format!("{MOCK}/oauth2/token")))
        .with_fetch(fetch)
        .with_fallback(skyl::Fallback::new().then(next, quick_retries(0)));
    (client, exchanges)
}

/// The client's own token is renewed before its own attempts only: the
/// switch to a fallback provider asks for none. (The token here lives 10
/// seconds, inside the renewal margin, so each attempt of Vertex's own
/// would exchange again.)
#[wasm_bindgen_test]
async fn a_switch_to_the_fallback_exchanges_no_token() {
    let name = scenario("vertex-fallback");
    let (client, exchanges) = chain_with_exchange(&name, &[("fail", "500")], 0, || {
        let token = br#"{"access_token":"ya29.short-lived","expires_in":10,"token_type":"Bearer"}"#;
        let answer: JsValue = response_of(&stream_of(&[token], true), 200).into();
        Promise::resolve(&answer)
    });
    let response = client.complete(&ask("Hi")).await.unwrap();
    assert_eq!(response.provider.as_deref(), Some("openai"));
    assert_eq!(exchanges.get(), 1, "one exchange, for Vertex's own attempt");
    let sent = received(&name).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0]["headers"]["authorization"],
        "Bearer ya29.short-lived"
    );
}

/// A token endpoint out of reach is the attempt's failure, as the
/// provider's own would be: retried by the policy, then the fallback
/// answers, and the response lists the Vertex entry among the failures.
#[wasm_bindgen_test]
async fn a_token_endpoint_out_of_reach_is_retried_then_the_fallback_answers() {
    let name = scenario("vertex-token-unreachable");
    let (client, exchanges) = chain_with_exchange(&name, &[], 1, || {
        Promise::reject(&js_sys::Error::new("connect ECONNREFUSED").into())
    });
    let response = client.complete(&ask("Hi")).await.unwrap();
    assert_eq!(response.provider.as_deref(), Some("openai"));
    assert_eq!(exchanges.get(), 2, "the exchange and its one retry");
    let failed: Vec<_> = (response.attempts.iter())
        .map(|a| (a.provider.as_str(), a.error.code.as_str()))
        .collect();
    assert_eq!(failed, [("gemini", "network")]);
    assert!(received(&name).await.is_empty(), "Vertex was sent nothing");
}
