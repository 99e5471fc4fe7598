//! A byte-level decoder for server-sent events.
//!
//! Implements the parsing rules of the WHATWG HTML standard, section 9.2
//! "Server-sent events", <https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>:
//!
//! ```text
//! stream        = [ bom ] *event
//! event         = *( comment / field ) end-of-line
//! comment       = colon *any-char end-of-line
//! field         = 1*name-char [ colon [ space ] *any-char ] end-of-line
//! end-of-line   = ( cr lf / cr / lf )
//! ```
//!
//! - Lines end in LF, CR or CRLF; a CR that ends one chunk and the LF that
//!   starts the next are one line end.
//! - A leading byte-order mark is dropped. Invalid UTF-8 becomes U+FFFD, as
//!   the standard's UTF-8 decode does; a character split across chunks is
//!   decoded whole because lines are split on bytes first.
//! - `:` lines are comments (keep-alives such as `: OPENROUTER PROCESSING`).
//! - `data` lines of one event are joined with `\n`; `event` is kept;
//!   `id` and `retry`, which serve reconnection, are ignored.
//! - An empty line dispatches the event; an event without data is dropped.
//!
//! One deliberate extension: at the end of the body the standard discards an
//! event that no blank line closed. [`SseParser::finish`] instead dispatches
//! it when its lines were complete, because real servers end with
//! `data: [DONE]\n` and nothing after. A last line cut off without any line
//! end is still dropped.
//!
//! The decoder holds at most [`SseParser::max_event_bytes`] of one event
//! (the pending line plus the data so far): a larger event is an
//! [`Error::EventTooLarge`], not unbounded memory.

use std::borrow::Cow;

use crate::error::Error;

/// The default limit for one event: 32 MiB, which lets a 4K image's base64
/// through (Gemini's `inlineData`, a Responses image).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 32 * 1024 * 1024;

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type, `message`.
    pub event: Option<String>,
    /// The data lines joined with `\n`.
    pub data: String,
}

/// The incremental decoder: `feed` bytes as they arrive, `finish` at the end.
#[derive(Debug)]
pub struct SseParser {
    /// Bytes of the line not yet ended.
    line: Vec<u8>,
    /// The rest of a line longer than [`MAX_SPARE`], as it came: joined
    /// once, at the line's end, into one buffer of its size (a buffer grown
    /// as it came would leave about its size unused, and as much again of
    /// the blocks it outgrew, in wasm memory that is never returned).
    more: Vec<Vec<u8>>,
    /// The bytes in `more`.
    more_len: usize,
    /// The last chunk ended in CR: an LF at the start of the next is part of
    /// that line end.
    after_cr: bool,
    /// No line has been processed yet (a BOM may start the first one).
    first_line: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    max_event_bytes: usize,
    failed: bool,
    /// Buffers handed back by the consumer of the events ([`Self::recycle`]),
    /// for the next event's data and name: no allocation per event.
    spare_data: Option<String>,
    spare_name: Option<String>,
}

/// Larger buffers are not kept for reuse (one huge event should not hold
/// its memory for the rest of the stream).
const MAX_SPARE: usize = 64 * 1024;

