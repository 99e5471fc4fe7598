//! Tool-call arguments checked against the tool's JSON Schema, before a
//! tool runs: what a tool runner (issue 26) sends back as an error result,
//! which the model sees, instead of running the tool on arguments it never
//! declared.
//!
//! It covers the keywords the providers accept in their strict modes
//! (OpenAI structured outputs, Anthropic strict tools, Gemini's schema
//! subset): `type` (a name or a list of names), `properties`, `required`,
//! `additionalProperties` (`false` or a schema), `items`, `enum`, `const`,
//! `anyOf`, `oneOf`, `allOf`, local `$ref` (`#`, `#/$defs/...`,
//! `#/definitions/...`, any JSON Pointer into the schema), `minLength` and
//! `maxLength` (in characters), `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`, `minItems`, `maxItems`, and the boolean schemas
//! `true` and `false`.
//!
//! It ignores, as passing: `format`, `pattern` and `patternProperties` (no
//! regular expressions are linked), `multipleOf`, `uniqueItems`,
//! `prefixItems`, `contains`, `dependentRequired`, `if`/`then`/`else`,
//! `not`, `minProperties`/`maxProperties`, a `$ref` to another document,
//! and every annotation (`description`, `title`, `default`, ...). Numbers
//! compare by value (`1` equals `1.0`).
//!
//! Reference: JSON Schema 2020-12, Validation
//! (<https://json-schema.org/draft/2020-12/json-schema-validation>).

use serde_json::{Map, Value};

use crate::json::json_text;
use crate::json::write::quoted;

/// `items` joined by `sep`. (A loop: `join` and float or `Value` display
/// would link kilobytes of formatting into the wasm for error messages.)
pub(crate) fn joined<'a>(items: impl IntoIterator<Item = &'a str>, sep: &str) -> String {
    let mut out = String::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(item);
    }
    out
}

/// How deep schemas may nest, `$ref`s followed included: a deeper one (a
/// `$ref` cycle, say) is reported, never a stack overflow.
const MAX_DEPTH: usize = 64;

/// Why arguments do not satisfy a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// The value's JSON path in the arguments: `$`, `$.city`,
    /// `$.stops[2].name`, `$["a b"]`.
    pub path: String,
    /// The keyword it breaks: `type`, `required`, `enum`, `$ref`, ...
    pub rule: &'static str,
    /// What is wrong, for the model to read.
    pub message: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.path, self.message, self.rule)
    }
}

impl std::error::Error for SchemaError {}

/// Checks tool-call `arguments` against the tool's parameters `schema`:
/// the first value that breaks a rule, in document order.
pub fn check_arguments(schema: &Value, arguments: &Value) -> Result<(), SchemaError> {
    Checker { root: schema }.check(schema, arguments, &mut Path(Vec::new()), 0)
}

/// A step of a JSON path: an object key or an array index.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The path to the value being checked.
struct Path<'a>(Vec<Step<'a>>);

impl Path<'_> {
    fn text(&self) -> String {
        let mut out = String::from("$");
        for step in &self.0 {
            match step {
                Step::Key(k) if is_identifier(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Step::Key(k) => {
                    out.push('[');
                    out.push_str(&quoted(k));
                    out.push(']');
                }
                Step::Index(i) => {
                    out.push('[');
                    out.push_str(itoa::Buffer::new().format(*i as u64));
                    out.push(']');
                }
            }
        }
        out
    }
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

struct Checker<'s> {
    root: &'s Value,
}

