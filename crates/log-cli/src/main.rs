//! `seglog`: the command-line tool over Kafka-format log directories. The commands live in the
//! library modules of this crate; `main` only parses and hands over.

mod cli;
mod dump;

fn main() -> std::process::ExitCode {
    cli::run()
}