/// The UTF-8 byte order mark, which may begin a body.
const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A decoder with the default event size limit.
    pub fn new() -> Self {
        Self::with_max_event_bytes(DEFAULT_MAX_EVENT_BYTES)
    }

    /// A decoder that fails with [`Error::EventTooLarge`] once one event holds
    /// more than `limit` bytes.
    pub fn with_max_event_bytes(limit: usize) -> Self {
        SseParser {
            line: Vec::new(),
            more: Vec::new(),
            more_len: 0,
            after_cr: false,
            first_line: true,
            event: None,
            data: String::new(),
            has_data: false,
            max_event_bytes: limit,
            failed: false,
            spare_data: None,
            spare_name: None,
        }
    }

    /// Takes back an event's strings once they are no longer needed, to
    /// hold the next events' (a stream decoder does, so that decoding
    /// allocates nothing per event for them).
    pub fn recycle(&mut self, data: Option<String>, name: Option<String>) {
        let keep = |s: Option<String>| s.filter(|s| s.capacity() <= MAX_SPARE);
        if let Some(data) = keep(data) {
            self.spare_data = Some(data);
        }
        if let Some(name) = keep(name) {
            self.spare_name = Some(name);
        }
    }

    /// The size limit for one event.
    pub fn max_event_bytes(&self) -> usize {
        self.max_event_bytes
    }

    /// Decodes `chunk`, appending every event it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), Error> {
        if self.failed {
            return Err(self.too_large());
        }
        let mut rest = chunk;
        // (An empty chunk says nothing about what follows a CR.)
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some((b'\n', tail)) = rest.split_first() {
                rest = tail;
            }
        }
        while let Some(pos) = memchr::memchr2(b'\n', b'\r', rest) {
            let (line, tail) = rest.split_at(pos);
            let mut tail = tail.get(1..).unwrap_or_default();
            if rest.get(pos) == Some(&b'\r') {
                match tail.split_first() {
                    Some((b'\n', t)) => tail = t,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            if self.pending_len() == 0 {
                self.check_size(line.len())?;
                self.process_line(line, out);
            } else if self.more.is_empty() {
                self.check_size(self.line.len() + line.len())?;
                let mut whole = std::mem::take(&mut self.line);
                whole.extend_from_slice(line);
                self.process_gathered(whole, out);
            } else {
                self.check_size(self.pending_len() + line.len())?;
                let whole = self.joined(line);
                self.process_gathered(whole, out);
            }
            rest = tail;
        }
        if !rest.is_empty() {
            self.check_size(self.pending_len() + rest.len())?;
            if self.more.is_empty() && self.line.len() + rest.len() <= MAX_SPARE {
                self.line.extend_from_slice(rest);
            } else {
                self.more.push(rest.to_vec());
                self.more_len += rest.len();
            }
        }
        Ok(())
    }

    /// Ends the body: dispatches a last event whose lines were complete (see
    /// the module docs) and drops a last line that no line end closed.
    /// Returns whether such a cut-off line was dropped.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<bool, Error> {
        if self.failed {
            return Err(self.too_large());
        }
        let dropped = self.pending_len() > 0;
        self.line.clear();
        self.more = Vec::new();
        self.more_len = 0;
        self.dispatch(out);
        Ok(dropped)
    }

    fn too_large(&self) -> Error {
        Error::event_too_large(self.max_event_bytes)
    }

    fn check_size(&mut self, line_len: usize) -> Result<(), Error> {
        if self.data.len().saturating_add(line_len) > self.max_event_bytes {
            self.failed = true;
            self.line = Vec::new();
            self.more = Vec::new();
            self.more_len = 0;
            self.data = String::new();
            return Err(self.too_large());
        }
        Ok(())
    }

    /// A line that came in pieces, gathered in `whole`. The buffer is kept
    /// for the next line only if it is small, so that one huge event does
    /// not hold its memory for the rest of the stream (in wasm, memory once
    /// grown is never returned, and what is freed can be reused).
    /// The bytes of the line not yet ended.
    fn pending_len(&self) -> usize {
        self.line.len() + self.more_len
    }

    /// The long line ended by `last`, in one buffer of its size (and room
    /// for the `\n` its data takes). `line`'s buffer is freed with the
    /// pieces: it sits just below them, so what the line leaves is one
    /// block of its size, for the copies its event makes next.
    fn joined(&mut self, last: &[u8]) -> Vec<u8> {
        let mut whole = Vec::with_capacity(self.pending_len() + last.len() + 1);
        whole.extend_from_slice(&std::mem::take(&mut self.line));
        for piece in std::mem::take(&mut self.more) {
            whole.extend_from_slice(&piece);
        }
        self.more_len = 0;
        whole.extend_from_slice(last);
        whole
    }

    fn process_gathered(&mut self, mut whole: Vec<u8>, out: &mut Vec<SseEvent>) {
        // (The body's first line, too, after its BOM.)
        let bom = self.bom(&whole);
        // A large `data:` line that begins its event's data becomes that
        // data: its bytes are moved, not copied.
        let big = whole.len() > MAX_SPARE && self.data.is_empty();
        if big && whole.get(bom..bom + 5) == Some(b"data:") {
            let start = bom
                + if whole.get(bom + 5) == Some(&b' ') {
                    6
                } else {
                    5
                };
            whole.copy_within(start.., 0);
            whole.truncate(whole.len().saturating_sub(start));
            whole.push(b'\n');
            self.data = match String::from_utf8(whole) {
                Ok(text) => text,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            };
            self.has_data = true;
            return;
        }
        self.process_line(whole.get(bom..).unwrap_or_default(), out);
        if whole.capacity() <= MAX_SPARE {
            whole.clear();
            self.line = whole; // keep the allocation
        }
    }

    /// The length of the BOM `line` begins with if it is the body's first
    /// line (only there is a BOM dropped), else 0; the first line is now
    /// behind.
    fn bom(&mut self, line: &[u8]) -> usize {
        match std::mem::take(&mut self.first_line) && line.starts_with(BOM) {
            true => BOM.len(),
            false => 0,
        }
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        let line = line.get(self.bom(line)..).unwrap_or_default();
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.first() == Some(&b':') {
            return;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let (name, value) = line.split_at(colon);
                let value = value.get(1..).unwrap_or_default();
                (name, value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                // One allocation for the usual one-line event (the line
                // and its '\n').
                self.data.reserve(value.len() + 1);
                self.data.push_str(&utf8(value));
                self.data.push('\n');
                self.has_data = true;
            }
            b"event" => {
                let mut name = self.spare_name.take().unwrap_or_default();
                name.clear();
                name.push_str(&utf8(value));
                self.event = Some(name);
            }
            // `id` and `retry` serve reconnection, which no chat API offers.
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            self.data.clear();
            return;
        }
        self.has_data = false;
        if self.data.ends_with('\n') {
            self.data.pop();
        }
        let mut next = self.spare_data.take().unwrap_or_default();
        next.clear();
        out.push(SseEvent {
            event,
            data: std::mem::replace(&mut self.data, next),
        });
    }
}

