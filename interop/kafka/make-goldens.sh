#!/usr/bin/env bash
# Regenerates the Kafka-made golden files described in testdata/README-kafka.md:
#
#   testdata/segment/00000000000000000000.{index,timeindex}   Kafka's LogSegment.recover + close on the .log
#   testdata/segment-torn/00000000000000000000.log            the same .log plus 40 garbage bytes
#   testdata/segment-torn/kafka-recover.txt                   what Kafka's recover says about it
#   testdata/kafka-dump/*.stdout, *.stderr, exit-status.txt   kafka-dump-log (DumpLogSegments) output
#   testdata/kafka-dump/input.sha256                          the inputs these were made from
#
# Input: testdata/segment/00000000000000000000.log (made by testdata/gen/sample_segment.py).
# Needs java 17+ and mvn (see interop/kafka/run.sh; $SEGLOG_M2 picks the Maven repository).
# Deterministic: running it twice gives the same bytes.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

run="interop/kafka/run.sh"
name="00000000000000000000"
seg="testdata/segment"
torn="testdata/segment-torn"
out="testdata/kafka-dump"

# Segment settings for recover: index.interval.bytes and segment.index.bytes.
index_interval=100
segment_index_bytes=10485760

[[ -f "$seg/$name.log" ]] || { echo "missing $seg/$name.log" >&2; exit 1; }

# Build once up front so no Maven output can end up in a golden file.
"$run" >/dev/null 2>&1 || true

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Kafka prints absolute paths in some stderr lines; make them machine-independent.
root_re="$(printf '%s/' "$root" | sed 's/[]\/$*.^|[]/\\&/g')"
normalize() { sed "s/$root_re/<ROOT>\\//g"; }

# recover <dir>: Kafka's LogSegment.recover on <dir>/$name.log; prints bytes truncated.
recover() { "$run" recover "$1" 0 "$index_interval" "$segment_index_bytes"; }

# 1. Kafka's indexes for the sample segment.
mkdir -p "$scratch/seg"
cp "$seg/$name.log" "$scratch/seg/"
truncated="$(recover "$scratch/seg")"
if [[ "$truncated" != 0 ]]; then
  echo "Kafka truncated $truncated bytes of $seg/$name.log; expected a clean segment" >&2
  exit 1
fi
cmp -s "$seg/$name.log" "$scratch/seg/$name.log" || { echo "recover changed the .log" >&2; exit 1; }
if [[ -e "$scratch/seg/$name.txnindex" ]]; then
  echo "note: Kafka's recover wrote a .txnindex (not committed)" >&2
fi
cp "$scratch/seg/$name.index" "$scratch/seg/$name.timeindex" "$seg/"

# 2. The torn segment: the sample .log followed by 40 garbage bytes, byte i = (37*i + 11) mod 256.
# Bytes 8..11 of the garbage (read as the next batch's size) are 0x33587da2, far more than remain,
# so Kafka's reader sees a partial batch and stops without an exception.
mkdir -p "$torn"
{
  cat "$seg/$name.log"
  for ((i = 0; i < 40; i++)); do printf "\\x$(printf '%02x' $(((37 * i + 11) % 256)))"; done
} >"$torn/$name.log"

mkdir -p "$scratch/torn"
cp "$torn/$name.log" "$scratch/torn/"
torn_truncated="$(recover "$scratch/torn")"
{
  echo "# Kafka 4.4.0 LogSegment.recover on testdata/segment-torn/$name.log"
  echo "# (index.interval.bytes=$index_interval, segment.index.bytes=$segment_index_bytes); made by interop/kafka/make-goldens.sh"
  echo "log_bytes_before: $(wc -c <"$torn/$name.log" | tr -d ' ')"
  echo "bytes_truncated: $torn_truncated"
  echo "log_bytes_after: $(wc -c <"$scratch/torn/$name.log" | tr -d ' ')"
  if cmp -s "$scratch/torn/$name.log" "$seg/$name.log"; then
    echo "log_after_equals: testdata/segment/$name.log"
  else
    echo "log_after_equals: (differs from testdata/segment/$name.log)"
  fi
  for ext in index timeindex; do
    if cmp -s "$scratch/torn/$name.$ext" "$seg/$name.$ext"; then
      echo "${ext}_after_equals: testdata/segment/$name.$ext"
    else
      echo "${ext}_after_equals: (differs from testdata/segment/$name.$ext)"
    fi
  done
} >"$torn/kafka-recover.txt"

# 3. DumpLogSegments output. Always run from the repository root with relative paths, so the
# "Dumping <file>" lines are stable.
rm -rf "$out"
mkdir -p "$out"
: >"$out/exit-status.txt"
dump() { # dump <golden-name> <DumpLogSegments args...>
  local golden="$1"
  shift
  local status=0
  "$run" dump "$@" >"$scratch/stdout" 2>"$scratch/stderr" || status=$?
  normalize <"$scratch/stdout" >"$out/$golden.stdout"
  normalize <"$scratch/stderr" >"$out/$golden.stderr"
  echo "$golden $status kafka-dump-log.sh $*" >>"$out/exit-status.txt"
}

log="$seg/$name.log"
dump log.plain --files "$log"
dump log.deep --files "$log" --deep-iteration
dump log.print-data-log --files "$log" --print-data-log
dump log.skip-metadata --files "$log" --print-data-log --skip-record-metadata
dump index --files "$seg/$name.index"
dump index.verify --files "$seg/$name.index" --verify-index-only
dump index.sanity --files "$seg/$name.index" --index-sanity-check
dump timeindex --files "$seg/$name.timeindex"
dump timeindex.verify --files "$seg/$name.timeindex" --verify-index-only
dump timeindex.sanity --files "$seg/$name.timeindex" --index-sanity-check
dump torn.log.plain --files "$torn/$name.log"
dump torn.log.deep --files "$torn/$name.log" --deep-iteration

(cd testdata && sha256sum "segment/$name.log" "segment-torn/$name.log") >"$out/input.sha256"

echo "goldens written: $seg/$name.{index,timeindex}, $torn/, $out/" >&2
