#!/usr/bin/env bash
# Runs Kafka's side of `cargo xtask bench-compare` (dev.seglog.bench.KafkaBench) with the given arguments,
# building it first if the jar is missing or older than pom.xml or a Java source. The xtask passes the same
# workload sizes it passes to the Rust systems:
#
#   interop/kafka-bench/run.sh --dir D --append-mib N --fsync-append-mib N --dataset-mib N \
#       --samples N --warmup N --lookups N --reads N --open-segments N [--part P]
#
# --part is one workload group (append, segment, consume, log_append, open, logdir, compact), or main (the
# default: every group but compact, one after the other in this process). The xtask runs one group at a
# time on every system back to back (docs/perf/method.md).
# Needs java (17+) and mvn. Maven's local repository is $SEGLOG_M2, default <repo root>/target/m2 (gitignored).
# The build output goes to interop/kafka-bench/target/ (gitignored). JVM options: $SEGLOG_BENCH_JVM_OPTS.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
m2="${SEGLOG_M2:-$root/target/m2}"
jar="$here/target/seglog-kafka-bench-0.1.0.jar"

needs_build=0
if [[ ! -f "$jar" || ! -d "$here/target/lib" ]]; then
  needs_build=1
elif [[ -n "$(find "$here/pom.xml" "$here/src" -newer "$jar" -type f -print -quit)" ]]; then
  needs_build=1
fi
if [[ $needs_build == 1 ]]; then
  rm -rf "$here/target/lib"
  # build chatter goes to stderr so that stdout is only the harness's JSON
  mvn -B -q -Dstyle.color=never -f "$here/pom.xml" -Dmaven.repo.local="$m2" package 1>&2
fi

# The drainer of the zero-copy consume workload (PartitionWorkloads.Drain): the Rust side's binary, which
# `cargo xtask bench-compare` builds first.
export SEGLOG_BENCH_DRAINER="${SEGLOG_BENCH_DRAINER:-$root/target/release/seglog-bench-compare}"

# A fixed heap, so the collector does not resize it between samples.
# shellcheck disable=SC2086
exec java -Xms2g -Xmx2g ${SEGLOG_BENCH_JVM_OPTS:-} -cp "$jar:$here/target/lib/*" dev.seglog.bench.KafkaBench "$@"
