//! `cargo xtask cli-docs`: generates the `seglog` binary's shell completions and man pages from its
//! clap definitions (`seglog completions SHELL`, `seglog man [SUBCOMMAND]`) into
//! `target/cli-docs/`, and fails unless each is non-empty and names every subcommand that
//! `seglog help` lists.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

/// The shells `seglog completions` generates for, and the file each script is installed as.
const SHELLS: &[(&str, &str)] = &[
    ("bash", "seglog.bash"),
    ("zsh", "_seglog"),
    ("fish", "seglog.fish"),
    ("elvish", "seglog.elv"),
    ("powershell", "_seglog.ps1"),
];

pub(crate) fn run(root: &Path) -> Result<()> {
    crate::cargo(
        root,
        &["build", "--locked", "-p", "seglog-cli", "--bin", "seglog"],
        &[],
    )?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let seglog = target.join("debug/seglog");
    let out_dir = target.join("cli-docs");
    std::fs::create_dir_all(out_dir.join("man"))
        .with_context(|| format!("creating {}", out_dir.display()))?;
    std::fs::create_dir_all(out_dir.join("completions"))?;
    let subcommands = subcommands(&seglog)?;
    ensure!(
        subcommands.len() >= 10,
        "`seglog help` lists only {subcommands:?}"
    );
    for (shell, file) in SHELLS {
        let script = output(&seglog, &["completions", shell])?;
        missing(&format!("the {shell} completions"), &script, &subcommands)?;
        std::fs::write(out_dir.join("completions").join(file), script)?;
    }
    let page = output(&seglog, &["man"])?;
    ensure!(
        page.starts_with(".ie") || page.contains(".TH"),
        "seglog man: not a roff page"
    );
    // roff escapes dashes: `log-dirs` is `log\-dirs` in the page.
    let escaped: Vec<String> = subcommands.iter().map(|s| s.replace('-', "\\-")).collect();
    missing("seglog.1", &page, &escaped)?;
    std::fs::write(out_dir.join("man/seglog.1"), page)?;
    for (sub, escaped) in subcommands.iter().zip(&escaped) {
        let page = output(&seglog, &["man", sub])?;
        missing(
            &format!("seglog-{sub}.1"),
            &page,
            &[format!("seglog {escaped}")],
        )?;
        std::fs::write(out_dir.join(format!("man/seglog-{sub}.1")), page)?;
    }
    eprintln!(
        "cli-docs: {} completion scripts and {} man pages in {}, each naming its subcommands ({})",
        SHELLS.len(),
        subcommands.len() + 1,
        out_dir.display(),
        subcommands.join(", ")
    );
    Ok(())
}

/// The subcommands `seglog help` lists under `Commands:` (clap's own `help` left out).
fn subcommands(seglog: &Path) -> Result<Vec<String>> {
    let help = output(seglog, &["help"])?;
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    Ok(names)
}

fn missing(what: &str, text: &str, names: &[String]) -> Result<()> {
    ensure!(!text.trim().is_empty(), "{what} is empty");
    let absent: Vec<&String> = names
        .iter()
        .filter(|n| !text.contains(n.as_str()))
        .collect();
    if !absent.is_empty() {
        bail!("{what} does not mention {absent:?}");
    }
    Ok(())
}

fn output(seglog: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new(seglog)
        .args(args)
        .output()
        .with_context(|| format!("running {} {args:?}", seglog.display()))?;
    ensure!(
        out.status.success(),
        "seglog {args:?} exited with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).with_context(|| format!("seglog {args:?}: not UTF-8"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::missing;

    #[test]
    fn a_page_without_a_subcommand_fails() {
        let names = ["dump".to_owned(), "log-dirs".to_owned()];
        assert!(missing("page", "dump and log-dirs", &names).is_ok());
        let err = missing("page", "dump only", &names).unwrap_err();
        assert!(err.to_string().contains("log-dirs"), "{err}");
        assert!(missing("page", "  \n", &[]).is_err());
    }
}
