//! The module graph of a library crate, read from its sources, and the loops in it.
//!
//! A file is a module (`lib.rs` the root, `a/mod.rs` and `a.rs` the module `a`, `a/b.rs` the module
//! `a::b`). A module uses another when its code names a path into it: `crate::a::..`, `super::..`,
//! `self::..`, or a child module's name. Links between a module and its ancestors do not count: a
//! child using its parent's items, or a parent re-exporting its children's, is how Rust splits one
//! concept across files. Every other loop is one: two modules that import each other (directly or
//! through others) are one room with two doors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::use_tree::{is_ident, split_uses};

/// A module path, `crate` for the root, `crate::a::b` below it.
type Module = String;

/// The modules of one crate's `src/`, each with the modules its code names (outside its ancestors).
/// A name imported into a module (its `use` declarations, `pub` or not) is followed to where it is
/// defined: `crate::Error`, re-exported by the root from `error`, links to `crate::error`, and
/// `super::Fetch`, re-exported by a parent from a sibling, to that sibling.
pub(crate) fn graph(files: &[(String, String)]) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules: BTreeSet<Module> = files.iter().map(|(rel, _)| module_of(rel)).collect();
    let mut imports: BTreeMap<Module, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut named: Vec<(Module, Vec<Vec<String>>)> = Vec::new();
    for (rel, text) in files {
        let here = module_of(rel);
        let code: String = text
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        let (leaves, rest) = split_uses(&without_test_modules(&code));
        let mut paths = Vec::new();
        let bound = imports.entry(here.clone()).or_default();
        for leaf in leaves {
            if let Some(name) = leaf.name {
                bound.insert(name, leaf.path.clone());
            }
            paths.push(leaf.path);
        }
        for line in rest.lines() {
            paths.extend(paths_in(line));
        }
        named.push((here, paths));
    }
    let scope = Scope {
        modules: &modules,
        imports: &imports,
    };
    let mut graph = BTreeMap::new();
    for (here, paths) in named {
        let mut uses = BTreeSet::new();
        for path in paths {
            if let Some(target) = scope.resolve(&here, &path, 0)
                && !is_ancestor_or_self(&target, &here)
                && !is_ancestor_or_self(&here, &target)
            {
                uses.insert(target);
            }
        }
        graph.insert(here, uses);
    }
    graph
}

/// `code` without its inline test modules (`#[cfg(test)] mod tests { .. }`, loom's too): a test
/// that reaches the crate's front door to test a module is not a link of the module's design.
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(") {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let attr_end = from.find(")]").map_or(from.len(), |e| e + 2);
        let (attr, after) = from.split_at(attr_end);
        let is_test = attr.contains("test") && !attr.contains("not(");
        let item = after.trim_start();
        if is_test
            && (item.starts_with("mod ") || item.starts_with("pub(crate) mod "))
            && let Some(open) = after.find('{')
            && after.find(';').is_none_or(|semi| semi > open)
        {
            let mut depth = 0_usize;
            let mut end = after.len();
            for (i, c) in after.char_indices().skip_while(|(i, _)| *i < open) {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            // Keep the line breaks, so that what follows keeps its line numbers.
            out.extend(
                after
                    .get(..end)
                    .unwrap_or_default()
                    .chars()
                    .filter(|c| *c == '\n'),
            );
            rest = after.get(end..).unwrap_or_default();
            continue;
        }
        out.push_str(attr);
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The loops of the graph: its strongly connected components of more than one module (Tarjan).
pub(crate) fn loops(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let me = s.next;
        s.index.insert(v, me);
        s.low.insert(v, me);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            let reach = if s.index.contains_key(w) {
                s.on_stack
                    .contains(w)
                    .then(|| s.index.get(w).copied())
                    .flatten()
            } else {
                visit(s, w);
                s.low.get(w).copied()
            };
            if let Some(reach) = reach
                && s.low.get(v).is_some_and(|low| reach < *low)
            {
                s.low.insert(v, reach);
            }
        }
        if s.low.get(v) == Some(&me) {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.out
}

/// The module a file under `src/` is: `lib.rs` -> `crate`, `a/mod.rs` or `a.rs` -> `crate::a`.
fn module_of(rel: &str) -> Module {
    let path = Path::new(rel);
    let mut parts: Vec<String> = path
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "lib" | "main" | "mod") {
            parts.push(stem.to_owned());
        }
    }
    std::iter::once("crate".to_owned())
        .chain(parts)
        .collect::<Vec<_>>()
        .join("::")
}

