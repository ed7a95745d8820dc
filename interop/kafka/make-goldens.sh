#!/usr/bin/env bash
# Regenerates the Kafka-made golden files described in testdata/README-kafka.md:
#
#   testdata/segment/00000000000000000000.{index,timeindex}   Kafka's LogSegment.recover + close on the .log
#   testdata/segment-torn/00000000000000000000.log            the same .log plus 40 garbage bytes
#   testdata/segment-torn/kafka-recover.txt                   what Kafka's recover says about it
#   testdata/kafka-dump/*.stdout, *.stderr, exit-status.txt   kafka-dump-log (DumpLogSegments) output
#   testdata/kafka-dump/input.sha256                          the inputs these were made from
#   testdata/kafka-dump/extra/txnindex/                       a .txnindex written by Kafka's TransactionIndex
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
# Where Kafka throws, the JVM prints a stack trace; its "\tat ..." frame lines are dropped from the
# .stderr goldens (they name Java source lines of Kafka and of the harness, not behaviour).
strip_frames() { grep -v -E $'^\t(at |\\.\\.\\. [0-9]+ more)' || true; }

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
  normalize <"$scratch/stderr" | strip_frames >"$out/$golden.stderr"
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

dump index.max-message-size-100 --files "$seg/$name.index" --max-message-size 100

