//! AWS's binary event stream (`application/vnd.amazon.eventstream`), the
//! framing of Amazon Bedrock's `ConverseStream`: bytes in any chunking in,
//! whole messages out, as [`crate::SseParser`] does for server-sent
//! events.
//!
//! A message is laid out as:
//!
//! ```text
//! total length (u32 BE) | headers length (u32 BE) | CRC-32 of those 8 bytes
//! headers                | payload                 | CRC-32 of everything before
//! ```
//!
//! and each header as a name (u8 length, then UTF-8), a type byte and a
//! value (<https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html>,
//! "Event stream encoding"). Both CRCs (CRC-32, IEEE) are checked; a
//! message longer than the limit is refused as soon as its prelude is read,
//! before it is buffered; nothing here panics.

use crate::error::Error;
use crate::model::Response;
use crate::sse::DEFAULT_MAX_EVENT_BYTES;

/// The prelude: two lengths and their CRC.
const PRELUDE: usize = 12;
/// The prelude and the message CRC: the smallest message.
const OVERHEAD: usize = PRELUDE + 4;

/// A header's value, by its type byte.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderValue {
    /// Types 0 (true) and 1 (false).
    Bool(bool),
    /// Type 2.
    Byte(i8),
    /// Type 3.
    Short(i16),
    /// Type 4.
    Int(i32),
    /// Type 5.
    Long(i64),
    /// Type 6: bytes, u16 length.
    Bytes(Vec<u8>),
    /// Type 7: UTF-8, u16 length.
    String(String),
    /// Type 8: milliseconds since the epoch.
    Timestamp(i64),
    /// Type 9: 16 bytes.
    Uuid([u8; 16]),
}

/// One message of an event stream: its headers, in the order sent (read
/// them by name: AWS documents no order), and its payload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventStreamMessage {
    /// Each header's name and value.
    pub headers: Vec<(String, HeaderValue)>,
    /// The payload (for Bedrock, a JSON object).
    pub payload: Vec<u8>,
}

impl EventStreamMessage {
    /// The string value of the header `name` (`:event-type`,
    /// `:message-type`, `:exception-type`, ...), if it has one.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(n, v)| match v {
            HeaderValue::String(s) if n == name => Some(s.as_str()),
            _ => None,
        })
    }
}

/// The incremental decoder: [`feed`](Self::feed) bytes as they arrive,
/// [`finish`](Self::finish) at the end.
///
/// ```
/// use skyl::EventStreamParser;
///
/// // One message: a `:event-type` header and a JSON payload.
/// let bytes = skyl::encode_event_stream_message(
///     &[(":event-type", "messageStop")],
///     br#"{"stopReason":"end_turn"}"#,
/// );
/// let mut parser = EventStreamParser::new();
/// let mut out = Vec::new();
/// for byte in &bytes {
///     parser.feed(std::slice::from_ref(byte), &mut out).unwrap();
/// }
/// assert_eq!(out[0].header(":event-type"), Some("messageStop"));
/// assert_eq!(out[0].payload, br#"{"stopReason":"end_turn"}"#);
/// assert_eq!(parser.finish(), 0);
/// ```
#[derive(Debug)]
pub struct EventStreamParser {
    /// Bytes of the message not yet whole.
    buf: Vec<u8>,
    max_message_bytes: usize,
}

impl Default for EventStreamParser {
    fn default() -> Self {
        Self::new()
    }
}

impl EventStreamParser {
    /// A parser whose messages may hold up to
    /// [`DEFAULT_MAX_EVENT_BYTES`](crate::DEFAULT_MAX_EVENT_BYTES) each.
    pub fn new() -> Self {
        Self::with_max_message_bytes(DEFAULT_MAX_EVENT_BYTES)
    }

    /// A parser whose messages may hold up to `limit` bytes each (the
    /// whole message, prelude and CRCs included).
    pub fn with_max_message_bytes(limit: usize) -> Self {
        EventStreamParser {
            buf: Vec::new(),
            max_message_bytes: limit,
        }
    }

