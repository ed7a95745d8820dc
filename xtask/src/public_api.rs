//! The public-API snapshot: every `pub` item of each library crate, one line each, compared
//! with the listing committed under `docs/public-api/`, so that a change to the API shows up in
//! review instead of slipping through. `cargo-semver-checks` needs a published baseline (there
//! is none) and `cargo public-api` needs nightly rustdoc JSON (not on the pinned stable
//! toolchain), so the listing comes from the sources, parsed with `syn`.
//!
//! What is listed: every item declared `pub` in any module the crate compiles (test modules
//! left out), under its module path: functions and methods with their signatures, structs with
//! their public fields, enums with their variants, traits with their items, constants, type
//! aliases, `pub use` re-exports as written, trait impls (their headers), and the attributes that
//! are part of the API (`derive`, `non_exhaustive`, `cfg`, `repr`, `deprecated`), and the setters
//! `with_setters!` writes (as the invocation: the macro is not expanded). The workspace
//! denies nothing but warns on `unreachable_pub`, so a `pub` item in a private module is one a
//! re-export makes reachable.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use quote::ToTokens;

use crate::deps::LIBRARIES;

/// Where the listings live, one file per crate.
const SNAPSHOT_DIR: &str = "docs/public-api";

/// Compares each library's listing with the committed one; with `bless`, writes them instead.
pub(crate) fn check(root: &Path, bless: bool) -> Result<()> {
    let mut stale = Vec::new();
    for (krate, _) in LIBRARIES {
        let Some(dir) = crate_dir(root, krate) else {
            continue;
        };
        let listing = listing(krate, &dir)?;
        let path = root.join(SNAPSHOT_DIR).join(format!("{krate}.txt"));
        if bless {
            std::fs::create_dir_all(root.join(SNAPSHOT_DIR))?;
            std::fs::write(&path, &listing)
                .with_context(|| format!("writing {}", path.display()))?;
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != listing {
            stale.push(format!("{krate}:\n{}", diff(&committed, &listing)));
        }
    }
    if !stale.is_empty() {
        bail!(
            "the public API differs from {SNAPSHOT_DIR}/ (- committed, + now):\n{}\n\
             If the change is meant, accept it with `cargo xtask public-api --bless` and commit \
             the listings (a removal or a changed signature breaks embedders: say so in the \
             commit message).",
            stale.join("\n")
        );
    }
    if !bless {
        eprintln!("public-api: every library crate matches {SNAPSHOT_DIR}/");
    }
    Ok(())
}

/// The directory of a library crate (`seglog-record-format` is `crates/record-format`,
/// `seglog-cli` is `crates/log-cli`); `None` for a library that is not under `crates/`.
fn crate_dir(root: &Path, krate: &str) -> Option<PathBuf> {
    let name = match krate {
        "seglog-cli" => "log-cli",
        other => other.strip_prefix("seglog-")?,
    };
    let dir = root.join("crates").join(name);
    dir.join("src").join("lib.rs").exists().then_some(dir)
}

/// The sorted listing of a crate's public items.
fn listing(krate: &str, dir: &Path) -> Result<String> {
    let mut lines = Vec::new();
    let root_module = krate.replace('-', "_");
    walk_file(
        &dir.join("src").join("lib.rs"),
        &dir.join("src"),
        &root_module,
        &mut lines,
    )?;
    // A trait impl for a type the crate declares only without `pub` (in any module: a private
    // module's `pub` type may be re-exported) is not API; impls for `pub`, foreign and generic
    // types are. The walk tags the declarations (`TYPE_DECL`) and the impls (`TRAIT_IMPL`).
    let declared = |public: bool| -> std::collections::HashSet<String> {
        let tag = format!("{TYPE_DECL}{}", if public { "pub " } else { "private " });
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(tag.as_str()).map(str::to_owned))
            .collect()
    };
    let (public, private) = (declared(true), declared(false));
    let mut lines: Vec<String> = lines
        .into_iter()
        .filter(|l| !l.starts_with(TYPE_DECL))
        .filter_map(|l| match l.strip_prefix(TRAIT_IMPL) {
            Some(tagged) => {
                let (ty, line) = tagged.split_once(TRAIT_IMPL)?;
                (public.contains(ty) || !private.contains(ty)).then(|| line.to_owned())
            }
            None => Some(l),
        })
        .collect();
    lines.sort();
    lines.dedup();
    let mut out = format!(
        "# The public API of {krate}: `cargo xtask public-api --bless` writes this file.\n"
    );
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    Ok(out)
}