/// The paths a line of code names, as lists of segments; `use a::{b, c::d}` gives `a::b` and `a::c::d`
/// only as far as the brace (enough to find the module).
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !is_ident(bytes.get(i - 1).copied().unwrap_or(b' '));
        if starts_word && bytes.get(i).copied().is_some_and(is_ident) {
            let mut segments = Vec::new();
            let mut j = i;
            loop {
                let start = j;
                while bytes.get(j).copied().is_some_and(is_ident) {
                    j += 1;
                }
                segments.push(code.get(start..j).unwrap_or_default().to_owned());
                if code.get(j..j + 2) == Some("::")
                    && bytes.get(j + 2).copied().is_some_and(is_ident)
                {
                    j += 2;
                } else {
                    break;
                }
            }
            if segments.len() > 1 || code.get(j..j + 2) == Some("::") {
                out.push(segments);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The crate's modules and the names each imports.
struct Scope<'a> {
    modules: &'a BTreeSet<Module>,
    imports: &'a BTreeMap<Module, BTreeMap<String, Vec<String>>>,
}

/// How many imports a path is followed through (re-exports of re-exports), against import loops.
const MAX_HOPS: usize = 8;

impl Scope<'_> {
    /// The deepest module that `path`, written in module `here`, leads into, following imports:
    /// a first segment that `here` imports, and a segment that the module reached so far imports.
    fn resolve(&self, here: &str, path: &[String], hops: usize) -> Option<Module> {
        let (first, rest) = path.split_first()?;
        if hops < MAX_HOPS
            && !matches!(first.as_str(), "crate" | "self" | "super")
            && !self.modules.contains(&format!("{here}::{first}"))
            && let Some(imported) = self.imports.get(here).and_then(|m| m.get(first))
            && imported.first() != Some(first)
        {
            let whole: Vec<String> = imported.iter().chain(rest).cloned().collect();
            return self.resolve(here, &whole, hops + 1);
        }
        let (found, rest) = self.prefix(here, path)?;
        if hops < MAX_HOPS
            && let Some((next, tail)) = rest.split_first()
            && let Some(imported) = self.imports.get(&found).and_then(|m| m.get(next))
        {
            let whole: Vec<String> = imported.iter().chain(tail).cloned().collect();
            if let Some(deeper) = self.resolve(&found, &whole, hops + 1) {
                return Some(deeper);
            }
        }
        Some(found)
    }

    /// The deepest existing module the path's leading segments name, and the segments after it.
    fn prefix<'p>(&self, here: &str, path: &'p [String]) -> Option<(Module, &'p [String])> {
        let (first, rest) = path.split_first()?;
        let mut base: Vec<String> = here.split("::").map(str::to_owned).collect();
        let mut rest: &[String] = rest;
        match first.as_str() {
            "crate" => base.truncate(1),
            "self" => {}
            "super" => {
                base.pop();
                while let Some((s, r)) = rest.split_first()
                    && s == "super"
                {
                    base.pop();
                    rest = r;
                }
            }
            // A child module named without `self::`.
            name if self.modules.contains(&format!("{here}::{name}")) => base.push(name.to_owned()),
            _ => return None,
        }
        if base.is_empty() {
            return None;
        }
        let mut found = base.join("::");
        if !self.modules.contains(&found) {
            return None;
        }
        while let Some((segment, r)) = rest.split_first() {
            let next = format!("{found}::{segment}");
            if !self.modules.contains(&next) {
                break;
            }
            found = next;
            rest = r;
        }
        Some((found, rest))
    }
}

