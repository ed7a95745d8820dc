//! The `--flag value` pairs of a bench-compare process (the systems' and the scale runs'):
//! `--dir` a path, the named word flags text, every other flag a number.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, Result};

#[derive(Debug, Default)]
pub(crate) struct Flags {
    pub(crate) dir: Option<PathBuf>,
    /// The word flags given, by name (`--part`).
    pub(crate) words: HashMap<String, String>,
    /// Every other flag, by name; a caller takes out the ones it knows and refuses the rest.
    pub(crate) numbers: HashMap<String, u64>,
}

/// Reads `args` as `--flag value` pairs; the flags in `words` take text, all others a number.
pub(crate) fn parse(args: impl Iterator<Item = String>, words: &[&str]) -> Result<Flags> {
    let mut args = args;
    let mut flags = Flags::default();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        if flag == "--dir" {
            flags.dir = Some(PathBuf::from(value));
        } else if words.contains(&flag.as_str()) {
            flags.words.insert(flag, value);
        } else {
            let n: u64 = value
                .parse()
                .with_context(|| format!("{flag} {value}: not a number"))?;
            flags.numbers.insert(flag, n);
        }
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter()
            .map(|s| (*s).to_owned())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn paths_words_and_numbers() -> Result<()> {
        let flags = parse(
            args(&["--dir", "d", "--part", "open", "--samples", "3"]),
            &["--part"],
        )?;
        assert_eq!(flags.dir, Some(PathBuf::from("d")));
        assert_eq!(flags.words.get("--part").map(String::as_str), Some("open"));
        assert_eq!(flags.numbers.get("--samples"), Some(&3));
        // Not a word flag here: a number is wanted.
        assert!(parse(args(&["--part", "open"]), &[]).is_err());
        assert!(parse(args(&["--samples"]), &[]).is_err());
        Ok(())
    }
}
