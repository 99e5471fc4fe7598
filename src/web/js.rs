//! Reading JS values that may come from anywhere: a `Response` of another
//! realm or a polyfill, a body chunk of any kind, an exception of any type.
//!
//! Everything goes through `Reflect` and `Function.prototype.call`, which
//! report a throw as an `Err`: no JS exception unwinds through the wasm and
//! nothing here panics, whatever the value.

use js_sys::{Array, ArrayBuffer, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

/// Whether this runs in a browser page (a global `window` and
/// `document`, the npm package's test): there, what a request carries is
/// the page's, readable by every visitor.
pub(crate) fn in_page() -> bool {
    let global = js_sys::global();
    !get(&global, "window").is_undefined() && !get(&global, "document").is_undefined()
}

/// `value[key]`, or `undefined` when reading it throws.
pub(crate) fn get(value: &JsValue, key: &str) -> JsValue {
    if !value.is_object() && !value.is_function() {
        return JsValue::UNDEFINED;
    }
    Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// The method `name` of `value`, if it has one.
pub(crate) fn method(value: &JsValue, name: &str) -> Option<Function> {
    get(value, name).dyn_into::<Function>().ok()
}

/// Calls the method `name` of `value` with `args`: its result, or what it
/// threw (a `TypeError` naming the method when there is none).
pub(crate) fn call(value: &JsValue, name: &str, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let Some(f) = method(value, name) else {
        return Err(JsValue::from_str(&format!("{name} is not a function")));
    };
    match args {
        [] => f.call0(value),
        [a] => f.call1(value, a),
        [a, b] => f.call2(value, a, b),
        _ => f.apply(value, &args.iter().copied().collect::<Array>()),
    }
}

/// Whether `value` can be awaited: a promise, or any object with `then`.
pub(crate) fn is_thenable(value: &JsValue) -> bool {
    method(value, "then").is_some()
}

/// A readable message for what JS threw or rejected with: an error's
/// `name: message`, a string as it is, anything else by its type.
pub(crate) fn message(value: &JsValue) -> String {
    if let Some(s) = value.as_string() {
        return s;
    }
    let text = |key| get(value, key).as_string().filter(|s| !s.is_empty());
    match (text("name"), text("message")) {
        (Some(name), Some(message)) => format!("{name}: {message}"),
        (None, Some(message)) => message,
        (Some(name), None) => name,
        (None, None) => describe(value),
    }
}

/// What kind of value this is, for a message: `undefined`, `null`, `a
/// number`, `an object`, ...
pub(crate) fn describe(value: &JsValue) -> String {
    if value.is_undefined() {
        "undefined".into()
    } else if value.is_null() {
        "null".into()
    } else if let Some(n) = value.as_f64() {
        format!("the number {n}")
    } else if value.as_bool().is_some() {
        "a boolean".into()
    } else if value.is_string() {
        "a string".into()
    } else if value.is_function() {
        "a function".into()
    } else {
        "an object".into()
    }
}

/// A body chunk's bytes copied into `out` (cleared first): a `Uint8Array`
/// (of any realm), another typed array or `DataView`, an `ArrayBuffer`, or
/// a string (as UTF-8), as the JS half reads chunks. `Err` names what else
/// came.
pub(crate) fn chunk_bytes(value: &JsValue, out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    if let Some(array) = value.dyn_ref::<Uint8Array>() {
        copy(array, out);
        return Ok(());
    }
    if let Some(text) = value.as_string() {
        out.extend_from_slice(text.as_bytes());
        return Ok(());
    }
    // A view or buffer of another type or realm: its bytes, through a
    // Uint8Array of ours over its buffer (constructed through Reflect,
    // which reports a throw).
    let args = if ArrayBuffer::is_view(value) {
        Array::of3(
            &get(value, "buffer"),
            &get(value, "byteOffset"),
            &get(value, "byteLength"),
        )
    } else if value.is_instance_of::<ArrayBuffer>() || tag(value) == "[object ArrayBuffer]" {
        Array::of1(value)
    } else {
        return Err(format!(
            "a body chunk must be bytes (a Uint8Array), not {}",
            describe(value)
        ));
    };
    let ours = get(&js_sys::global(), "Uint8Array")
        .dyn_into::<Function>()
        .ok()
        .and_then(|ctor| Reflect::construct(&ctor, &args).ok())
        .and_then(|v| v.dyn_into::<Uint8Array>().ok());
    match ours {
        Some(view) => {
            copy(&view, out);
            Ok(())
        }
        None => Err("a body chunk's bytes could not be read".into()),
    }
}

fn copy(array: &Uint8Array, out: &mut Vec<u8>) {
    out.resize(array.length() as usize, 0);
    array.copy_to(out);
}

/// `Object.prototype.toString.call(value)`, which names the built-in type
/// of a value of any realm (`[object ArrayBuffer]`); empty if it throws.
fn tag(value: &JsValue) -> String {
    let object: JsValue = Object::new().into();
    method(&object, "toString")
        .and_then(|f| f.call0(value).ok())
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}

/// The name and value pairs of a `Headers` (or any iterable of pairs, or a
/// plain object of strings), names lowercased; what cannot be read is left
/// out.
pub(crate) fn header_pairs(headers: &JsValue) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut push = |k: JsValue, v: JsValue| {
        if let (Some(k), Some(v)) = (k.as_string(), v.as_string()) {
            out.push((k.to_ascii_lowercase(), v));
        }
    };
    if let Ok(Some(entries)) = js_sys::try_iter(headers) {
        for entry in entries.flatten() {
            push(get(&entry, "0"), get(&entry, "1"));
        }
    } else if headers.is_object() {
        for key in Reflect::own_keys(headers)
            .map(|a| a.to_vec())
            .unwrap_or_default()
        {
            let value = Reflect::get(headers, &key).unwrap_or(JsValue::UNDEFINED);
            push(key, value);
        }
    }
    out
}
