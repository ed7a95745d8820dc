//! The `seglog` command-line tool as a library: [`run`] is the binary's whole `main`, and
//! [`run_with`] runs the same command line in-process with the given arguments and output streams
//! (used by the fuzz targets, which run `seglog dump` on arbitrary files). The commands live in
//! the private modules; nothing else is public.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let partition = dir.path().join("orders-0");
//! std::fs::create_dir(&partition)?;
//! let (mut out, mut err) = (Vec::new(), Vec::new());
//! let code = seglog_cli::run_with(["seglog", "check", "--json"].iter().copied().map(Into::into).chain([partition.into_os_string()]), &mut out, &mut err);
//! assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err)); // an empty partition is healthy
//! # Ok(())
//! # }
//! ```
//!
//! Unix only, as the seglog crates below it are.

mod check;
mod cli;
mod common;
mod compact;
mod completions;
mod consume;
mod demo;
mod dump;
mod human;
mod isolation;
mod log_dirs;
mod offsets;
mod produce;
mod recover;
mod recover_check;
mod recover_json;
mod stats;
mod term;
mod when;

pub use cli::{run, run_with};
