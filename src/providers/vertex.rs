//! Google Vertex AI: Gemini and Claude served from a Google Cloud project.
//! The wire formats are the Gemini and Anthropic adapters' own; what
//! differs is the URL, `v1/projects/{project}/locations/{location}/
//! publishers/{google|anthropic}/models/{model}:{method}` on the
//! location's host, and the auth, an OAuth access token sent as a bearer
//! token (or, for Gemini in express mode, an API key at
//! `aiplatform.googleapis.com/v1/publishers/google/models/...`).
//! Where the token comes from (a service-account key, a callback) is the
//! drivers' part: they give it to the run machine before each attempt.
// (A build with neither adapter has the option, and no URL to build.)
#![cfg_attr(not(any(feature = "gemini", feature = "anthropic")), allow(dead_code))]

use super::config::Vertex;
use super::join_url;
use crate::error::Error;
use crate::http::percent_encode;
use crate::ClientConfig;

/// The host of express mode and of the `global` location.
const GLOBAL_HOST: &str = "https://aiplatform.googleapis.com";

/// The host of `location`: `global`, a multi-region, or a region.
fn host(location: &str) -> String {
    match location {
        "global" => GLOBAL_HOST.to_string(),
        "eu" | "us" => format!("https://aiplatform.{location}.rep.googleapis.com"),
        region => format!("https://{region}-aiplatform.googleapis.com"),
    }
}

/// A location as Google names them: lowercase letters, digits and
/// hyphens, beginning with a letter (it becomes part of a host name).
fn valid_location(location: &str) -> bool {
    location
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_lowercase)
        && location
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Whether `config` can be given a service account's tokens (`option`,
/// the driver's name for it): Vertex AI's, with no API key and no fixed
/// access token beside it. The error names the option in the way. (The
/// npm package checks its options in JS when the client is made.)
#[cfg(any(test, all(target_arch = "wasm32", feature = "web")))]
pub(crate) fn takes_token(config: &ClientConfig, option: &str) -> Result<(), Error> {
    let why = if config.vertex.is_none() {
        "is Vertex AI's: give the config a vertex (project and location) as well"
    } else if config.api_key.is_some() {
        "give Vertex a service account or an API key (express mode), not both"
    } else if config.access_token.is_some() {
        "give Vertex a service account or an access token, not both"
    } else {
        return Ok(());
    };
    Err(Error::invalid_request(option, why))
}

