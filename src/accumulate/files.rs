//! A file the model made, as a part, and its event's frame kept without
//! the file's base64: the event's file
//! carries it, and a frame is kept as long as its events are (a generated
//! image's frame would otherwise hold it twice).

use serde_json::Value;

use crate::model::{Part, ProviderData, Raw};

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

/// `raw` with `data` replaced by a marker that says where it is; `raw` as
/// it is when `data` is not in it verbatim.
pub(crate) fn without_data(raw: &Raw, data: &str) -> Raw {
    let Some(at) = crate::policy::find(raw.as_bytes(), data.as_bytes(), 0) else {
        return raw.clone();
    };
    let marker = marker(data.len());
    let mut out = String::with_capacity(raw.len() - data.len() + marker.len());
    out.push_str(raw.get(..at).unwrap_or_default());
    out.push_str(&marker);
    out.push_str(raw.get(at + data.len()..).unwrap_or_default());
    Raw::from(out)
}

/// What stands for `len` bytes of base64 in a file event's frame.
pub(crate) fn marker(len: usize) -> String {
    format!("<skyl: {len} bytes of base64, in the event's file.data>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_is_replaced_once_where_it_is_and_nothing_else_changes() {
        let raw = Raw::from(r#"{"item":{"id":"ig_1","result":"QUJDRA==","x":"QUJD"}}"#);
        let out = without_data(&raw, "QUJDRA==");
        assert_eq!(
            &*out,
            r#"{"item":{"id":"ig_1","result":"<skyl: 8 bytes of base64, in the event's file.data>","x":"QUJD"}}"#
        );
        // Not in the frame verbatim, or empty: the frame as it is.
        assert_eq!(&*without_data(&raw, "WFla"), &*raw);
        assert_eq!(&*without_data(&raw, ""), &*raw);
        // A first byte that recurs before the match.
        let raw = Raw::from("aaab");
        assert_eq!(
            &*without_data(&raw, "ab"),
            "aa<skyl: 2 bytes of base64, in the event's file.data>"
        );
    }
}
