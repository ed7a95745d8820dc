//! `seglog completions` and `seglog man` through the binary: each shell's script and the man
//! pages name every subcommand and their flags.
#![allow(clippy::unwrap_used, reason = "tests")]

use crate::run::{seglog, text};

const SUBCOMMANDS: &[&str] = &[
    "dump",
    "check",
    "recover",
    "produce",
    "consume",
    "offsets",
    "stats",
    "log-dirs",
    "compact",
    "completions",
    "man",
    "demo",
];

#[test]
fn completions_name_every_subcommand() {
    let root = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = seglog(&["completions", shell], root.path(), b"");
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell}: no {sub}");
        }
        assert!(script.contains("--print-data-log"), "{shell}: dump's flags");
    }
    let out = seglog(&["completions", "tcsh"], root.path(), b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn man_pages() {
    let root = tempfile::tempdir().unwrap();
    let out = seglog(&["man"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(page.contains(".TH seglog 1"), "{page}");
    for sub in SUBCOMMANDS {
        assert!(page.contains(&sub.replace('-', "\\-")), "no {sub}");
    }
    let out = seglog(&["man", "log-dirs"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = text(&out.stdout);
    assert!(
        page.contains(".TH seglog\\-log\\-dirs 1") || page.contains(".TH seglog-log-dirs 1"),
        "{page}"
    );
    assert!(
        page.contains("\\-\\-topic") && page.contains("Examples:"),
        "{page}"
    );
    let out = seglog(&["man", "nope"], root.path(), b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no subcommand \"nope\""));
}
