//! The `seglog` command-line tool as a library: [`run`] is the binary's whole `main`, and
//! [`run_with`] runs the same command line in-process with the given arguments and output streams
//! (used by the fuzz targets, which run `seglog dump` on arbitrary files). The commands live in
//! the private modules; nothing else is public.

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
mod stats;
mod term;
mod when;

pub use cli::{run, run_with};
