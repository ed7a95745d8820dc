//! `seglog dump` against Kafka 4.4.0's own `kafka-dump-log.sh`: for every golden run under
//! `testdata/kafka-dump/` (made by `interop/kafka/make-goldens.sh`) and `testdata/kraft/` (a real
//! KRaft node's metadata log, `interop/kafka/make-kraft-goldens.sh`), the same arguments must print
//! the same stdout, the same stderr (with the repository root written `<ROOT>/`, as the goldens
//! are) and end with the same exit status. The few runs where seglog deliberately differs are
//! listed with the reason, and checked to still differ in the documented way.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Runs where seglog differs from Kafka on purpose.
const DEVIATIONS: &[(&str, &str)] = &[
    // Kafka throws NoSuchElementException when an index entry's batch is larger than
    // --max-message-size; seglog reads the batch whole, checks the entry and says where Kafka
    // would have stopped.
    (
        "kafka-dump/index.max-message-size-100",
        "kafka-dump-log.sh throws java.util.NoSuchElementException at this entry",
    ),
    // Kafka prints a Java exception; seglog prints one line naming the file and byte position.
    (
        "kafka-dump/extra/negative-size/log.plain",
        "corrupt batch at byte",
    ),
    ("kafka-dump/extra/zero-tail/timeindex.sanity", "seglog:"),
];

struct Run {
    golden: PathBuf,
    name: String,
    exit: i32,
    args: Vec<String>,
}

fn runs() -> Vec<Run> {
    let testdata = root().join("testdata");
    let mut lists = vec![
        testdata.join("kafka-dump/exit-status.txt"),
        testdata.join("kraft/exit-status.txt"),
    ];
    for entry in std::fs::read_dir(testdata.join("kafka-dump/extra")).unwrap() {
        lists.push(entry.unwrap().path().join("exit-status.txt"));
    }
    let mut runs = Vec::new();
    for list in lists {
        let dir = list.parent().unwrap().to_path_buf();
        for line in std::fs::read_to_string(&list)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let mut words = line.split_whitespace();
            let name = words.next().unwrap().to_owned();
            let exit = words.next().unwrap().parse().unwrap();
            assert_eq!(words.next(), Some("kafka-dump-log.sh"), "{line}");
            runs.push(Run {
                golden: dir.clone(),
                name,
                exit,
                args: words.map(str::to_owned).collect(),
            });
        }
    }
    runs
}

fn normalise(text: &str) -> String {
    text.replace(&format!("{}/", root().display()), "<ROOT>/")
}

#[test]
fn dump_output_equals_kafkas_byte_for_byte() {
    let runs = runs();
    assert!(runs.len() >= 25, "goldens missing: {} runs", runs.len());
    let mut exact = 0;
    for run in &runs {
        let output = Command::new(env!("CARGO_BIN_EXE_seglog"))
            .arg("dump")
            .args(&run.args)
            .current_dir(root())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = normalise(&String::from_utf8_lossy(&output.stderr));
        let golden_stdout =
            std::fs::read_to_string(run.golden.join(format!("{}.stdout", run.name))).unwrap();
        let golden_stderr =
            std::fs::read_to_string(run.golden.join(format!("{}.stderr", run.name))).unwrap();
        let key = format!(
            "{}/{}",
            run.golden
                .strip_prefix(root().join("testdata"))
                .unwrap()
                .display(),
            run.name
        );
        if let Some((_, marker)) = DEVIATIONS.iter().find(|(k, _)| *k == key) {
            assert!(
                stderr.contains(marker),
                "{key}: the documented difference changed:\n{stderr}"
            );
            continue;
        }
        assert_eq!(stdout, golden_stdout, "{key}: stdout differs from Kafka's");
        assert_eq!(stderr, golden_stderr, "{key}: stderr differs from Kafka's");
        assert_eq!(
            output.status.code(),
            Some(run.exit),
            "{key}: exit status differs from Kafka's"
        );
        exact += 1;
    }
    assert_eq!(exact, runs.len() - DEVIATIONS.len());
}
