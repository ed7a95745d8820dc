//! `seglog completions SHELL` and `seglog man`: shell completions (clap_complete) and a roff man
//! page (clap_mangen), both generated from the clap definitions the binary parses with, so they
//! cannot drift from its flags. `cargo xtask ci` generates them and checks every subcommand is in.

use std::io::Write;

use anyhow::{Result, bail};
use clap_complete::Shell;

use crate::common::Outcome;

/// The flags of `seglog completions`.
#[derive(Debug, clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

impl CompletionsArgs {
    /// Writes the completion script of `command` (the whole `seglog` definition).
    pub(crate) fn run(&self, mut command: clap::Command, out: &mut impl Write) -> Result<Outcome> {
        let name = command.get_name().to_owned();
        // Into memory first: clap_complete panics on a failed write (a closed pipe).
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut command, name, &mut script);
        out.write_all(&script)?;
        Ok(Outcome::Clean)
    }
}

/// The flags of `seglog man`.
#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// A subcommand's own page (seglog-dump.1, ...) instead of seglog.1, which lists them all.
    subcommand: Option<String>,
}

impl ManArgs {
    /// Writes the man page (section 1) of `command` (the whole `seglog` definition) or of one of
    /// its subcommands.
    pub(crate) fn run(&self, mut command: clap::Command, out: &mut impl Write) -> Result<Outcome> {
        command.build();
        let page = match &self.subcommand {
            None => command,
            Some(name) => {
                let Some(sub) = command.find_subcommand(name) else {
                    let known: Vec<&str> = command
                        .get_subcommands()
                        .map(clap::Command::get_name)
                        .collect();
                    bail!("no subcommand {name:?}: one of {}", known.join(", "));
                };
                // As clap_mangen's own generator names them: seglog-dump(1), run as `seglog dump`.
                // clap takes a `'static` name (without its `string` feature); one leak per run.
                let page_name: &'static str = format!("{}-{name}", command.get_name()).leak();
                sub.clone()
                    .name(page_name)
                    .bin_name(format!("{} {name}", command.get_name()))
            }
        };
        clap_mangen::Man::new(page).render(out)?;
        Ok(Outcome::Clean)
    }
}

pub(crate) const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  seglog completions bash > /etc/bash_completion.d/seglog
  seglog completions zsh > \"${fpath[1]}/_seglog\"
  seglog completions fish > ~/.config/fish/completions/seglog.fish";

pub(crate) const MAN_EXAMPLES: &str = "\
Examples:
  seglog man > seglog.1 && man ./seglog.1
  seglog man dump > seglog-dump.1
  seglog man | gzip > /usr/local/share/man/man1/seglog.1.gz";
