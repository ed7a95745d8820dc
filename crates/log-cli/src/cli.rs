//! Argument parsing (clap derive) and dispatch. Exit codes: 0 success, 1 a check found problems,
//! 2 bad usage or a failure; failures print one line saying what and where. Each command's flags
//! live beside its code (`<command>::*Args`, with its `EXAMPLES`).

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

use crate::common::Outcome;

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
    #[command(after_help = crate::dump::EXAMPLES)]
    Dump(crate::dump::DumpOptions),
    /// Verify a partition directory or a whole log directory; change nothing.
    #[command(after_help = crate::check::EXAMPLES)]
    Check(crate::check::CheckArgs),
    /// Recover now, as a broker's start-up would: plan, then cut damaged tails, set aside what
    /// follows them, rebuild indexes, finish interrupted swaps.
    #[command(after_help = crate::recover::EXAMPLES)]
    Recover(crate::recover::RecoverArgs),
    /// Append records read from stdin, one per line.
    #[command(after_help = crate::produce::EXAMPLES)]
    Produce(Box<crate::produce::ProduceArgs>),
    /// Print records from an offset or a time; read-only and lock-free, so it can follow a writer.
    #[command(after_help = crate::consume::EXAMPLES)]
    Consume(crate::consume::ConsumeArgs),
    /// Look an offset up: earliest, latest, by timestamp, or the record with the largest timestamp.
    #[command(after_help = crate::offsets::EXAMPLES)]
    Offsets(crate::offsets::OffsetsArgs),
    /// Per-segment figures, totals and index anomalies of a partition directory.
    #[command(after_help = crate::stats::EXAMPLES)]
    Stats(crate::stats::StatsArgs),
    /// Describe a broker's log directories as kafka-log-dirs.sh --describe does: per partition its
    /// size and offset lag, as a table or Kafka's JSON.
    #[command(name = "log-dirs", after_help = crate::log_dirs::EXAMPLES)]
    LogDirs(crate::log_dirs::LogDirsArgs),
    /// Compact a partition now (keep the latest record per key), whatever its dirty ratio.
    #[command(after_help = crate::compact::EXAMPLES)]
    Compact(crate::compact::CompactArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    #[command(after_help = crate::completions::COMPLETIONS_EXAMPLES)]
    Completions(crate::completions::CompletionsArgs),
    /// Print the man page (roff) to stdout: seglog's, or one subcommand's.
    #[command(after_help = crate::completions::MAN_EXAMPLES)]
    Man(crate::completions::ManArgs),
    /// Build a sample log of a million records and show lookups, stats and a dump excerpt.
    #[command(after_help = crate::demo::EXAMPLES)]
    Demo(crate::demo::DemoArgs),
}

/// Parses the process's command line and runs the command on stdout and stderr: the binary's
/// `main`. Bad usage prints clap's message and exits with status 2.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    crate::term::enable();
    let mut out = crate::term::stdout();
    let mut err = crate::term::stderr();
    let code = execute(cli, &mut out, &mut err);
    let _ = err.flush();
    ExitCode::from(code)
}

/// Runs the command line `args` (the first item is the program name, as in `std::env::args_os`)
/// in-process, writing to `out` and `err` instead of stdout and stderr, and returns the exit status
/// the binary would have: 0 success, 1 problems found, 2 bad usage or a failure. Commands that read
/// stdin (`produce`) still read the process's stdin.
pub fn run_with<I, T>(args: I, out: &mut impl Write, err: &mut impl Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => execute(cli, out, err),
        Err(e) => {
            let _ = write!(err, "{}", e.render());
            u8::try_from(e.exit_code()).unwrap_or(2)
        }
    }
}

fn execute(cli: Cli, out: &mut impl Write, err: &mut impl Write) -> u8 {
    // The read-only commands end with status 1 on damage found in the data, as check does.
    let reads = matches!(
        cli.command,
        Command::Consume(_) | Command::Offsets(_) | Command::Stats(_) | Command::LogDirs(_)
    );
    let result = match cli.command {
        Command::Dump(options) => crate::dump::run(&options, out, err),
        Command::Check(args) => args.run(out),
        Command::Recover(args) => args.run(out),
        Command::Produce(args) => crate::produce::run(&args, out),
        Command::Consume(args) => args.run(out),
        Command::Offsets(args) => args.run(out),
        Command::Stats(args) => args.run(out),
        Command::LogDirs(args) => args.run(out, err),
        Command::Compact(args) => args.run(out),
        Command::Demo(args) => args.run(out),
        Command::Completions(args) => args.run(Cli::command(), out),
        Command::Man(args) => args.run(Cli::command(), out),
    };
    let flushed = out.flush();
    match (result, flushed) {
        (Ok(outcome), Ok(())) => outcome.exit_code(),
        (Err(e), _) => {
            // A closed pipe (`seglog dump ... | head`) is not a failure of ours.
            let broken_pipe = e
                .chain()
                .filter_map(|c| c.downcast_ref::<std::io::Error>())
                .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
            if broken_pipe {
                return 0;
            }
            crate::term::clear();
            let _ = writeln!(err, "seglog: {}", crate::common::message(&e));
            if reads && crate::common::is_damage(&e) {
                Outcome::Problems.exit_code()
            } else {
                Outcome::Failed.exit_code()
            }
        }
        (Ok(_), Err(e)) => {
            // A closed pipe (`seglog dump ... | head`) is not a failure of ours.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return 0;
            }
            let _ = writeln!(err, "seglog: writing to stdout: {e}");
            2
        }
    }
}