/// A walk's line declaring a type, `TYPE_DECL pub|private name` (not part of the listing).
const TYPE_DECL: &str = "\u{1}";
/// A walk's trait-impl line, `TRAIT_IMPL type TRAIT_IMPL line`: dropped for a private type.
const TRAIT_IMPL: &str = "\u{2}";

/// Lists the items of the module in `file`, whose child modules' files are under `children`.
fn walk_file(file: &Path, children: &Path, module: &str, lines: &mut Vec<String>) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let parsed = syn::parse_file(&text).with_context(|| format!("parsing {}", file.display()))?;
    walk_items(&parsed.items, children, module, lines)
}

fn walk_items(
    items: &[syn::Item],
    children: &Path,
    module: &str,
    lines: &mut Vec<String>,
) -> Result<()> {
    for item in items {
        if is_test_only(item_attrs(item)) {
            continue;
        }
        match item {
            syn::Item::Mod(m) => {
                let name = m.ident.to_string();
                let path = format!("{module}::{name}");
                if is_pub(&m.vis) {
                    lines.push(format!("{module}: {}pub mod {name}", api_attrs(&m.attrs)));
                }
                if let Some((_, inline)) = &m.content {
                    walk_items(inline, &children.join(&name), &path, lines)?;
                } else {
                    let flat = children.join(format!("{name}.rs"));
                    let (file, next) = if flat.exists() {
                        (flat, children.join(&name))
                    } else {
                        (children.join(&name).join("mod.rs"), children.join(&name))
                    };
                    walk_file(&file, &next, &path, lines)?;
                }
            }
            syn::Item::Impl(i) => impl_lines(i, module, lines),
            other => {
                let declared = match other {
                    syn::Item::Struct(i) => Some((&i.vis, &i.ident)),
                    syn::Item::Enum(i) => Some((&i.vis, &i.ident)),
                    syn::Item::Union(i) => Some((&i.vis, &i.ident)),
                    syn::Item::Type(i) => Some((&i.vis, &i.ident)),
                    _ => None,
                };
                if let Some((vis, ident)) = declared {
                    let kind = if is_pub(vis) { "pub" } else { "private" };
                    lines.push(format!("{TYPE_DECL}{kind} {ident}"));
                }
                if let Some(line) = item_line(other) {
                    lines.push(format!("{module}: {line}"));
                }
                item_members(other, module, lines);
            }
        }
    }
    Ok(())
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]`, `#[cfg(all(test, ...))]`: not part of any user's build.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let tokens = a.meta.to_token_stream().to_string();
            tokens == "cfg (test)" || tokens.starts_with("cfg (all (test")
        }
    })
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

/// The attributes that are part of an item's API, as text before it.
fn api_attrs(attrs: &[syn::Attribute]) -> String {
    let mut out = String::new();
    for a in attrs {
        let p = a.path();
        if [
            "derive",
            "non_exhaustive",
            "cfg",
            "repr",
            "deprecated",
            "macro_export",
        ]
        .iter()
        .any(|name| p.is_ident(name))
        {
            let _ = write!(out, "{} ", tidy_tokens(&a.to_token_stream().to_string()));
        }
    }
    out
}

