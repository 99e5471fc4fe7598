//! Reading a response body chunk by chunk: a web-sys
//! `ReadableStreamDefaultReader` for a stream of this realm, the same
//! calls made by name for a stream of another realm or a polyfill, and
//! `text()` for a response whose body is not a stream.
//!
//! Each chunk's bytes are copied into one buffer, reused for the whole
//! body; every wait goes through the request's [`Gate`].

use js_sys::{Function, Promise};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{ReadableStream, ReadableStreamDefaultReader, ReadableStreamReadResult};

use super::abort::Gate;
use super::fetch::Answer;
use super::js;
use super::settle::Settler;

/// Why a body could not be read further.
pub(crate) enum ReadError {
    /// The request or attempt was cut (a timeout, a drop).
    Cut,
    /// The stream failed: the connection broke.
    Failed(String),
    /// A chunk was not bytes.
    NotBytes(String),
}

enum Source {
    /// A stream of this realm.
    Native(ReadableStreamDefaultReader),
    /// A stream-like object: its reader, and the reader's `read`.
    Duck { reader: JsValue, read: Function },
    /// A response without a stream body, read whole with `text()`.
    Text(JsValue),
    /// Nothing more to read.
    Ended,
}

/// A response body being read.
pub(crate) struct Body {
    source: Source,
    buf: Vec<u8>,
    /// Awaits each `read()` with callbacks made once for the body.
    settler: Settler,
}

impl Body {
    /// The body of `answer`: its stream, else its `text()`, else empty.
    pub(crate) fn of(answer: &Answer) -> Result<Body, String> {
        match &answer.body {
            Some(stream) => Body::stream(stream),
            None if js::method(&answer.response, "text").is_some() => {
                Ok(Body::new(Source::Text(answer.response.clone())))
            }
            None => Ok(Body::new(Source::Ended)),
        }
    }

    /// A `ReadableStream` (of any realm) or any object with `getReader()`.
    pub(crate) fn stream(stream: &JsValue) -> Result<Body, String> {
        let source = match stream.dyn_ref::<ReadableStream>() {
            Some(native) => ReadableStreamDefaultReader::new(native)
                .map(Source::Native)
                .map_err(|e| format!("the body cannot be read: {}", js::message(&e)))?,
            None => {
                let reader = js::call(stream, "getReader", &[])
                    .map_err(|e| format!("the body cannot be read: {}", js::message(&e)))?;
                let read = js::method(&reader, "read").ok_or_else(|| {
                    format!(
                        "the body is not a ReadableStream: getReader() gave {}",
                        js::describe(&reader)
                    )
                })?;
                Source::Duck { reader, read }
            }
        };
        Ok(Body::new(source))
    }

    fn new(source: Source) -> Body {
        Body {
            source,
            buf: Vec::new(),
            settler: Settler::default(),
        }
    }

    /// The reader to cancel when the attempt ends, if the body has one.
    pub(crate) fn reader(&self) -> Option<JsValue> {
        match &self.source {
            Source::Native(reader) => Some(reader.clone().into()),
            Source::Duck { reader, .. } => Some(reader.clone()),
            Source::Text(_) | Source::Ended => None,
        }
    }

    /// The next chunk's bytes, or `None` at the end of the body.
    pub(crate) async fn next(&mut self, gate: &Gate) -> Result<Option<&[u8]>, ReadError> {
        let pending = match &self.source {
            Source::Native(reader) => reader.read(),
            Source::Duck { reader, read } => match read.call0(reader) {
                Ok(result) => Promise::resolve(&result),
                Err(e) => return Err(ReadError::Failed(js::message(&e))),
            },
            Source::Text(response) => match js::call(response, "text", &[]) {
                Ok(text) => Promise::resolve(&text),
                Err(e) => return Err(ReadError::Failed(js::message(&e))),
            },
            Source::Ended => return Ok(None),
        };
        let settled = gate
            .guard(self.settler.wait(&pending))
            .await
            .map_err(|_| ReadError::Cut)?;
        let result = settled.map_err(|e| ReadError::Failed(js::message(&e)))?;
        let (done, value) = match &self.source {
            Source::Native(_) => {
                let result: &ReadableStreamReadResult = result.unchecked_ref();
                (result.get_done().unwrap_or(false), result.get_value())
            }
            Source::Duck { .. } => (
                js::get(&result, "done").is_truthy(),
                js::get(&result, "value"),
            ),
            Source::Text(_) => {
                self.source = Source::Ended;
                (false, result)
            }
            Source::Ended => (true, JsValue::UNDEFINED),
        };
        if done {
            self.source = Source::Ended;
            return Ok(None);
        }
        js::chunk_bytes(&value, &mut self.buf).map_err(ReadError::NotBytes)?;
        Ok(Some(&self.buf))
    }
}
