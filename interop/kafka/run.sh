#!/usr/bin/env bash
# Runs the Kafka oracle harness (dev.seglog.oracle.Oracle) with the given arguments, building it first if
# the jar is missing or older than pom.xml or a Java source.
#
#   interop/kafka/run.sh dump <kafka-dump-log.sh arguments...>
#   interop/kafka/run.sh recover <segment-dir> <base-offset> <index-interval-bytes> <segment-index-bytes>
#   interop/kafka/run.sh snapshot <dir> <script>   (Kafka's ProducerStateManager, see Snapshots.java)
#   interop/kafka/run.sh txnindex <file> <producerId>:<firstOffset>:<lastOffset>:<lastStableOffset>...
#   interop/kafka/run.sh build    (only builds the harness)
#   interop/kafka/run.sh storage|broker|create-topic|produce|consume ...   (see Oracle.java)
#
# Needs java (17+) and mvn. Maven's local repository is $SEGLOG_M2, default <repo root>/target/m2 (gitignored),
# so CI can cache it. The build output goes to interop/kafka/target/ (gitignored). Relative paths in the
# arguments are resolved against the caller's working directory, as with kafka-dump-log.sh.
# $SEGLOG_JAVA_OPTS, if set, goes to java before the class path (for example -Xmx512m).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
m2="${SEGLOG_M2:-$root/target/m2}"
jar="$here/target/seglog-kafka-oracle-0.1.0.jar"

needs_build=0
if [[ ! -f "$jar" || ! -d "$here/target/lib" || ! -d "$here/target/broker-lib" ]]; then
  needs_build=1
elif [[ -n "$(find "$here/pom.xml" "$here/src" -newer "$jar" -type f -print -quit)" ]]; then
  needs_build=1
fi
if [[ $needs_build == 1 ]]; then
  rm -rf "$here/target/lib" "$here/target/broker-lib"
  # build chatter goes to stderr so that stdout is only the harness output
  mvn -B -q -Dstyle.color=never -f "$here/pom.xml" -Dmaven.repo.local="$m2" package 1>&2
fi

if [[ "${1:-}" == build ]]; then
  exit 0
fi
cp="$jar:$here/target/lib/*"
if [[ "${1:-}" == broker ]]; then
  # the broker logs through log4j2: its slf4j binding goes before slf4j-nop
  cp="$here/target/broker-lib/*:$cp"
fi
exec java ${SEGLOG_JAVA_OPTS:-} -cp "$cp" dev.seglog.oracle.Oracle "$@"
