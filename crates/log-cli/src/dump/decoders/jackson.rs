//! The JSON tree Kafka's generated `*JsonConverter` classes build (Jackson nodes), and Jackson's
//! compact `toString` of it: fields in insertion order, int64 as numbers, uuids as Kafka's base64
//! text, bytes as base64 with padding (Jackson's default variant), strings escaped as Jackson does.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
    Text(String),
    Binary(Vec<u8>),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl Node {
    pub(super) fn uuid(bytes: [u8; 16]) -> Self {
        // Kafka's Uuid.toString: URL-safe base64 without padding.
        Node::Text(URL_SAFE_NO_PAD.encode(bytes))
    }

    pub(super) fn get(&self, name: &str) -> Option<&Node> {
        match self {
            Node::Object(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Jackson's `ObjectNode.set`/`put`: replaces in place, or appends.
    pub(super) fn set(&mut self, name: &str, value: Node) {
        if let Node::Object(fields) = self {
            if let Some(slot) = fields.iter_mut().find(|(k, _)| k == name) {
                slot.1 = value;
            } else {
                fields.push((name.to_owned(), value));
            }
        }
    }

    pub(super) fn write(&self, out: &mut String) {
        match self {
            Node::Null => out.push_str("null"),
            Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Node::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Node::Double(d) => out.push_str(&java_double(*d)),
            Node::Text(s) => quote(s, out),
            Node::Binary(b) => {
                out.push('"');
                out.push_str(&STANDARD.encode(b));
                out.push('"');
            }
            Node::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Node::Object(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quote(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    pub(super) fn to_json(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }
}

/// Jackson's string escaping: `"` and `\`, the five short control escapes, other control
/// characters as `\u00XX` (upper-case hex); everything else as it is.
fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Java's `Double.toString` (which Jackson writes): the shortest digits that round-trip, as
/// `123.0` for 10^-3 <= |d| < 10^7 and as `1.0E7` / `1.0E-4` outside.
fn java_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_owned();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let a = d.abs();
    if (1e-3..1e7).contains(&a) {
        return format!("{d:?}");
    }
    // Rust's `{:e}` gives the same shortest digits: `1e7`, `1.5e-4`.
    let e = format!("{d:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_owned()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

#[cfg(test)]
mod tests {
    use super::{Node, java_double};

    #[test]
    fn writes_as_jackson_does() {
        let n = Node::Object(vec![
            ("a".into(), Node::Text("q\"\\\n\u{1}\u{e9}".into())),
            ("b".into(), Node::Binary(vec![1, 2, 3, 4])),
            (
                "c".into(),
                Node::Array(vec![Node::Int(-1), Node::Null, Node::Bool(true)]),
            ),
        ]);
        assert_eq!(
            n.to_json(),
            concat!(
                r#"{"a":"q\"\\\n\u0001"#,
                "\u{e9}",
                r#"","b":"AQIDBA==","c":[-1,null,true]}"#
            )
        );
        assert_eq!(Node::uuid([0; 16]).to_json(), r#""AAAAAAAAAAAAAAAAAAAAAA""#);
    }

    #[test]
    fn doubles_print_as_java_does() {
        assert_eq!(java_double(1.0), "1.0");
        assert_eq!(java_double(1024.5), "1024.5");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(1.5e-4), "1.5E-4");
        assert_eq!(java_double(0.001), "0.001");
    }
}
