//! Argument parsing (clap derive) and dispatch. Exit codes: 0 success, 1 a check found problems,
//! 2 bad usage or a failure; failures print one line saying what and where.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::dump::{self, DumpOptions};

/// seglog: inspect, verify and repair Kafka-format log segments and directories.
#[derive(Debug, Parser)]
#[command(name = "seglog", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the contents of .log, .index and .timeindex files exactly as kafka-dump-log.sh does.
    #[command(after_help = DUMP_EXAMPLES)]
    Dump(DumpOptions),
}

const DUMP_EXAMPLES: &str = "\
Examples:
  seglog dump --files 00000000000000000000.log
  seglog dump --deep-iteration --print-data-log --files 00000000000000000000.log
  seglog dump --verify-index-only --files 00000000000000000000.index,00000000000000000000.timeindex

Exit status: 0 when every file was dumped (index mismatches are reported on stderr, as Kafka
does), 1 when a file could not be read to its end because its bytes are corrupt, 2 on bad usage
or an I/O failure.";

/// Parses the command line and runs the command.
pub(crate) fn run() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut err = stderr.lock();
    let result = match cli.command {
        Command::Dump(options) => dump::run(&options, &mut out, &mut err),
    };
    let flushed = out.flush();
    match (result, flushed) {
        (Ok(outcome), Ok(())) => ExitCode::from(outcome.exit_code()),
        (Err(e), _) => {
            let _ = writeln!(err, "seglog: {e:#}");
            ExitCode::from(2)
        }
        (Ok(_), Err(e)) => {
            // A closed pipe (`seglog dump ... | head`) is not a failure of ours.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(err, "seglog: writing to stdout: {e}");
            ExitCode::from(2)
        }
    }
}

/// How a command ended when it did not fail outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Everything was fine.
    Clean,
    /// The command ran to its end but found problems in the data.
    Problems,
}

impl Outcome {
    fn exit_code(self) -> u8 {
        match self {
            Outcome::Clean => 0,
            Outcome::Problems => 1,
        }
    }
}