impl<'s> Checker<'s> {
    fn check<'v>(
        &self,
        schema: &'s Value,
        value: &'v Value,
        path: &mut Path<'v>,
        depth: usize,
    ) -> Result<(), SchemaError> {
        let fail = |path: &Path<'_>, rule, message: String| {
            Err(SchemaError {
                path: path.text(),
                rule,
                message,
            })
        };
        if depth > MAX_DEPTH {
            return fail(
                path,
                "$ref",
                "the schema nests too deep (a $ref cycle?)".into(),
            );
        }
        let s = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => return fail(path, "false", "no value is allowed here".into()),
            Value::Object(s) => s,
            // Not a schema: nothing to check against.
            _ => return Ok(()),
        };
        if let Some(reference) = s.get("$ref").and_then(Value::as_str) {
            match self.resolve(reference) {
                Some(target) => self.check(target, value, path, depth + 1)?,
                None if reference.starts_with('#') => {
                    return fail(
                        path,
                        "$ref",
                        format!("the schema's {} points at nothing", quoted(reference)),
                    )
                }
                None => {} // another document: ignored
            }
        }
        if let Some(types) = s.get("type") {
            let ok = match types {
                Value::String(t) => has_type(value, t),
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|t| has_type(value, t)),
                _ => true,
            };
            if !ok {
                let want = match types {
                    Value::Array(ts) => joined(ts.iter().filter_map(Value::as_str), " or "),
                    other => other.as_str().unwrap_or("").to_string(),
                };
                return fail(
                    path,
                    "type",
                    format!("must be {want}, not {}", type_of(value)),
                );
            }
        }
        if let Some(c) = s.get("const") {
            if !same(c, value) {
                return fail(path, "const", format!("must be {}", json_text(c)));
            }
        }
        if let Some(Value::Array(options)) = s.get("enum") {
            if !options.iter().any(|o| same(o, value)) {
                let list: Vec<String> = options.iter().map(json_text).collect();
                let list = joined(list.iter().map(String::as_str), ", ");
                return fail(path, "enum", format!("must be one of {list}"));
            }
        }
        self.combinators(s, value, path, depth)?;
        match value {
            Value::Object(o) => self.object(s, o, path, depth),
            Value::Array(items) => self.array(s, items, path, depth),
            Value::String(text) => {
                let n = text.chars().count();
                bound(s, "minLength", n, true, path, "characters")?;
                bound(s, "maxLength", n, false, path, "characters")
            }
            Value::Number(_) => number(s, value.as_f64().unwrap_or(0.0), path),
            _ => Ok(()),
        }
    }

    /// `allOf`, `anyOf`, `oneOf`.
    fn combinators<'v>(
        &self,
        s: &'s Map<String, Value>,
        value: &'v Value,
        path: &mut Path<'v>,
        depth: usize,
    ) -> Result<(), SchemaError> {
        if let Some(Value::Array(all)) = s.get("allOf") {
            for sub in all {
                self.check(sub, value, path, depth + 1)?;
            }
        }
        for (rule, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            let Some(Value::Array(options)) = s.get(rule) else {
                continue;
            };
            let mut first = None;
            let mut passed = 0;
            for sub in options {
                match self.check(sub, value, path, depth + 1) {
                    Ok(()) => passed += 1,
                    Err(e) => {
                        first.get_or_insert(e);
                    }
                }
            }
            let message = match (passed, first) {
                (0, Some(e)) => format!(
                    "matches none of the {} schemas of {rule} (the first: {e})",
                    options.len()
                ),
                (0, None) => format!("matches none of the schemas of {rule}"),
                (1, _) => continue,
                (_, _) if exactly_one => "matches more than one of the schemas of oneOf".into(),
                _ => continue,
            };
            return Err(SchemaError {
                path: path.text(),
                rule,
                message,
            });
        }
        Ok(())
    }

    fn object<'v>(
        &self,
        s: &'s Map<String, Value>,
        o: &'v Map<String, Value>,
        path: &mut Path<'v>,
        depth: usize,
    ) -> Result<(), SchemaError> {
        let properties = s.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = s.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !o.contains_key(name) {
                    return Err(SchemaError {
                        path: path.text(),
                        rule: "required",
                        message: format!("needs the property {}", quoted(name)),
                    });
                }
            }
        }
        let extra = s.get("additionalProperties");
        for (key, v) in o {
            let sub = match properties.and_then(|p| p.get(key)) {
                Some(sub) => sub,
                None => match extra {
                    Some(Value::Bool(false)) => {
                        let known = properties
                            .map(|p| joined(p.keys().map(String::as_str), ", "))
                            .unwrap_or_default();
                        return Err(SchemaError {
                            path: path.text(),
                            rule: "additionalProperties",
                            message: format!(
                                "has the property {}, which is not allowed (allowed: {})",
                                quoted(key),
                                known
                            ),
                        });
                    }
                    Some(sub) => sub,
                    None => continue,
                },
            };
            path.0.push(Step::Key(key));
            let checked = self.check(sub, v, path, depth + 1);
            path.0.pop();
            checked?;
        }
        Ok(())
    }

    fn array<'v>(
        &self,
        s: &'s Map<String, Value>,
        items: &'v [Value],
        path: &mut Path<'v>,
        depth: usize,
    ) -> Result<(), SchemaError> {
        bound(s, "minItems", items.len(), true, path, "items")?;
        bound(s, "maxItems", items.len(), false, path, "items")?;
        if let Some(sub) = s.get("items").filter(|i| i.is_object() || i.is_boolean()) {
            for (i, item) in items.iter().enumerate() {
                path.0.push(Step::Index(i));
                let checked = self.check(sub, item, path, depth + 1);
                path.0.pop();
                checked?;
            }
        }
        Ok(())
    }

    /// The schema a local `$ref` points at: `#`, or a JSON Pointer into
    /// the root schema (`#/$defs/address`, with `~0` and `~1` escapes).
    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(self.root);
        }
        let mut at = self.root;
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = unescape(token);
            at = match at {
                Value::Object(o) => o.get(&token)?,
                Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(at)
    }
}