fn is_ancestor_or_self(ancestor: &str, module: &str) -> bool {
    module == ancestor || module.starts_with(&format!("{ancestor}::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn siblings_importing_each_other_are_a_loop() {
        let g = graph(&files(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::B;\n"),
            ("b.rs", "use crate::a::{A, X};\n"),
        ]));
        assert_eq!(loops(&g), vec![vec!["crate::a", "crate::b"]]);
    }

    #[test]
    fn a_loop_through_three_modules_is_found() {
        let g = graph(&files(&[
            ("lib.rs", ""),
            ("a.rs", "use crate::b::B;"),
            ("b/mod.rs", "pub(crate) fn f() { crate::c::g() }"),
            ("c.rs", "fn g() -> super::a::A { todo!() }"),
        ]));
        assert_eq!(loops(&g), vec![vec!["crate::a", "crate::b", "crate::c"]]);
    }

    #[test]
    fn parents_and_children_and_comments_do_not_count() {
        let g = graph(&files(&[
            ("lib.rs", "mod seg;\npub use seg::read::Fetch;\n"),
            ("seg/mod.rs", "mod read;\npub use self::read::Fetch;\n"),
            ("seg/read.rs", "use super::Seg;\nuse crate::seg::Seg;\n"),
            (
                "seg/write.rs",
                "use super::read::Fetch; // crate::seg::write::X\n",
            ),
        ]));
        assert!(loops(&g).is_empty(), "{g:?}");
        assert_eq!(
            g.get("crate::seg::write"),
            Some(&BTreeSet::from(["crate::seg::read".to_owned()]))
        );
    }

    #[test]
    fn a_loop_through_a_parents_reexport_is_found() {
        // listing names the parent's re-export; the loop is with the child that defines it.
        let g = graph(&files(&[
            ("lib.rs", "mod listing;\nmod producer;\n"),
            (
                "producer/mod.rs",
                "mod snapshot_file;\npub use snapshot_file::SnapshotFile;\n",
            ),
            ("listing.rs", "use crate::producer::SnapshotFile;\n"),
            (
                "producer/snapshot_file.rs",
                "fn f() { crate::listing::file_name(p) }\n",
            ),
        ]));
        assert_eq!(
            loops(&g),
            vec![vec!["crate::listing", "crate::producer::snapshot_file"]]
        );
    }

    #[test]
    fn root_reexports_and_multiline_use_groups_are_followed() {
        let g = graph(&files(&[
            (
                "lib.rs",
                "mod error;\nmod a;\npub use error::{Error, Result};\n",
            ),
            (
                "a.rs",
                "use crate::{\n    Error,\n    Result,\n};\npub struct E;\n",
            ),
            ("error.rs", "enum Error {\n    A(#[from] crate::a::E),\n}\n"),
        ]));
        assert_eq!(loops(&g), vec![vec!["crate::a", "crate::error"]]);
    }

    #[test]
    fn an_imported_module_name_is_followed() {
        let g = graph(&files(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b;\nfn f() { b::g() }\n"),
            ("b.rs", "use super::a as other;\nfn g() { other::f() }\n"),
        ]));
        assert_eq!(loops(&g), vec![vec!["crate::a", "crate::b"]]);
    }

    #[test]
    fn test_modules_do_not_count() {
        let g = graph(&files(&[
            ("lib.rs", "mod a;\nmod b;\npub use b::B;\n"),
            (
                "a.rs",
                "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::B;\n}\n",
            ),
            ("b.rs", "pub struct B;\nfn g() { crate::a::f() }\n"),
        ]));
        assert!(loops(&g).is_empty(), "{g:?}");
        assert_eq!(
            without_test_modules("x\n#[cfg(test)]\nmod t {\n{}\n}\ny"),
            "x\n\n\n\n\ny"
        );
    }

    #[test]
    fn module_names() {
        assert_eq!(module_of("lib.rs"), "crate");
        assert_eq!(module_of("a/mod.rs"), "crate::a");
        assert_eq!(module_of("a/b.rs"), "crate::a::b");
    }
}
