//! The `use` declarations of a Rust source file, read well enough to follow imports between modules:
//! each leaf of a use tree as its full path and the name it binds (`use a::{self, b::C as D}` gives
//! `a` bound as `a` and `a::b::C` bound as `D`; a glob binds nothing).

/// One leaf of a `use` tree.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UseLeaf {
    /// The path as written, from the tree's root (`crate`, `self`, `super`, a module or a crate name).
    pub(crate) path: Vec<String>,
    /// The name the leaf binds in the module, `None` for a glob.
    pub(crate) name: Option<String>,
}

/// The `use` leaves of `code` (comments already removed), and `code` with every `use` declaration
/// blanked out (same length and lines), so that other scans do not read use trees line by line.
pub(crate) fn split_uses(code: &str) -> (Vec<UseLeaf>, String) {
    let mut leaves = Vec::new();
    let mut rest = code.to_owned().into_bytes();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(found) = code.get(i..).and_then(|s| s.find("use")) {
        let start = i + found;
        let end = start + 3;
        i = end;
        let before_ok = start == 0 || !is_ident(bytes.get(start - 1).copied().unwrap_or(b' '));
        let after_ok = bytes.get(end).is_some_and(u8::is_ascii_whitespace);
        if !before_ok || !after_ok {
            continue;
        }
        let Some(len) = code.get(end..).and_then(|s| s.find(';')) else {
            break;
        };
        let stmt = code.get(end..end + len).unwrap_or_default();
        let tokens = tokens(stmt);
        // A path from `::` is an external crate's, never a module of this one.
        if tokens.first().map(String::as_str) != Some("::") {
            tree(&tokens, &mut 0, &[], &mut leaves);
        }
        for b in rest.get_mut(start..end + len + 1).into_iter().flatten() {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        i = end + len + 1;
    }
    (leaves, String::from_utf8(rest).unwrap_or_default())
}

/// Identifiers, `::` and the single characters `{ } , *`; anything else is skipped.
fn tokens(stmt: &str) -> Vec<String> {
    let bytes = stmt.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if is_ident(b) {
            let start = i;
            while bytes.get(i).copied().is_some_and(is_ident) {
                i += 1;
            }
            out.push(stmt.get(start..i).unwrap_or_default().to_owned());
        } else if stmt.get(i..i + 2) == Some("::") {
            out.push("::".to_owned());
            i += 2;
        } else {
            if matches!(b, b'{' | b'}' | b',' | b'*') {
                out.push((b as char).to_string());
            }
            i += 1;
        }
    }
    out
}

/// Reads one use tree at `pos` under `prefix`: `a::b::{..}`, `a::b::*`, `a::b as c`, `{..}`, `*`.
fn tree(tokens: &[String], pos: &mut usize, prefix: &[String], out: &mut Vec<UseLeaf>) {
    let mut path = prefix.to_vec();
    let mut named = false;
    loop {
        match tokens.get(*pos).map(String::as_str) {
            Some("{") => {
                *pos += 1;
                while let Some(t) = tokens.get(*pos) {
                    match t.as_str() {
                        "}" => {
                            *pos += 1;
                            break;
                        }
                        "," => *pos += 1,
                        _ => {
                            let before = *pos;
                            tree(tokens, pos, &path, out);
                            if *pos == before {
                                *pos += 1;
                            }
                        }
                    }
                }
                return;
            }
            Some("*") => {
                *pos += 1;
                out.push(UseLeaf { path, name: None });
                return;
            }
            Some(t) if t.bytes().all(is_ident) => {
                *pos += 1;
                // `self` inside braces names the prefix itself.
                if t != "self" || path.is_empty() {
                    path.push(t.to_owned());
                }
                named = true;
                if tokens.get(*pos).map(String::as_str) == Some("::") {
                    *pos += 1;
                    continue;
                }
                break;
            }
            _ => break,
        }
    }
    if !named {
        return;
    }
    let mut name = path.last().cloned();
    if tokens.get(*pos).map(String::as_str) == Some("as") {
        name = tokens.get(*pos + 1).cloned().filter(|n| n != "_");
        *pos += 2;
    }
    out.push(UseLeaf { path, name });
}

pub(crate) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(code: &str) -> Vec<(String, Option<String>)> {
        split_uses(code)
            .0
            .into_iter()
            .map(|l| (l.path.join("::"), l.name))
            .collect()
    }

    #[test]
    fn trees_braces_aliases_and_globs() {
        let code =
            "use crate::{\n    error::{Error, Result},\n    a::{self, B as C},\n    d::*,\n};\n";
        assert_eq!(
            leaves(code),
            vec![
                ("crate::error::Error".to_owned(), Some("Error".to_owned())),
                ("crate::error::Result".to_owned(), Some("Result".to_owned())),
                ("crate::a".to_owned(), Some("a".to_owned())),
                ("crate::a::B".to_owned(), Some("C".to_owned())),
                ("crate::d".to_owned(), None),
            ]
        );
    }

    #[test]
    fn visibility_renames_and_blanking() {
        let code = "pub(crate) use super::x::Y;\nfn f() { let used = 1; }\npub use self::z as _;\n";
        assert_eq!(
            leaves(code),
            vec![
                ("super::x::Y".to_owned(), Some("Y".to_owned())),
                ("self::z".to_owned(), None),
            ]
        );
        let (_, blanked) = split_uses(code);
        assert_eq!(blanked.lines().count(), code.lines().count());
        assert!(!blanked.contains("super::x"), "{blanked}");
        assert!(blanked.contains("let used = 1;"), "{blanked}");
    }
}
