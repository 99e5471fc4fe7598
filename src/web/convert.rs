//! The model to and from `JsValue`, in the JSON shapes of the npm package
//! (`index.d.ts`): the same value `JSON.parse` gives for the text
//! `serde_json` (or the JS half) writes.
//!
//! The route is a [`serde_json::Value`]: the model's own `Serialize` and
//! readers, then serde-wasm-bindgen's JSON-compatible serializer (plain
//! objects, `null` for `None`). A number beyond JavaScript's safe integers,
//! which serde-wasm-bindgen refuses, becomes the nearest `f64`, as
//! `JSON.parse` makes it. The other way, a JS value is read into a `Value`
//! and then by the readers the JSON boundary uses, so an error names the
//! field (`messages[0].role`).

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;
use wasm_bindgen::JsValue;

use crate::error::Error;
use crate::model::from_json::{self as read, At, ReadError};
use crate::model::{Message, Request, Response, StreamEvent};

/// A model type that crosses to and from JavaScript: [`Request`],
/// [`Message`], a history (`Vec<Message>`), [`Response`] and
/// [`StreamEvent`]. Sealed: use [`to_js`] and [`from_js`].
pub trait JsModel: Serialize + Sized + sealed::Sealed {
    /// Reads the value from its JSON form.
    #[doc(hidden)]
    fn read_value(value: Value) -> Result<Self, Error>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::model::Request {}
    impl Sealed for crate::model::Message {}
    impl Sealed for Vec<crate::model::Message> {}
    impl Sealed for crate::model::Response {}
    impl Sealed for crate::model::StreamEvent {}
}

/// A reader's error as the request error it is, under `what` at the root.
fn invalid(e: ReadError, what: &str) -> Error {
    let path = if e.path.is_empty() {
        what.to_string()
    } else {
        e.path
    };
    Error::InvalidRequest {
        path,
        message: e.message,
    }
}

impl JsModel for Request {
    fn read_value(value: Value) -> Result<Self, Error> {
        read::request(value, &At::Root("")).map_err(|e| invalid(e, "request"))
    }
}

impl JsModel for Message {
    fn read_value(value: Value) -> Result<Self, Error> {
        read::message(value, &At::Root("message")).map_err(|e| invalid(e, "message"))
    }
}

impl JsModel for Vec<Message> {
    fn read_value(value: Value) -> Result<Self, Error> {
        let root = At::Root("messages");
        let Value::Array(items) = value else {
            return Err(Error::InvalidRequest {
                path: "messages".into(),
                message: "expected an array of messages".into(),
            });
        };
        let mut out = Vec::with_capacity(items.len().min(1024));
        for (i, item) in items.into_iter().enumerate() {
            out.push(
                read::message(item, &At::Index(&root, i)).map_err(|e| invalid(e, "messages"))?,
            );
        }
        Ok(out)
    }
}

impl JsModel for Response {
    fn read_value(value: Value) -> Result<Self, Error> {
        serde_json::from_value(value).map_err(|e| Error::InvalidResponse {
            message: format!("not a Response: {e}"),
        })
    }
}

impl JsModel for StreamEvent {
    fn read_value(value: Value) -> Result<Self, Error> {
        serde_json::from_value(value).map_err(|e| Error::InvalidResponse {
            message: format!("not a StreamEvent: {e}"),
        })
    }
}

/// `value` as a plain JS value, in the npm package's JSON shape:
/// `JSON.stringify` of it gives the text the package's own objects give.
///
/// ```
/// use skyl::{web, Message};
///
/// let history = vec![Message::user("Hi")];
/// let js = web::to_js(&history)?;
/// // ... hand `js` to JS code, e.g. to store it
/// let back: Vec<Message> = web::from_js(&js)?;
/// assert_eq!(back, history);
/// # Ok::<(), skyl::Error>(())
/// ```
pub fn to_js<T: JsModel>(value: &T) -> Result<JsValue, Error> {
    let tree = serde_json::to_value(value).map_err(|e| Error::InvalidRequest {
        path: String::new(),
        message: format!("cannot be written as JSON: {e}"),
    })?;
    JsCompatible(&tree)
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::InvalidRequest {
            path: String::new(),
            message: format!("cannot be converted to a JS value: {e}"),
        })
}

/// A model value read from a JS value of the npm package's JSON shape (as
/// `JSON.parse` gives it, or a plain object literal). A request or message
/// that does not fit is [`Error::InvalidRequest`] with the path of the
/// field; a response or event, [`Error::InvalidResponse`].
pub fn from_js<T: JsModel>(value: &JsValue) -> Result<T, Error> {
    let tree: Value =
        serde_wasm_bindgen::from_value(value.clone()).map_err(|e| Error::InvalidRequest {
            path: String::new(),
            message: format!("not a JSON value: {e}"),
        })?;
    T::read_value(tree)
}

/// A [`Value`] serialized with every number a JavaScript number: an
/// integer outside the safe range (±2^53) as the nearest `f64`.
struct JsCompatible<'a>(&'a Value);

impl Serialize for JsCompatible<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        const SAFE: u64 = (1 << 53) - 1;
        match self.0 {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) if u <= SAFE => s.serialize_u64(u),
                (_, Some(i)) if i.unsigned_abs() <= SAFE => s.serialize_i64(i),
                _ => s.serialize_f64(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(text) => s.serialize_str(text),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&JsCompatible(item))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut out = s.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    out.serialize_entry(k, &JsCompatible(v))?;
                }
                out.end()
            }
        }
    }
}
