//! A file the model made, as a part, and the frames of events that carry
//! a file or a large text, kept without it: the event carries it, and a
//! frame is kept as long as its events are (a generated image's frame, or
//! a megabyte text delta's, would otherwise be held twice).

use serde_json::Value;

use super::delta::Delta;
use crate::json::read::{find_string, fnv, FNV_START};
use crate::model::{Part, ProviderData, Raw};

/// A text longer than this is left out of the frame its event keeps.
pub(crate) const LARGE_TEXT: usize = 64 * 1024;

/// A file the model made (or a partial one) as a file part, with what
/// replays it under its provider's name. (Its event's frame is the one
/// [`kept_frame`] made, without the base64.)
pub(crate) fn made(media_type: String, data: String, provider: &str, kept: Value) -> Part {
    let mut replay = ProviderData::new();
    replay.insert(provider.to_string(), kept);
    Part::File {
        url: None,
        data: Some(data),
        media_type,
        filename: None,
        provider_data: Some(replay),
    }
}

/// A string as a frame holds it: its length and [`fnv`] hash (all that is
/// kept of a file's base64 where its data leaves with its event:
/// [`super::Accumulator::finish_in_event`]).
pub(crate) type Made = (usize, u64);

/// What `text` is known by in a frame.
pub(crate) fn made_of(text: &str) -> Made {
    (text.len(), fnv(FNV_START, text.as_bytes()))
}

/// The frame `data`, whose deltas are `deltas`, as its events keep it:
/// each file's base64 and each text over [`LARGE_TEXT`] replaced by a
/// marker (made from `data` without copying it whole first); in a frame
/// over [`LARGE_TEXT`], also the base64 of a file the response already
/// has, `made` (the Responses API repeats its images in
/// `response.completed`).
pub(crate) fn kept_frame(data: &str, deltas: &[Delta], made: &[Made]) -> Raw {
    let carried = deltas.iter().filter_map(|d| match d {
        Delta::File { data, .. } | Delta::FilePartial { data, .. } => Some((made_of(data), FILE)),
        Delta::Text(t) | Delta::Reasoning(t) if t.len() > LARGE_TEXT => Some((made_of(t), TEXT)),
        _ => None,
    });
    let large = data.len() > LARGE_TEXT;
    let repeated = made.iter().filter(|(len, _)| large && *len > LARGE_TEXT);
    let mut kept: Option<String> = None;
    for (string, place) in carried.chain(repeated.map(|&m| (m, MADE))) {
        let frame = kept.as_deref().unwrap_or(data);
        if let Some(at) = replaced(frame, string, place) {
            kept = Some(at);
        }
    }
    Raw::from(kept.as_deref().unwrap_or(data))
}

/// `frame` (JSON) with its first string value that is `string` (see
/// [`made_of`]) replaced by a marker that says how long it is and `place`,
/// where it is; `None` if it has none (or `string` is empty).
fn replaced(frame: &str, string: Made, place: &str) -> Option<String> {
    let at = find_string(frame, string).filter(|_| string.0 > 0)?;
    let marker = marker(string.0, place);
    let mut out = String::with_capacity(frame.len() - at.len() + marker.len());
    out.push_str(frame.get(..at.start)?);
    out.push_str(&marker);
    out.push_str(frame.get(at.end..)?);
    Some(out)
}

/// What stands for a file's base64 in its event's frame, and for a large
/// text in its event's.
const FILE: &str = "of base64, in the event's file.data";
const TEXT: &str = "of text, in the event's text";
const MADE: &str = "of base64, a file of response.files";