/// The one line of a `pub` item (its signature, without body or docs); `None` if not `pub`.
fn item_line(item: &syn::Item) -> Option<String> {
    let text = match item {
        syn::Item::Const(i) if is_pub(&i.vis) => {
            format!("pub const {}: {}", i.ident, tokens(&i.ty))
        }
        syn::Item::Static(i) if is_pub(&i.vis) => {
            format!("pub static {}: {}", i.ident, tokens(&i.ty))
        }
        syn::Item::Fn(i) if is_pub(&i.vis) => format!("pub {}", tokens(&i.sig)),
        syn::Item::Type(i) if is_pub(&i.vis) => {
            let mut i = i.clone();
            i.attrs.clear();
            tokens(&i)
        }
        syn::Item::Use(i) if is_pub(&i.vis) => format!("pub use {}", tokens(&i.tree)),
        syn::Item::Struct(i) if is_pub(&i.vis) => {
            let shape = match &i.fields {
                syn::Fields::Unnamed(u) => tokens(&strip_private_tuple(u)),
                syn::Fields::Named(_) | syn::Fields::Unit => String::new(),
            };
            format!(
                "pub struct {}{}{shape}{}",
                i.ident,
                tokens(&i.generics),
                where_clause(&i.generics)
            )
        }
        syn::Item::Enum(i) if is_pub(&i.vis) => format!(
            "pub enum {}{}{}",
            i.ident,
            tokens(&i.generics),
            where_clause(&i.generics)
        ),
        syn::Item::Trait(i) if is_pub(&i.vis) => {
            let bounds = if i.supertraits.is_empty() {
                String::new()
            } else {
                format!(": {}", tokens(&i.supertraits))
            };
            format!(
                "pub trait {}{}{bounds}{}",
                i.ident,
                tokens(&i.generics),
                where_clause(&i.generics)
            )
        }
        // The `with_*` setters an options struct's `with_setters!` writes.
        syn::Item::Macro(i)
            if i.mac
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "with_setters") =>
        {
            format!("with_setters! {{ {} }}", i.mac.tokens)
        }
        syn::Item::Macro(i) if i.attrs.iter().any(|a| a.path().is_ident("macro_export")) => {
            format!(
                "macro {}",
                i.ident
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            )
        }
        _ => return None,
    };
    Some(format!(
        "{}{}",
        api_attrs(item_attrs(item)),
        tidy_tokens(&text)
    ))
}

/// The lines of a `pub` item's members: public fields, variants, trait items.
fn item_members(item: &syn::Item, module: &str, lines: &mut Vec<String>) {
    match item {
        syn::Item::Struct(i) if is_pub(&i.vis) => {
            if let syn::Fields::Named(named) = &i.fields {
                for f in named.named.iter().filter(|f| is_pub(&f.vis)) {
                    let name = f
                        .ident
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    lines.push(format!(
                        "{module}: struct {}: {}pub {name}: {}",
                        i.ident,
                        api_attrs(&f.attrs),
                        tidy_tokens(&tokens(&f.ty))
                    ));
                }
            }
        }
        syn::Item::Enum(i) if is_pub(&i.vis) => {
            for v in &i.variants {
                let mut v = v.clone();
                let attrs = api_attrs(&v.attrs);
                v.attrs.clear();
                strip_field_docs(&mut v.fields);
                lines.push(format!(
                    "{module}: enum {}: {attrs}{}",
                    i.ident,
                    tidy_tokens(&tokens(&v))
                ));
            }
        }
        syn::Item::Trait(i) if is_pub(&i.vis) => {
            for member in &i.items {
                let text = match member {
                    syn::TraitItem::Fn(f) => tokens(&f.sig),
                    syn::TraitItem::Type(t) => {
                        let mut t = t.clone();
                        t.attrs.clear();
                        tokens(&t)
                    }
                    syn::TraitItem::Const(c) => format!("const {}: {}", c.ident, tokens(&c.ty)),
                    _ => continue,
                };
                lines.push(format!(
                    "{module}: trait {}: {}",
                    i.ident,
                    tidy_tokens(&text)
                ));
            }
        }
        _ => {}
    }
}