    /// The size limit for one message.
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// Appends to `out` every message `chunk` completes. A message longer
    /// than the limit is [`Error::EventTooLarge`]; a bad CRC, length or
    /// header is [`Error::MalformedStream`]. After an error, the parser
    /// holds nothing more.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<EventStreamMessage>) -> Result<(), Error> {
        let mut rest = chunk;
        // First the message the last chunk cut, byte ranges at a time.
        while !self.buf.is_empty() {
            let total = prelude(&self.buf, self.max_message_bytes).map_err(|b| self.fail(b))?;
            let need = total.unwrap_or(PRELUDE);
            if total.is_some() {
                self.buf.reserve(need.saturating_sub(self.buf.len()));
            }
            let (head, tail) = rest.split_at(need.saturating_sub(self.buf.len()).min(rest.len()));
            self.buf.extend_from_slice(head);
            rest = tail;
            if self.buf.len() < need {
                return Ok(());
            }
            if total.is_some() {
                let whole = std::mem::take(&mut self.buf);
                let message = read_message(&whole).map_err(|b| self.fail(b))?;
                out.push(message);
            }
            // (Else the prelude just completed: its total is read next.)
        }
        // Then the messages whole in the chunk, read in place; a cut one
        // is buffered.
        while !rest.is_empty() {
            let Some(total) = prelude(rest, self.max_message_bytes).map_err(|b| self.fail(b))?
            else {
                self.buf.extend_from_slice(rest);
                return Ok(());
            };
            if rest.len() < total {
                self.buf.reserve(total);
                self.buf.extend_from_slice(rest);
                return Ok(());
            }
            let (message, tail) = rest.split_at(total);
            out.push(read_message(message).map_err(|b| self.fail(b))?);
            rest = tail;
        }
        Ok(())
    }

    /// The error for `bad`: the parser drops what it held.
    fn fail(&mut self, bad: Bad) -> Error {
        self.buf = Vec::new();
        match bad {
            Bad::TooLarge => Error::event_too_large(self.max_message_bytes),
            Bad::Malformed(message) => Error::MalformedStream {
                message: format!("event stream: {message}"),
                events_emitted: false,
                partial: Box::<Response>::default(),
            },
        }
    }

    /// Ends the body. Returns how many bytes of a message that never
    /// completed were left (0 when the body ended between messages): a
    /// stream cut off there ends early, which its decoder reports.
    pub fn finish(&mut self) -> usize {
        std::mem::take(&mut self.buf).len()
    }
}

/// Why bytes are not a message.
enum Bad {
    /// Longer than the limit.
    TooLarge,
    /// A bad CRC, length or header.
    Malformed(String),
}

/// The total length of the message at the start of `bytes`, once its
/// prelude is there and checked (its CRC, its lengths, the limit); `None`
/// before.
fn prelude(bytes: &[u8], limit: usize) -> Result<Option<usize>, Bad> {
    let Some(prelude) = bytes.get(..PRELUDE) else {
        return Ok(None);
    };
    let total = be32(prelude, 0) as usize;
    let headers = be32(prelude, 4) as usize;
    if crc32(0, prelude.get(..8).unwrap_or_default()) != be32(prelude, 8) {
        return Err(Bad::Malformed("the prelude's CRC does not match".into()));
    }
    if total < OVERHEAD || headers > total - OVERHEAD {
        return Err(Bad::Malformed(format!(
            "a message of {total} bytes cannot hold {headers} bytes of headers"
        )));
    }
    if total > limit {
        return Err(Bad::TooLarge);
    }
    Ok(Some(total))
}

/// The message that is all of `bytes` (its prelude already checked).
fn read_message(bytes: &[u8]) -> Result<EventStreamMessage, Bad> {
    let total = bytes.len();
    let headers_len = be32(bytes, 4) as usize;
    let body = bytes.get(..total.saturating_sub(4)).unwrap_or_default();
    if crc32(0, body) != be32(bytes, total.saturating_sub(4)) {
        return Err(Bad::Malformed("a message's CRC does not match".into()));
    }
    let headers = bytes
        .get(PRELUDE..PRELUDE + headers_len)
        .unwrap_or_default();
    let headers = read_headers(headers).map_err(Bad::Malformed)?;
    let payload = bytes
        .get(PRELUDE + headers_len..total.saturating_sub(4))
        .unwrap_or_default();
    Ok(EventStreamMessage {
        headers,
        payload: payload.to_vec(),
    })
}

