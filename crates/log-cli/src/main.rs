//! `seglog`: the command-line tool over Kafka-format log directories. The commands live in the
//! library modules of this crate; `main` only parses and hands over.

mod check;
mod cli;
mod common;
mod consume;
mod demo;
mod dump;
mod dump_json;
mod produce;
mod reader;
mod stats;

fn main() -> std::process::ExitCode {
    cli::run()
}