/// `value` as text, invalid UTF-8 replaced (U+FFFD), as the SSE standard
/// decodes (and as every body is read). `str::from_utf8` first: for valid
/// text (nearly always) it is much faster than `String::from_utf8_lossy`'s
/// own scan, above all in wasm (about 15 times on a 2 MiB body, natively).
pub(crate) fn utf8(value: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(value) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(value),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn decode_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut out).unwrap();
        }
        d.finish(&mut out).unwrap();
        out
    }

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    /// A large data line that came in pieces becomes the event's data
    /// without a copy: the same data as any other line, with or without
    /// the space, with a second data line, with bytes that are not UTF-8,
    /// after an earlier event.
    #[test]
    fn a_large_gathered_line_reads_as_any_other() {
        let big = "é".repeat(50_000);
        for (text, want) in [
            (format!("data: {big}\n\n"), big.clone()),
            (format!("data:{big}\n\n"), big.clone()),
            (
                format!("event: x\ndata: {big}\ndata: two\n\n"),
                format!("{big}\ntwo"),
            ),
            (format!("data: a\n\ndata: {big}\n\n"), big.clone()),
            // The body's first line, with or without a BOM before it.
            (format!("\u{FEFF}data: {big}\n\n"), big.clone()),
            (format!("\u{FEFF}event: x\ndata: {big}\n\n"), big.clone()),
        ] {
            let bytes = text.as_bytes();
            for size in [4096, 100_000, bytes.len()] {
                let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
                let got = decode_chunks(&chunks);
                assert_eq!(got.last().unwrap().data, want, "{size}");
            }
        }
        let mut bytes = b"data: ".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 70_000));
        bytes.extend(b"\xFF\n\n");
        let got = decode_chunks(&bytes.chunks(4096).collect::<Vec<_>>());
        assert!(got[0].data.ends_with("x\u{FFFD}"));
        assert_eq!(got[0].data.len(), 70_000 + 3);
    }

    /// Recycled strings hold the next events, cleared: nothing of the old
    /// text shows, and a huge buffer is not kept.
    #[test]
    fn recycled_buffers_are_reused_cleared() {
        let mut d = SseParser::new();
        let mut out = Vec::new();
        d.feed(
            b"event: a_long_event_name\ndata: first event data\n\n",
            &mut out,
        )
        .unwrap();
        let first = out.pop().unwrap();
        let (data_cap, name_cap) = (
            first.data.capacity(),
            first.event.as_ref().unwrap().capacity(),
        );
        d.recycle(Some(first.data), first.event);
        d.feed(b"event: b\ndata: x\n\n", &mut out).unwrap();
        let second = out.pop().unwrap();
        assert_eq!(
            (second.event.as_deref(), second.data.as_str()),
            (Some("b"), "x")
        );
        // The event name was written into the recycled name; the recycled
        // data buffer now waits for the next event's data.
        assert!(second.event.unwrap().capacity() >= name_cap);
        assert!(d.data.capacity() >= data_cap && d.data.is_empty());
        d.recycle(Some(String::with_capacity(MAX_SPARE + 1)), None);
        assert!(d.spare_data.is_none());
    }

    #[test]
    fn lf_cr_and_crlf_all_end_lines() {
        let ev = decode_chunks(&[b"data: a\n\ndata: b\r\rdata: c\r\n\r\n"]);
        assert_eq!(data(&ev), ["a", "b", "c"]);
    }

    #[test]
    fn a_crlf_split_across_chunks_is_one_line_end() {
        // If the LF were a second line end it would dispatch "x" early and
        // then "y" alone; as one line end both lines belong to one event.
        let ev = decode_chunks(&[b"data: x\r", b"\ndata: y\r\n\r\n"]);
        assert_eq!(data(&ev), ["x\ny"]);
        // Empty chunks between the CR and the LF change nothing.
        let ev = decode_chunks(&[b"data: x\r", b"", b"", b"\ndata: y\r\n\r\n"]);
        assert_eq!(data(&ev), ["x\ny"]);
    }

    #[test]
    fn a_cr_ending_a_chunk_followed_by_a_non_lf_is_a_line_end() {
        let ev = decode_chunks(&[b"data: x\r", b"\r"]);
        assert_eq!(data(&ev), ["x"]);
    }

    #[test]
    fn a_leading_bom_is_dropped_even_when_split() {
        let ev = decode_chunks(&[b"\xEF\xBB", b"\xBFdata: a\n\n"]);
        assert_eq!(data(&ev), ["a"]);
        // Only at the start: a BOM later is data.
        let ev = decode_chunks(&[b"data: a\n\n\xEF\xBB\xBFdata: b\n\n"]);
        assert_eq!(ev.len(), 1);
    }

    #[test]
    fn comments_are_ignored() {
        let mut d = SseParser::new();
        let mut out = Vec::new();
        d.feed(b": OPENROUTER PROCESSING\n\n: ping\ndata: a\n\n", &mut out)
            .unwrap();
        assert_eq!(data(&out), ["a"]);
    }

    #[test]
    fn multi_line_data_joins_with_newlines() {
        let ev = decode_chunks(&[b"data: a\ndata:b\ndata\ndata:  c\n\n"]);
        assert_eq!(data(&ev), ["a\nb\n\n c"]);
    }

    #[test]
    fn the_event_field_is_kept_and_id_and_retry_are_ignored() {
        let ev = decode_chunks(&[b"event: ping\nid: 7\nretry: 300\ndata: {}\n\ndata: x\n\n"]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].event.as_deref(), Some("ping"));
        assert_eq!(ev[0].data, "{}");
        // The event type resets.
        assert_eq!(ev[1].event, None);
        assert_eq!(ev[1].data, "x");
    }

    #[test]
    fn an_event_without_data_is_not_dispatched() {
        let ev = decode_chunks(&[b"event: x\n\nid: 1\n\n"]);
        assert!(ev.is_empty());
    }

    #[test]
    fn utf8_split_across_chunks_decodes_whole() {
        let text = "data: héllo 🌍\n\n".as_bytes();
        for cut in 0..text.len() {
            let ev = decode_chunks(&[&text[..cut], &text[cut..]]);
            assert_eq!(data(&ev), ["héllo 🌍"], "cut at {cut}");
        }
    }

    #[test]
    fn invalid_utf8_becomes_the_replacement_character() {
        let ev = decode_chunks(&[b"data: a\xFFb\n\n"]);
        assert_eq!(data(&ev), ["a\u{FFFD}b"]);
    }

    #[test]
    fn a_last_event_without_a_blank_line_is_dispatched_at_finish() {
        let ev = decode_chunks(&[b"data: {}\n\ndata: [DONE]\n"]);
        assert_eq!(data(&ev), ["{}", "[DONE]"]);
    }

    #[test]
    fn a_last_line_without_any_line_end_is_dropped_at_finish() {
        let mut d = SseParser::new();
        let mut out = Vec::new();
        d.feed(b"data: {\"a\":1}\n\ndata: {\"tru", &mut out)
            .unwrap();
        assert!(d.finish(&mut out).unwrap());
        assert_eq!(data(&out), ["{\"a\":1}"]);
    }

    #[test]
    fn an_event_over_the_limit_is_an_error_not_unbounded_memory() {
        let mut d = SseParser::with_max_event_bytes(16);
        let mut out = Vec::new();
        d.feed(b"data: 0123456789\n", &mut out).unwrap();
        let err = d.feed(b"data: 0123456789\n", &mut out).unwrap_err();
        assert_eq!(err, Error::event_too_large(16));
        // A long line without a line end hits the limit too.
        let mut d = SseParser::with_max_event_bytes(16);
        assert!(d.feed(&[b'x'; 10], &mut out).is_ok());
        assert!(d.feed(&[b'x'; 10], &mut out).is_err());
        // The decoder stays failed.
        assert!(d.feed(b"\n\n", &mut out).is_err());
        assert!(d.finish(&mut out).is_err());
    }

    #[test]
    fn the_limit_is_per_event() {
        let mut d = SseParser::with_max_event_bytes(16);
        let mut out = Vec::new();
        for _ in 0..100 {
            d.feed(b"data: 0123456789\n\n", &mut out).unwrap();
        }
        assert_eq!(out.len(), 100);
    }

    /// A data line longer than the spare size, fed in pieces, is dispatched
    /// whole; afterwards the parser holds no large buffer (wasm memory never
    /// shrinks, so a kept buffer would be held for the rest of the stream).
    #[test]
    fn a_long_line_is_dispatched_whole_and_its_buffer_not_kept() {
        let long = "é".repeat(MAX_SPARE);
        let body = format!("data: {long}\n\ndata: after\n\n");
        let mut d = SseParser::new();
        let mut out = Vec::new();
        for piece in body.as_bytes().chunks(4096) {
            d.feed(piece, &mut out).unwrap();
        }
        d.finish(&mut out).unwrap();
        assert_eq!(data(&out), [long.as_str(), "after"]);
        assert!(d.line.capacity() <= MAX_SPARE, "{}", d.line.capacity());
        assert!(d.data.capacity() <= MAX_SPARE, "{}", d.data.capacity());
    }

    /// Other long lines that come in pieces decode as short ones do: joined
    /// data lines, invalid UTF-8, another field, a comment.
    #[test]
    fn other_long_lines_decode_as_short_ones_do() {
        let long = "x".repeat(MAX_SPARE + 1);
        let gathered = |body: &[u8]| {
            let mut d = SseParser::new();
            let mut out = Vec::new();
            for piece in body.chunks(1000) {
                d.feed(piece, &mut out).unwrap();
            }
            d.finish(&mut out).unwrap();
            out
        };
        let ev = gathered(format!("data: a\ndata: {long}\n\n").as_bytes());
        assert_eq!(data(&ev), [format!("a\n{long}")]);
        let ev = gathered(format!("data: {long}\ndata: b\n\n").as_bytes());
        assert_eq!(data(&ev), [format!("{long}\nb")]);
        let mut invalid = format!("data: {long}").into_bytes();
        invalid.extend_from_slice(b"\xFF\n\n");
        assert_eq!(data(&gathered(&invalid)), [format!("{long}\u{FFFD}")]);
        let ev = gathered(format!("event: {long}\ndata: y\n\n").as_bytes());
        assert_eq!(
            (ev[0].event.as_deref(), ev[0].data.as_str()),
            (Some(&*long), "y")
        );
        let ev = gathered(format!(": {long}\ndata: z\n\n").as_bytes());
        assert_eq!(data(&ev), ["z"]);
    }

    #[test]
    fn a_field_without_a_colon_has_an_empty_value() {
        let ev = decode_chunks(&[b"data\n\n"]);
        assert_eq!(data(&ev), [""]);
    }
}
