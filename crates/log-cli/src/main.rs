//! `seglog`: the command-line tool over Kafka-format log directories. The commands live in the
//! library (`src/lib.rs` and its modules); `main` only hands over.

fn main() -> std::process::ExitCode {
    seglog_cli::run()
}