/// A big-endian u32 at `at` of `bytes` (0 past the end; callers check
/// the lengths first).
fn be32(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = bytes.get(at..at + 4) {
        b.copy_from_slice(s);
    }
    u32::from_be_bytes(b)
}

/// The headers of a message, or why they cannot be read.
fn read_headers(mut h: &[u8]) -> Result<Vec<(String, HeaderValue)>, String> {
    fn take<'a>(h: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
        if h.len() < n {
            return Err("a header runs past the headers' end".into());
        }
        let (head, tail) = h.split_at(n);
        *h = tail;
        Ok(head)
    }
    fn int<const N: usize>(h: &mut &[u8]) -> Result<[u8; N], String> {
        let mut b = [0u8; N];
        b.copy_from_slice(take(h, N)?);
        Ok(b)
    }
    let mut out = Vec::new();
    while !h.is_empty() {
        let [len] = int::<1>(&mut h)?;
        let name = std::str::from_utf8(take(&mut h, usize::from(len))?)
            .map_err(|_| "a header name is not UTF-8".to_string())?
            .to_string();
        let [kind] = int::<1>(&mut h)?;
        let value = match kind {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Byte(i8::from_be_bytes(int::<1>(&mut h)?)),
            3 => HeaderValue::Short(i16::from_be_bytes(int::<2>(&mut h)?)),
            4 => HeaderValue::Int(i32::from_be_bytes(int::<4>(&mut h)?)),
            5 => HeaderValue::Long(i64::from_be_bytes(int::<8>(&mut h)?)),
            6 | 7 => {
                let len = u16::from_be_bytes(int::<2>(&mut h)?);
                let bytes = take(&mut h, usize::from(len))?;
                if kind == 6 {
                    HeaderValue::Bytes(bytes.to_vec())
                } else {
                    let s = std::str::from_utf8(bytes)
                        .map_err(|_| format!("header {name}: its string is not UTF-8"))?;
                    HeaderValue::String(s.to_string())
                }
            }
            8 => HeaderValue::Timestamp(i64::from_be_bytes(int::<8>(&mut h)?)),
            9 => HeaderValue::Uuid(int::<16>(&mut h)?),
            other => return Err(format!("header {name}: unknown value type {other}")),
        };
        out.push((name, value));
    }
    Ok(out)
}

/// CRC-32 (IEEE 802.3, reflected, as zlib's `crc32`), continued from
/// `crc` (0 to start).
pub(crate) fn crc32(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        let i = usize::from((c as u8) ^ b);
        c = CRC_TABLE.get(i).copied().unwrap_or(0) ^ (c >> 8);
    }
    !c
}

/// The byte-wise table of the reflected polynomial 0xEDB88320.
// (Evaluated when compiling: an index out of range would not compile.)
#[allow(clippy::indexing_slicing)]
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// One event stream message with string `headers` and `payload`, framed
/// as AWS frames it (both CRCs): for tests, mocks and replaying a
/// recorded stream. A header name over 255 bytes or a value over 65,535
/// is cut there.
pub fn encode_message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (name, value) in headers {
        let name = name
            .as_bytes()
            .get(..name.len().min(255))
            .unwrap_or_default();
        let value = value
            .as_bytes()
            .get(..value.len().min(65_535))
            .unwrap_or_default();
        h.push(name.len() as u8);
        h.extend_from_slice(name);
        h.push(7);
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value);
    }
    let total = (OVERHEAD + h.len() + payload.len()) as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let prelude_crc = crc32(0, &out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    let crc = crc32(0, &out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

#[cfg(test)]
#[path = "eventstream_tests.rs"]
mod tests;
