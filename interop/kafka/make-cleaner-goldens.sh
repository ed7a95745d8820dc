#!/usr/bin/env bash
# Regenerates the compaction goldens described in testdata/cleaner/README.md:
#
#   testdata/cleaner/<case>/input/cleaner-0/   a partition seglog wrote (seglog-cleaner-goldens)
#   testdata/cleaner/<case>/config.properties  its topic config (both cleaners use it)
#   testdata/cleaner/<case>/passes.txt         the cleaning times, one a line
#   testdata/cleaner/<case>/kafka/passN/       the live segments after Kafka 4.4's cleaner ran pass
#                                              N (`Oracle clean`, Compaction.java): .log, .index,
#                                              .timeindex, and .txnindex when it holds entries
#
# Needs cargo, java 17+ and mvn (see interop/kafka/run.sh; $SEGLOG_M2 picks the Maven repository).
# Deterministic: the inputs are written on a hand-driven clock, and Kafka's cleaner runs at the
# times in passes.txt, so running it twice gives the same bytes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

run="interop/kafka/run.sh"
out="testdata/cleaner"

# Build both sides up front so no build output can end up in a golden file.
"$run" build
CARGO_INCREMENTAL=0 cargo build -q -p seglog-harness --bin seglog-cleaner-goldens
gen="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/debug/seglog-cleaner-goldens"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

"$gen" "$scratch"
for case_dir in "$scratch"/*/; do
  name="$(basename "$case_dir")"
  mkdir -p "$case_dir/kafka"
  # shellcheck disable=SC2046 # one argument per pass time
  "$run" clean "$case_dir/input/cleaner-0" "$case_dir/config.properties" "$case_dir/kafka" \
    $(cat "$case_dir/passes.txt") >"$case_dir/kafka/passes.out"
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name"
  cp -r "$case_dir/input" "$case_dir/config.properties" "$case_dir/passes.txt" "$case_dir/kafka" "$out/$name/"
  echo "$name: $(tr '\n' ';' <"$case_dir/kafka/passes.out")"
done