# 4. Extra cases: small edits of the sample segment that probe Kafka's error paths. Inputs and outputs
# live together in testdata/kafka-dump/extra/<case>/.
ex="$out/extra"
patch_bytes() { # patch_bytes <file> <byte offset> <hex bytes, e.g. "eda080">
  local hex="$3" esc="" i
  for ((i = 0; i < ${#hex}; i += 2)); do esc+="\\x${hex:i:2}"; done
  printf "$esc" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
be32() { printf '%08x' $(($1 & 0xffffffff)); }
be64() { printf '%016x' "$1"; }
bytes() { # bytes <hex>: writes the bytes to stdout
  local hex="$1" esc="" i
  for ((i = 0; i < ${#hex}; i += 2)); do esc+="\\x${hex:i:2}"; done
  printf "$esc"
}
xdump() { # xdump <case> <golden> <DumpLogSegments args...>
  local case="$1" golden="$2"
  shift 2
  local status=0
  "$run" dump "$@" >"$scratch/stdout" 2>"$scratch/stderr" || status=$?
  normalize <"$scratch/stdout" >"$ex/$case/$golden.stdout"
  normalize <"$scratch/stderr" | strip_frames >"$ex/$case/$golden.stderr"
  echo "$golden $status kafka-dump-log.sh $*" >>"$ex/$case/exit-status.txt"
}
xrecover() { # xrecover <case>: Kafka's recover on a copy of the case's .log
  local case="$1" status=0 result
  rm -rf "$scratch/x" && mkdir "$scratch/x" && cp "$ex/$case/$name.log" "$scratch/x/"
  result="$(recover "$scratch/x" 2>"$scratch/stderr")" || status=$?
  {
    echo "# Kafka 4.4.0 LogSegment.recover on $name.log (index.interval.bytes=$index_interval, segment.index.bytes=$segment_index_bytes)"
    echo "exit_status: $status"
    echo "bytes_truncated: ${result:-none}"
    echo "log_bytes_after: $(wc -c <"$scratch/x/$name.log" | tr -d ' ')"
    for ext in index timeindex; do
      if [[ -f "$scratch/x/$name.$ext" ]]; then
        echo "$ext: $(od -An -v -tx1 "$scratch/x/$name.$ext" | tr -d ' \n')"
      fi
    done
    normalize <"$scratch/stderr" | strip_frames | sed 's/^/stderr: /'
  } >"$ex/$case/kafka-recover.txt"
}
newcase() { mkdir -p "$ex/$1" && : >"$ex/$1/exit-status.txt"; }

# crc-flip: one payload byte of the uncompressed batch at position 730 overwritten ('l' -> 0x00):
# isvalid: false in the dump, recovery truncates from that batch on.
newcase crc-flip
cp "$seg/$name.log" "$ex/crc-flip/"
patch_bytes "$ex/crc-flip/$name.log" 1230 00
xdump crc-flip log.plain --files "$ex/crc-flip/$name.log"
xdump crc-flip log.deep --files "$ex/crc-flip/$name.log" --deep-iteration
xrecover crc-flip

# bad-magic: the magic byte of the control batch at position 2544 set to 7. The magic is outside the CRC.
newcase bad-magic
cp "$seg/$name.log" "$ex/bad-magic/"
patch_bytes "$ex/bad-magic/$name.log" 2560 07
xdump bad-magic log.plain --files "$ex/bad-magic/$name.log"
xdump bad-magic log.deep --files "$ex/bad-magic/$name.log" --deep-iteration
xrecover bad-magic

# negative-size: after the last batch, 40 bytes whose size field is -5 (offset 79, size -5, 28 x 0x01).
newcase negative-size
{ cat "$seg/$name.log"; bytes "$(be64 79)$(be32 -5)"; for ((i = 0; i < 28; i++)); do bytes 01; done; } >"$ex/negative-size/$name.log"
xdump negative-size log.plain --files "$ex/negative-size/$name.log"
xrecover negative-size

# utf8-surrogate: bytes 916..923 (inside the first record's value of the uncompressed batch at 730)
# replaced by ED A0 80 20 ED A0 41 20: a UTF-8-encoded surrogate and a truncated one. CRC left stale.
newcase utf8-surrogate
cp "$seg/$name.log" "$ex/utf8-surrogate/"
patch_bytes "$ex/utf8-surrogate/$name.log" 916 eda08020eda04120
xdump utf8-surrogate log.print-data-log --files "$ex/utf8-surrogate/$name.log" --print-data-log

# index-errors: the sample .log with a hand-made .index (4 wrong entries) and .timeindex
# (a timestamp mismatch, an out-of-order timestamp, offsets not at a batch end or past the log).
newcase index-errors
cp "$seg/$name.log" "$ex/index-errors/"
{
  for e in 11:323 17:0 23:1823 29:323 30:2544 36:2700 44:2993 50:3220 55:3423 64:3811 70:4146 78:4146; do
    bytes "$(be32 "${e%%:*}")$(be32 "${e##*:}")"
  done
} >"$ex/index-errors/$name.index"
{
  for e in 1700000000050:5 1700000000049:11 1700000000100:33 1700000000200:31 1700000000300:100 2799511627779:47; do
    bytes "$(be64 "${e%%:*}")$(be32 "${e##*:}")"
  done
} >"$ex/index-errors/$name.timeindex"
xdump index-errors index --files "$ex/index-errors/$name.index"
xdump index-errors index.verify --files "$ex/index-errors/$name.index" --verify-index-only
xdump index-errors timeindex --files "$ex/index-errors/$name.timeindex"
xdump index-errors timeindex.verify --files "$ex/index-errors/$name.timeindex" --verify-index-only

# zero-tail: Kafka's indexes followed by zeroed slots, as a preallocated index that was never trimmed.
newcase zero-tail
cp "$seg/$name.log" "$ex/zero-tail/"
{ cat "$seg/$name.index"; for ((i = 0; i < 64; i++)); do bytes 00; done; } >"$ex/zero-tail/$name.index"
{ cat "$seg/$name.timeindex"; for ((i = 0; i < 60; i++)); do bytes 00; done; } >"$ex/zero-tail/$name.timeindex"
xdump zero-tail index --files "$ex/zero-tail/$name.index"
xdump zero-tail index.sanity --files "$ex/zero-tail/$name.index" --index-sanity-check
xdump zero-tail timeindex --files "$ex/zero-tail/$name.timeindex"
xdump zero-tail timeindex.sanity --files "$ex/zero-tail/$name.timeindex" --index-sanity-check

# txnindex: a .txnindex written by Kafka's own TransactionIndex (the harness's txnindex command:
# append each entry, flush, close), base offset 100; and the same file with one stray trailing byte,
# which Kafka's reader never reads.
newcase txnindex
txn="$ex/txnindex/00000000000000000100.txnindex"
rm -f "$txn"
"$run" txnindex "$txn" 4000:100:110:100 4001:105:120:105 9223372036854775807:118:135:118 17:130:150:140 0:-1:151:-1
xdump txnindex txnindex --files "$txn"
cp "$txn" "$ex/txnindex/00000000000000000200.txnindex"
bytes 07 >>"$ex/txnindex/00000000000000000200.txnindex"
xdump txnindex txnindex.partial-tail --files "$ex/txnindex/00000000000000000200.txnindex"

(cd testdata && sha256sum "segment/$name.log" "segment-torn/$name.log" kafka-dump/extra/*/"$name".*) >"$out/input.sha256"

echo "goldens written: $seg/$name.{index,timeindex}, $torn/, $out/" >&2
