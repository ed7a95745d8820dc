//! `seglog`: the command-line tool over Kafka-format log directories. The commands live in the
//! library (`src/lib.rs` and its modules); `main` raises the open-file limit and hands over.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

fn main() -> std::process::ExitCode {
    raise_open_file_limit();
    seglog_cli::run()
}

/// Raises the soft open-file limit (`ulimit -n`) to the hard one, as Kafka's systemd units and
/// many servers do, before the first log opens: the default `seglog.max.open.segment.files` is
/// half the soft limit, read once. Only the binary does it, never the libraries (an embedder owns
/// its process's limits). Where the hard limit is unlimited or the call fails, the soft limit
/// stays as it was.
fn raise_open_file_limit() {
    let now = getrlimit(Resource::Nofile);
    if let (Some(soft), Some(hard)) = (now.current, now.maximum)
        && soft < hard
    {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(hard),
                maximum: Some(hard),
            },
        );
    }
}
