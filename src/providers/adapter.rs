//! What an adapter is, as one entry of the provider table
//! (`providers/mod.rs`): its framing and the functions every dispatch
//! calls. Each adapter folder declares its entries (a `const` of
//! [`Adapter`]); nothing else in the crate names an adapter.

use std::fmt;

use serde_json::{Map, Value};

use super::embed::Embedder;
use super::{EncodeInput, Encoded, FrameFailure};
use crate::accumulate::{Accumulator, Delta};
use crate::error::{ApiError, ApiErrorKind, Error};
use crate::framing::{Frame, Framing};

/// One stream's decoding state in an adapter: frames in, deltas out.
///
/// (No `Debug` bound: a vtable entry would link every state's `Debug`
/// into the wasm.)
pub(crate) trait FrameStream {
    /// Decodes one frame into deltas; `acc` is what has been assembled
    /// from the earlier ones.
    fn frame(
        &mut self,
        frame: &Frame,
        acc: &Accumulator,
        out: &mut Vec<Delta>,
    ) -> Result<(), FrameFailure>;

    /// The body ended: the deltas of what the state still holds (a call
    /// whose end waited for the next frame).
    fn end(&mut self, _out: &mut Vec<Delta>) {}
}

/// One provider's adapter: how its streams are framed, and the functions
/// the dispatch calls.
pub(crate) struct Adapter {
    /// How a streamed body is cut into frames.
    pub(crate) framing: Framing,
    /// [`crate::Request`] to URL, provider headers and body.
    pub(crate) encode: fn(&EncodeInput<'_>) -> Result<Encoded, Error>,
    /// A non-streaming body to deltas.
    pub(crate) response: fn(&Value) -> Result<Vec<Delta>, FrameFailure>,
    /// Whether a JSON body is one of its whole responses (a server that
    /// ignored `stream` sent it).
    pub(crate) is_whole: fn(&Value) -> bool,
    /// An error body to an [`ApiError`], when it is one.
    pub(crate) error: fn(&Value) -> Option<ApiError>,
    /// A new stream's decoding state.
    pub(crate) stream: fn() -> Box<dyn FrameStream>,
    /// Its embeddings, or why it has none (the error's message).
    pub(crate) embed: Result<Embedder, &'static str>,
    /// Whether it replays the `provider` parts named for it (every
    /// adapter leaves out those of another provider).
    pub(crate) parts: bool,
    /// Which files the model made (the `file` parts of an assistant
    /// message) it takes back.
    pub(crate) files: Files,
    /// The error type and kind of an HTTP error whose body names none,
    /// from its status and headers (Bedrock's `x-amzn-ErrorType`, or the
    /// one exception a status stands for); `None`: the status decides.
    pub(crate) error_type: Option<ErrorType>,
    /// `providerOptions` reshaped before they are merged into the body
    /// (Bedrock's model fields go into `additionalModelRequestFields`);
    /// `None`: merged as given.
    pub(crate) options: Option<Reshape>,
    /// How it signs each attempt with a config's AWS credentials at the
    /// driver's clock (Bedrock's SigV4); `None`: it takes none.
    pub(crate) sign: Option<fn(&crate::ClientConfig, &mut crate::HttpRequest, u64)>,
    /// Why it cannot turn a request's tools off (`toolChoice: "none"`),
    /// if it cannot: such a request is refused before it is sent, and so
    /// is a run's final answer at the run's start.
    pub(crate) no_tool_choice_none: Option<&'static str>,
}

/// A status and headers in, an error's type and kind out.
pub(crate) type ErrorType = fn(u16, &[(String, String)]) -> Option<(String, ApiErrorKind)>;

/// `providerOptions` in, the options merged into the body out.
pub(crate) type Reshape = fn(&Map<String, Value>) -> Map<String, Value>;

/// The files the model made that an adapter takes back in a history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)] // (a one-adapter build may leave a kind unused)
pub(crate) enum Files {
    /// None: an assistant turn holds only text and calls.
    None,
    /// Its own, by the item in their `providerData` (a Responses image
    /// goes back as its `image_generation_call`).
    Own,
    /// Any with data (Gemini: `inlineData` in a model turn).
    Any,
}

impl fmt::Debug for Adapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adapter")
            .field("framing", &self.framing)
            .finish_non_exhaustive()
    }
}