/// What stands for `len` bytes of a file's base64 (`place`: [`FILE`], or
/// [`MADE`] for a file a later frame repeats) or of a text ([`TEXT`]) in
/// a frame.
fn marker(len: usize, place: &str) -> String {
    format!("<skyl: {len} bytes {place}>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_is_replaced_once_where_it_is_and_nothing_else_changes() {
        let without_data = |frame: &str, data: &str| {
            let file = Delta::File {
                media_type: "image/png".into(),
                data: data.into(),
                provider: "responses",
                kept: Value::Null,
            };
            kept_frame(frame, &[file], &[])
        };
        let raw = r#"{"item":{"id":"ig_1","result":"QUJDRA==","x":"QUJD"}}"#;
        assert_eq!(
            &*without_data(raw, "QUJDRA=="),
            r#"{"item":{"id":"ig_1","result":"<skyl: 8 bytes of base64, in the event's file.data>","x":"QUJD"}}"#
        );
        // Not in the frame, or empty: the frame as it is.
        assert_eq!(&*without_data(raw, "WFla"), raw);
        assert_eq!(&*without_data(raw, ""), raw);
        // A string the data is only a part of, or a key, is not it; an
        // escaped one is.
        let raw = r#"{"QUJD":"xQUJD","b":"QU\/J","c":"QUJD"}"#;
        assert_eq!(
            &*without_data(raw, "QUJD"),
            r#"{"QUJD":"xQUJD","b":"QU\/J","c":"<skyl: 4 bytes of base64, in the event's file.data>"}"#
        );
        assert_eq!(
            &*without_data(raw, "QU/J"),
            r#"{"QUJD":"xQUJD","b":"<skyl: 4 bytes of base64, in the event's file.data>","c":"QUJD"}"#
        );
    }

    /// A frame keeps a large text out, escaped as it may be, and a small
    /// one in; a file's base64 out whatever its size.
    #[test]
    fn a_kept_frame_leaves_out_what_its_event_carries() {
        let big = "a\"b\n".repeat(LARGE_TEXT / 4 + 1);
        let frame = format!(
            r#"{{"id":"c","delta":{{"content":{}}},"n":"x"}}"#,
            serde_json::Value::from(big.as_str())
        );
        let kept = kept_frame(&frame, &[Delta::Text(big.clone())], &[]);
        let marker = format!("<skyl: {} bytes of text, in the event's text>", big.len());
        let want = format!(r#"{{"id":"c","delta":{{"content":"{marker}"}},"n":"x"}}"#);
        assert!(*kept == *want, "{}", kept.get(..200).unwrap_or(&kept));
        let small = r#"{"delta":{"content":"Hi"}}"#;
        assert_eq!(&*kept_frame(small, &[Delta::Text("Hi".into())], &[]), small);
        let file = Delta::File {
            media_type: "image/png".into(),
            data: "QUJD".into(),
            provider: "gemini",
            kept: Value::Null,
        };
        assert_eq!(
            &*kept_frame(r#"{"data":"QUJD"}"#, &[file], &[]),
            r#"{"data":"<skyl: 4 bytes of base64, in the event's file.data>"}"#
        );
    }

    /// A large frame that repeats a file the response has (the Responses
    /// API's `response.completed`), escaped or not, keeps it out; a small
    /// one keeps it, and so does a frame with another string of its size.
    #[test]
    fn a_large_frame_leaves_out_a_file_it_repeats() {
        let b64 = "QU/J".repeat(LARGE_TEXT / 4 + 1);
        let escaped = b64.replace('/', "\\/");
        let frame = format!(r#"{{"output":[{{"result":"{escaped}"}}],"usage":{{}}}}"#);
        let want = format!(
            r#"{{"output":[{{"result":"<skyl: {} bytes of base64, a file of response.files>"}}],"usage":{{}}}}"#,
            b64.len()
        );
        assert!(*kept_frame(&frame, &[], &[made_of(&b64)]) == *want);
        let other = frame.replace("QU", "QV");
        assert!(*kept_frame(&other, &[], &[made_of(&b64)]) == *other);
        let small = r#"{"output":[{"result":"QUJD"}]}"#;
        assert_eq!(&*kept_frame(small, &[], &[made_of("QUJD")]), small);
    }
}