/// A number keyword, its test (value, limit) and how its message says it.
type NumberRule = (&'static str, fn(f64, f64) -> bool, &'static str);

/// A JSON Pointer token with its `~1` (`/`) and `~0` (`~`) escapes undone.
fn unescape(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('~', Some('1')) => {
                out.push('/');
                chars.next();
            }
            ('~', Some('0')) => {
                out.push('~');
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.
fn number(s: &Map<String, Value>, x: f64, path: &Path<'_>) -> Result<(), SchemaError> {
    let checks: [NumberRule; 4] = [
        ("minimum", |x, m| x >= m, "at least"),
        ("maximum", |x, m| x <= m, "at most"),
        ("exclusiveMinimum", |x, m| x > m, "more than"),
        ("exclusiveMaximum", |x, m| x < m, "less than"),
    ];
    for (rule, ok, words) in checks {
        if let Some(limit) = s.get(rule).and_then(Value::as_f64) {
            if !ok(x, limit) {
                return Err(SchemaError {
                    path: path.text(),
                    rule,
                    message: format!(
                        "must be {words} {}",
                        s.get(rule).map_or_else(String::new, json_text)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A count limit (`minLength`, `maxItems`, ...) on `n` of `unit`: `min`
/// says which side. (A limit that is not a whole number is read as its
/// whole part, rounded towards the safe side.)
fn bound(
    s: &Map<String, Value>,
    rule: &'static str,
    n: usize,
    min: bool,
    path: &Path<'_>,
    unit: &str,
) -> Result<(), SchemaError> {
    let Some(limit) = s.get(rule).and_then(Value::as_f64) else {
        return Ok(());
    };
    let n = n as u64;
    let limit = if min { limit.ceil() } else { limit.floor() }.max(0.0) as u64;
    if (min && n >= limit) || (!min && n <= limit) {
        return Ok(());
    }
    let words = if min { "at least" } else { "at most" };
    let mut message = format!("must have {words} ");
    message.push_str(itoa::Buffer::new().format(limit));
    message.push(' ');
    message.push_str(unit);
    message.push_str(", not ");
    message.push_str(itoa::Buffer::new().format(n));
    Err(SchemaError {
        path: path.text(),
        rule,
        message,
    })
}

/// Whether `value` is of the JSON Schema type `name`.
fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "integer" => value.as_f64().is_some_and(|x| x.fract() == 0.0),
        "number" => value.is_number(),
        other => type_of(value) == other,
    }
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// JSON equality, numbers by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => a.as_f64() == b.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The first broken rule of `args` under `schema`: (path, rule).
    fn broken(schema: &Value, args: Value) -> Option<(String, &'static str)> {
        check_arguments(schema, &args)
            .err()
            .map(|e| (e.path, e.rule))
    }

    fn at(path: &str, rule: &'static str) -> Option<(String, &'static str)> {
        Some((path.to_string(), rule))
    }

    #[test]
    fn objects_properties_required_and_additional_properties() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "units": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7}
            },
            "required": ["city"],
            "additionalProperties": false
        });
        assert_eq!(broken(&schema, json!({"city": "Paris"})), None);
        assert_eq!(
            broken(&schema, json!({"city": "Paris", "units": "c", "days": 3.0})),
            None
        );
        assert_eq!(broken(&schema, json!({})), at("$", "required"));
        assert_eq!(broken(&schema, json!([])), at("$", "type"));
        assert_eq!(
            broken(&schema, json!({"city": ""})),
            at("$.city", "minLength")
        );
        assert_eq!(broken(&schema, json!({"city": 3})), at("$.city", "type"));
        assert_eq!(
            broken(&schema, json!({"city": "P", "units": "k"})),
            at("$.units", "enum")
        );
        assert_eq!(
            broken(&schema, json!({"city": "P", "days": 1.5})),
            at("$.days", "type")
        );
        assert_eq!(
            broken(&schema, json!({"city": "P", "days": 8})),
            at("$.days", "maximum")
        );
        assert_eq!(
            broken(&schema, json!({"city": "P", "days": 0})),
            at("$.days", "minimum")
        );
        let e = check_arguments(&schema, &json!({"city": "P", "zip": "75001"})).unwrap_err();
        assert_eq!((e.path.as_str(), e.rule), ("$", "additionalProperties"));
        assert_eq!(
            e.message,
            "has the property \"zip\", which is not allowed (allowed: city, units, days)"
        );
        let e = check_arguments(&schema, &json!({"city": 3})).unwrap_err();
        assert_eq!(e.to_string(), "$.city: must be string, not number (type)");
    }

    #[test]
    fn arrays_items_and_their_paths() {
        let schema = json!({
            "type": "object",
            "properties": {
                "stops": {
                    "type": "array", "minItems": 1, "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "a b": {"type": "null"}},
                        "required": ["name"],
                        "additionalProperties": {"type": "number"}
                    }
                }
            }
        });
        assert_eq!(
            broken(&schema, json!({"stops": [{"name": "x", "eta": 5}]})),
            None
        );
        assert_eq!(
            broken(&schema, json!({"stops": []})),
            at("$.stops", "minItems")
        );
        let four = json!({"stops": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]});
        assert_eq!(broken(&schema, four), at("$.stops", "maxItems"));
        assert_eq!(
            broken(&schema, json!({"stops": [{"name": "a"}, {"nam": "b"}]})),
            at("$.stops[1]", "required")
        );
        assert_eq!(
            broken(&schema, json!({"stops": [{"name": "a", "eta": "soon"}]})),
            at("$.stops[0].eta", "type")
        );
        assert_eq!(
            broken(&schema, json!({"stops": [{"name": "a", "a b": 1}]})),
            at("$.stops[0][\"a b\"]", "type")
        );
    }

    #[test]
    fn type_lists_const_and_numbers_by_value() {
        let schema = json!({"type": ["string", "null"]});
        assert_eq!(broken(&schema, json!(null)), None);
        assert_eq!(broken(&schema, json!("x")), None);
        let e = check_arguments(&schema, &json!(1)).unwrap_err();
        assert_eq!(e.message, "must be string or null, not number");
        assert_eq!(broken(&json!({"const": 1}), json!(1.0)), None);
        assert_eq!(
            broken(&json!({"const": {"a": [1]}}), json!({"a": [1.0]})),
            None
        );
        assert_eq!(broken(&json!({"const": "a"}), json!("b")), at("$", "const"));
        assert_eq!(
            broken(&json!({"enum": [1, "2"]}), json!(2)),
            at("$", "enum")
        );
        assert_eq!(broken(&json!({"type": "integer"}), json!(1e3)), None);
        assert_eq!(
            broken(&json!({"exclusiveMinimum": 0}), json!(0)),
            at("$", "exclusiveMinimum")
        );
        assert_eq!(broken(&json!({"exclusiveMaximum": 1}), json!(0.5)), None);
        // Characters, not bytes.
        assert_eq!(broken(&json!({"maxLength": 2}), json!("éé")), None);
        assert_eq!(
            broken(&json!({"maxLength": 2}), json!("ééé")),
            at("$", "maxLength")
        );
    }

    #[test]
    fn any_of_one_of_all_of() {
        let any = json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]});
        assert_eq!(broken(&any, json!("x")), None);
        assert_eq!(broken(&any, json!(3)), None);
        let e = check_arguments(&any, &json!(-1)).unwrap_err();
        assert_eq!((e.path.as_str(), e.rule), ("$", "anyOf"));
        assert!(
            e.message.starts_with(
                "matches none of the 2 schemas of anyOf (the first: $: must be string"
            ),
            "{}",
            e.message
        );
        let one = json!({"oneOf": [{"type": "number"}, {"type": "integer"}]});
        assert_eq!(broken(&one, json!(1.5)), None);
        assert_eq!(broken(&one, json!(2)), at("$", "oneOf"));
        let all = json!({"allOf": [{"type": "object"}, {"required": ["a"]}]});
        assert_eq!(broken(&all, json!({"a": 1})), None);
        assert_eq!(broken(&all, json!({})), at("$", "required"));
    }

    #[test]
    fn local_refs_defs_and_cycles() {
        let schema = json!({
            "type": "object",
            "properties": {
                "home": {"$ref": "#/$defs/address"},
                "work": {"$ref": "#/definitions/a~1b"},
                "tree": {"$ref": "#/$defs/node"}
            },
            "$defs": {
                "address": {"type": "object", "required": ["street"]},
                "node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}, "v": {"type": "integer"}}}
            },
            "definitions": {"a/b": {"type": "string"}}
        });
        assert_eq!(
            broken(&schema, json!({"home": {"street": "x"}, "work": "y"})),
            None
        );
        assert_eq!(
            broken(&schema, json!({"home": {}})),
            at("$.home", "required")
        );
        assert_eq!(broken(&schema, json!({"work": 1})), at("$.work", "type"));
        assert_eq!(
            broken(&schema, json!({"tree": {"kids": [{"kids": [{"v": "x"}]}]}})),
            at("$.tree.kids[0].kids[0].v", "type")
        );
        assert_eq!(
            broken(&json!({"$ref": "#/$defs/none"}), json!(1)),
            at("$", "$ref")
        );
        // A cycle is reported, not followed for ever.
        let cycle = json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
        assert_eq!(broken(&cycle, json!(1)), at("$", "$ref"));
        assert_eq!(broken(&json!({"$ref": "#"}), json!(1)), at("$", "$ref"));
        // A reference to another document is ignored.
        assert_eq!(
            broken(&json!({"$ref": "https://example.com/s.json"}), json!(1)),
            None
        );
    }

    #[test]
    fn boolean_schemas_and_what_is_ignored() {
        assert_eq!(broken(&json!(true), json!({"a": 1})), None);
        let no_extra = json!({"properties": {"a": false}});
        assert_eq!(broken(&no_extra, json!({"a": 1})), at("$.a", "false"));
        assert_eq!(broken(&no_extra, json!({"b": 1})), None);
        // Ignored keywords pass.
        let ignored =
            json!({"type": "string", "format": "email", "pattern": "^x$", "description": "d"});
        assert_eq!(broken(&ignored, json!("not an email")), None);
        assert_eq!(
            broken(&json!({"multipleOf": 2, "uniqueItems": true}), json!(3)),
            None
        );
        // A schema that is not one (a number) checks nothing.
        assert_eq!(broken(&json!(5), json!("x")), None);
    }
}