/// The URL and auth header of a request to `publisher`'s `model` on
/// Vertex (`method`: `streamGenerateContent?alt=sse`, `rawPredict`, ...),
/// or the error that names the option in the way. A base URL, if given,
/// stands for the host.
pub(crate) fn endpoint(
    config: &ClientConfig,
    vertex: &Vertex,
    publisher: &str,
    model: &str,
    method: &str,
) -> Result<(String, Vec<(String, String)>), Error> {
    let err = Error::invalid_request;
    let token = config.access_token.as_deref();
    let key = config.api_key.as_deref();
    if token.is_some() && key.is_some() {
        return Err(err(
            "apiKey",
            "give Vertex an access token or an API key (express mode), not both",
        ));
    }
    if key.is_some() && publisher != "google" {
        return Err(err(
            "apiKey",
            "Claude on Vertex takes an access token (accessToken or serviceAccount), \
             not an API key: express mode is Gemini's",
        ));
    }
    let base = config.base_url.as_deref().filter(|b| !b.trim().is_empty());
    let model = percent_encode(model.as_bytes(), b"@");
    let (url, headers) = match (&vertex.project, key) {
        (Some(_), Some(_)) => {
            return Err(err(
                "vertex.project",
                "express mode (an apiKey) takes no project: with a project, give an \
                 accessToken or a serviceAccount",
            ))
        }
        (None, Some(key)) => {
            if vertex.location.as_deref().is_some_and(|l| l != "global") {
                return Err(err(
                    "vertex.location",
                    "express mode (an apiKey) is served from the global endpoint only",
                ));
            }
            let path = format!("v1/publishers/{publisher}/models/{model}:{method}");
            let url = join_url(base.unwrap_or(GLOBAL_HOST), &path);
            (url, vec![("x-goog-api-key".to_string(), key.to_string())])
        }
        (None, None) => {
            return Err(err(
                "vertex.project",
                "Vertex needs the Google Cloud project (or, for Gemini's express mode, \
                 an apiKey)",
            ))
        }
        (Some(project), None) => {
            if project.is_empty() {
                return Err(err("vertex.project", "must not be empty"));
            }
            let location = vertex.location.as_deref().ok_or_else(|| {
                err(
                    "vertex.location",
                    "Vertex needs the location: a region (us-central1), global, eu or us",
                )
            })?;
            if !valid_location(location) {
                return Err(Error::invalid_request(
                    "vertex.location",
                    format!(
                        "\"{location}\" is not a location: a region (us-central1), \
                         global, eu or us"
                    ),
                ));
            }
            let path = format!(
                "v1/projects/{}/locations/{location}/publishers/{publisher}/models/{model}:{method}",
                percent_encode(project.as_bytes(), b"")
            );
            let url = join_url(base.unwrap_or(&host(location)), &path);
            let auth = token.map(|t| ("authorization".to_string(), format!("Bearer {t}")));
            (url, auth.into_iter().collect())
        }
    };
    Ok((url, headers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Provider;

    fn config(vertex: Vertex) -> ClientConfig {
        ClientConfig::new(Provider::Gemini)
            .with_vertex(vertex)
            .with_access_token("tok")
    }

    fn url(config: &ClientConfig, publisher: &str) -> Result<String, Error> {
        let vertex = config.vertex.clone().unwrap_or_default();
        endpoint(config, &vertex, publisher, "m@1", "rawPredict").map(|(u, _)| u)
    }

    /// A service account's tokens go to Vertex AI's config alone, without
    /// a key or a fixed token beside them.
    #[test]
    fn a_service_account_needs_a_config_that_takes_its_token() {
        let vertex = Vertex::new("p", "us-central1");
        let ok = ClientConfig::new(Provider::Anthropic).with_vertex(vertex.clone());
        assert_eq!(takes_token(&ok, "serviceAccount"), Ok(()));
        let path = |c: &ClientConfig| match takes_token(c, "fallback[0].serviceAccount") {
            Err(Error::InvalidRequest { path, message }) => format!("{path}: {message}"),
            other => panic!("{other:?}"),
        };
        let plain = ClientConfig::new(Provider::Gemini);
        assert!(path(&plain).starts_with("fallback[0].serviceAccount: is Vertex AI's"));
        assert!(path(&ok.clone().with_api_key("k")).contains("API key"));
        assert!(path(&config(vertex)).contains("access token"));
    }

    #[test]
    fn each_location_form_names_its_host() {
        let cases = [
            (
                "us-east5",
                "https://us-east5-aiplatform.googleapis.com/v1/projects/p-1/locations/us-east5/publishers/anthropic/models/m@1:rawPredict",
            ),
            (
                "global",
                "https://aiplatform.googleapis.com/v1/projects/p-1/locations/global/publishers/anthropic/models/m@1:rawPredict",
            ),
            (
                "eu",
                "https://aiplatform.eu.rep.googleapis.com/v1/projects/p-1/locations/eu/publishers/anthropic/models/m@1:rawPredict",
            ),
            (
                "us",
                "https://aiplatform.us.rep.googleapis.com/v1/projects/p-1/locations/us/publishers/anthropic/models/m@1:rawPredict",
            ),
        ];
        for (location, want) in cases {
            let c = config(Vertex::new("p-1", location));
            assert_eq!(url(&c, "anthropic").unwrap(), want, "{location}");
        }
    }

    #[test]
    fn a_base_url_stands_for_the_host() {
        let c = config(Vertex::new("p", "us-central1")).with_base_url("http://127.0.0.1:9/");
        assert_eq!(
            url(&c, "google").unwrap(),
            "http://127.0.0.1:9/v1/projects/p/locations/us-central1/publishers/google/models/m@1:rawPredict"
        );
    }

    #[test]
    fn the_token_is_a_bearer_token_and_express_mode_sends_the_key() {
        let c = config(Vertex::new("p", "global"));
        let (_, headers) = endpoint(&c, &Vertex::new("p", "global"), "google", "m", "x").unwrap();
        assert_eq!(headers, [("authorization".into(), "Bearer tok".into())]);
        let mut express = ClientConfig::new(Provider::Gemini)
            .with_vertex(Vertex::express())
            .with_api_key("key-1");
        let (u, headers) = endpoint(&express, &Vertex::express(), "google", "m", "x").unwrap();
        assert_eq!(
            u,
            "https://aiplatform.googleapis.com/v1/publishers/google/models/m:x"
        );
        assert_eq!(headers, [("x-goog-api-key".into(), "key-1".into())]);
        express.vertex = Some(Vertex {
            project: None,
            location: Some("global".into()),
        });
        assert!(url(&express, "google").is_ok());
    }

    #[test]
    fn a_wrong_combination_names_the_option() {
        let path = |c: &ClientConfig, publisher| match url(c, publisher) {
            Err(Error::InvalidRequest { path, .. }) => path,
            other => panic!("{other:?}"),
        };
        let both = config(Vertex::new("p", "global")).with_api_key("k");
        assert_eq!(path(&both, "google"), "apiKey");
        let claude_key = ClientConfig::new(Provider::Anthropic)
            .with_vertex(Vertex::express())
            .with_api_key("k");
        assert_eq!(path(&claude_key, "anthropic"), "apiKey");
        let key_and_project = ClientConfig::new(Provider::Gemini)
            .with_vertex(Vertex::new("p", "global"))
            .with_api_key("k");
        assert_eq!(path(&key_and_project, "google"), "vertex.project");
        let express_region = ClientConfig::new(Provider::Gemini)
            .with_vertex(Vertex {
                project: None,
                location: Some("us-central1".into()),
            })
            .with_api_key("k");
        assert_eq!(path(&express_region, "google"), "vertex.location");
        let nothing = ClientConfig::new(Provider::Gemini).with_vertex(Vertex::express());
        assert_eq!(path(&nothing, "google"), "vertex.project");
        let no_location = config(Vertex {
            project: Some("p".into()),
            location: None,
        });
        assert_eq!(path(&no_location, "google"), "vertex.location");
        for bad in ["", "US", "us/east", "evil.com#", "1us", "a b"] {
            let c = config(Vertex::new("p", bad));
            assert_eq!(path(&c, "google"), "vertex.location", "{bad:?}");
        }
        assert_eq!(
            path(&config(Vertex::new("", "eu")), "google"),
            "vertex.project"
        );
    }

    #[cfg(feature = "anthropic")]
    #[test]
    fn claude_on_vertex_has_no_model_in_its_body_and_the_version_in_it() {
        let c = ClientConfig::new(Provider::Anthropic)
            .with_vertex(Vertex::new("p", "us-east5"))
            .with_access_token("ya29.tok")
            .with_model("claude-sonnet-4-5@20250929");
        let request = crate::Request {
            messages: vec![crate::Message::user("hi")],
            ..crate::Request::default()
        };
        for (stream, method) in [(true, "streamRawPredict"), (false, "rawPredict")] {
            let http = crate::encode_request(&c, &request, stream).unwrap();
            assert_eq!(
                http.url,
                format!(
                    "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/\
                     publishers/anthropic/models/claude-sonnet-4-5@20250929:{method}"
                )
            );
            let body: serde_json::Value = serde_json::from_str(&http.body).unwrap();
            assert_eq!(body.get("model"), None);
            assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
            assert_eq!(body.get("stream").is_some(), stream);
            assert_eq!(http.header("authorization"), Some("Bearer ya29.tok"));
            assert_eq!(http.header("anthropic-version"), None);
            assert_eq!(http.header("x-api-key"), None);
        }
    }

    #[cfg(feature = "gemini")]
    #[test]
    fn gemini_on_vertex_keeps_its_body_and_streams_in_sse() {
        let request = crate::Request {
            messages: vec![crate::Message::user("hi")],
            ..crate::Request::default()
        };
        let direct = ClientConfig::new(Provider::Gemini).with_model("gemini-2.5-flash");
        let c = direct
            .clone()
            .with_vertex(Vertex::new("p", "global"))
            .with_access_token("ya29.tok");
        let http = crate::encode_request(&c, &request, true).unwrap();
        assert_eq!(
            http.url,
            "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/\
             models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            http.body,
            crate::encode_request(&direct, &request, true).unwrap().body
        );
        assert_eq!(http.header("x-goog-api-key"), None);
        let express = ClientConfig::new(Provider::Gemini)
            .with_vertex(Vertex::express())
            .with_api_key("AQ.key")
            .with_model("gemini-2.5-flash");
        let http = crate::encode_request(&express, &request, false).unwrap();
        assert_eq!(
            http.url,
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(http.header("x-goog-api-key"), Some("AQ.key"));
        assert_eq!(http.header("authorization"), None);
    }

    #[test]
    fn the_project_is_one_path_segment() {
        let c = config(Vertex::new("a/../b?x", "eu"));
        assert!(url(&c, "google")
            .unwrap()
            .contains("/projects/a%2F..%2Fb%3Fx/locations/eu/"));
    }
}
