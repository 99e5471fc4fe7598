//! A file the model made, as a part, and the frames of events that carry
//! a file or a large text, kept without it: the event carries it, and a
//! frame is kept as long as its events are (a generated image's frame, or
//! a megabyte text delta's, would otherwise be held twice).

use serde_json::Value;

use super::delta::Delta;
use crate::json::read::find_string;
use crate::model::{Part, ProviderData, Raw};

/// A text longer than this is left out of the frame its event keeps.
pub(crate) const LARGE_TEXT: usize = 64 * 1024;

/// A file the model made (or a partial one) as a file part, what replays
/// it under its provider's name, and its frame without the base64.
pub(crate) fn made(
    raw: &Raw,
    media_type: String,
    data: String,
    provider: &str,
    kept: Value,
) -> (Part, Raw) {
    let raw = without_data(raw, &data);
    let mut replay = ProviderData::new();
    replay.insert(provider.to_string(), kept);
    let file = Part::File {
        url: None,
        data: Some(data),
        media_type,
        filename: None,
        provider_data: Some(replay),
    };
    (file, raw)
}

/// The frame `data`, whose deltas are `deltas`, as its events keep it:
/// each file's base64 and each text over [`LARGE_TEXT`] replaced by a
/// marker (made from `data` without copying it whole first); in a frame
/// over [`LARGE_TEXT`], also the base64 of a file the response already
/// has, `made` (the Responses API repeats its images in
/// `response.completed`).
pub(crate) fn kept_frame(data: &str, deltas: &[Delta], made: &[Part]) -> Raw {
    let carried = deltas.iter().filter_map(|d| match d {
        Delta::File { data, .. } | Delta::FilePartial { data, .. } => Some((data.as_str(), FILE)),
        Delta::Text(t) | Delta::Reasoning(t) if t.len() > LARGE_TEXT => Some((t.as_str(), TEXT)),
        _ => None,
    });
    let repeated = made.iter().filter_map(|p| match p {
        Part::File { data: Some(d), .. } if data.len() > LARGE_TEXT => Some((d.as_str(), MADE)),
        _ => None,
    });
    let mut kept: Option<String> = None;
    for (text, place) in carried.chain(repeated) {
        let frame = kept.as_deref().unwrap_or(data);
        if let Some(at) = replaced(frame, text, place) {
            kept = Some(at);
        }
    }
    Raw::from(kept.as_deref().unwrap_or(data))
}

/// `raw` with `data` replaced by a marker that says where it is; `raw` as
/// it is when `data` is not one of its strings.
pub(crate) fn without_data(raw: &Raw, data: &str) -> Raw {
    match replaced(raw, data, FILE) {
        Some(out) => Raw::from(out),
        None => raw.clone(),
    }
}

/// What stands for a file's base64 in its event's frame, and for a large
/// text in its event's.
const FILE: &str = "of base64, in the event's file.data";
const TEXT: &str = "of text, in the event's text";
const MADE: &str = "of base64, a file of response.files";

/// `frame` (JSON) with its first string value that is `text` replaced by
/// a marker that says how long `text` is and `place` it is, or `None` if
/// it has none (or `text` is empty).
fn replaced(frame: &str, text: &str, place: &str) -> Option<String> {
    let at = find_string(frame, text).filter(|_| !text.is_empty())?;
    let marker = marker(text.len(), place);
    let mut out = String::with_capacity(frame.len() - at.len() + marker.len());
    out.push_str(frame.get(..at.start)?);
    out.push_str(&marker);
    out.push_str(frame.get(at.end..)?);
    Some(out)
}

/// What stands for `len` bytes of a file's base64 (`place`: [`FILE`]) or
/// of a text ([`TEXT`]) in a frame.
fn marker(len: usize, place: &str) -> String {
    format!("<skyl: {len} bytes {place}>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_is_replaced_once_placeit_is_and_nothing_else_changes() {
        let raw = Raw::from(r#"{"item":{"id":"ig_1","result":"QUJDRA==","x":"QUJD"}}"#);
        let out = without_data(&raw, "QUJDRA==");
        assert_eq!(
            &*out,
            r#"{"item":{"id":"ig_1","result":"<skyl: 8 bytes of base64, in the event's file.data>","x":"QUJD"}}"#
        );
        // Not in the frame verbatim, or empty: the frame as it is.
        assert_eq!(&*without_data(&raw, "WFla"), &*raw);
        assert_eq!(&*without_data(&raw, ""), &*raw);
        // A string the data is only a part of, or a key, is not it; an
        // escaped one is.
        let raw = Raw::from(r#"{"QUJD":"xQUJD","b":"QU\/J","c":"QUJD"}"#);
        assert_eq!(
            &*without_data(&raw, "QUJD"),
            r#"{"QUJD":"xQUJD","b":"QU\/J","c":"<skyl: 4 bytes of base64, in the event's file.data>"}"#
        );
        assert_eq!(
            &*without_data(&raw, "QU/J"),
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
    /// API's `response.completed`) keeps it out; a small one keeps it.
    #[test]
    fn a_large_frame_leaves_out_a_file_it_repeats() {
        let file = |b64: &str| {
            made(
                &Raw::from(""),
                "image/png".into(),
                b64.into(),
                "responses",
                Value::Null,
            )
            .0
        };
        let b64 = "QUJD".repeat(LARGE_TEXT / 4 + 1);
        let frame = format!(r#"{{"output":[{{"result":"{b64}"}}],"usage":{{}}}}"#);
        let want = format!(
            r#"{{"output":[{{"result":"<skyl: {} bytes of base64, a file of response.files>"}}],"usage":{{}}}}"#,
            b64.len()
        );
        assert!(*kept_frame(&frame, &[], &[file(&b64)]) == *want);
        let small = r#"{"output":[{"result":"QUJD"}]}"#;
        assert_eq!(&*kept_frame(small, &[], &[file("QUJD")]), small);
    }
}