/// An impl block: a trait impl's header, or an inherent impl's `pub` items.
fn impl_lines(i: &syn::ItemImpl, module: &str, lines: &mut Vec<String>) {
    let head = format!(
        "impl{} {}{}",
        tokens(&i.generics),
        i.trait_
            .as_ref()
            .map(|(bang, path, _)| format!(
                "{}{} for ",
                if bang.is_some() { "!" } else { "" },
                tokens(path)
            ))
            .unwrap_or_default(),
        tokens(&i.self_ty)
    );
    let head = format!(
        "{}{}{}",
        api_attrs(&i.attrs),
        tidy_tokens(&head),
        tidy_tokens(&where_clause(&i.generics))
    );
    if i.trait_.is_some() {
        match self_type_name(&i.self_ty) {
            Some(ty) => lines.push(format!("{TRAIT_IMPL}{ty}{TRAIT_IMPL}{module}: {head}")),
            None => lines.push(format!("{module}: {head}")),
        }
        return;
    }
    for member in &i.items {
        let text = match member {
            syn::ImplItem::Fn(f) if is_pub(&f.vis) => {
                format!("{}pub {}", api_attrs(&f.attrs), tokens(&f.sig))
            }
            syn::ImplItem::Const(c) if is_pub(&c.vis) => {
                format!("pub const {}: {}", c.ident, tokens(&c.ty))
            }
            syn::ImplItem::Type(t) if is_pub(&t.vis) => {
                format!("pub type {} = {}", t.ident, tokens(&t.ty))
            }
            _ => continue,
        };
        lines.push(format!("{module}: {head}: {}", tidy_tokens(&text)));
    }
}

/// The name of an impl's type when it is a path (`Foo`, `a::Foo<T>`: `Foo`); `None` for a
/// reference, tuple and the like, whose impls are always listed.
fn self_type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    }
}

fn where_clause(generics: &syn::Generics) -> String {
    generics
        .where_clause
        .as_ref()
        .map(|w| format!(" {}", tokens(w)))
        .unwrap_or_default()
}

/// A tuple struct's fields, private ones shown as `_`.
fn strip_private_tuple(fields: &syn::FieldsUnnamed) -> syn::FieldsUnnamed {
    let mut fields = fields.clone();
    for f in &mut fields.unnamed {
        f.attrs.clear();
        if !is_pub(&f.vis) {
            f.ty = syn::parse_quote!(_);
        }
    }
    fields
}

fn strip_field_docs(fields: &mut syn::Fields) {
    for f in fields.iter_mut() {
        f.attrs.retain(|a| !a.path().is_ident("doc"));
    }
}

fn tokens(t: &impl ToTokens) -> String {
    t.to_token_stream().to_string()
}

/// Token text (`impl < F : FileSystem >`) respaced the way rustfmt writes it.
fn tidy_tokens(text: &str) -> String {
    let mut s = text.to_owned();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" ::", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        (" ,", ","),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        ("& ", "&"),
        (" ;", ";"),
        (" : ", ": "),
        (" (", "("),
        ("# [", "#["),
        ("' ", "'"),
        ("! [", "!["),
    ] {
        while s.contains(from) {
            s = s.replace(from, to);
        }
    }
    // `->`, `=>` and `dyn`/`impl` bounds read better spaced again.
    s.replace("->", " -> ")
        .replace("  ", " ")
        .replace("where", " where")
        .replace("  where", " where")
}

/// A unified-diff-like listing of the lines only one side has.
fn diff(old: &str, new: &str) -> String {
    let old_lines: std::collections::BTreeSet<&str> = old.lines().collect();
    let new_lines: std::collections::BTreeSet<&str> = new.lines().collect();
    let mut out = String::new();
    for line in old_lines.difference(&new_lines) {
        let _ = writeln!(out, "- {line}");
    }
    for line in new_lines.difference(&old_lines) {
        let _ = writeln!(out, "+ {line}");
    }
    out
}

#[cfg(test)]
mod tests {
    /// `cargo test` holds the committed listings to the sources, as `cargo xtask ci` does.
    #[test]
    fn the_public_api_matches_the_committed_listings() -> anyhow::Result<()> {
        super::check(&crate::project_root(), false)
    }
}
