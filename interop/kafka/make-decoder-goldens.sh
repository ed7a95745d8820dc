#!/usr/bin/env bash
# Regenerates testdata/kafka-dump/decoders/ (described in its README.md): the __consumer_offsets,
# __transaction_state and __cluster_metadata segments of a real Kafka 4.4 node, and what Kafka's
# DumpLogSegments prints for each with its decoder flag (--offsets-decoder, --transaction-log-decoder,
# --cluster-metadata-decoder), after --deep-iteration --print-data-log.
#
# The node runs: two consumer groups committing offsets (group.protocol classic and consumer), transactional
# and idempotent producers, topics created with configs, configs changed and deleted, a topic deleted; then
# it stops cleanly and its segments are copied. Not deterministic (the node writes wall-clock timestamps,
# random ids): the goldens are the files one run made and Kafka's own dump of them.
# Then damaged/ (see damaged() below).
# Needs java 17+ and mvn (see run.sh; $SEGLOG_M2 picks the Maven repository).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
run="interop/kafka/run.sh"
out="testdata/kafka-dump/decoders"
"$run" build >/dev/null

dump() { # name decoder-flag file
  local args=(--deep-iteration --print-data-log "$2" --files "$out/$3")
  set +e
  "$run" dump "${args[@]}" >"$out/$1.stdout" 2>"$out/$1.stderr"
  local status=$?
  set -e
  echo "$1 $status kafka-dump-log.sh ${args[*]}" >>"$out/exit-status.txt"
}

# damaged/: damaged copies of the goldens' records (damage-decoder-records.py), each decoder's errors
# as Kafka prints them. `make-decoder-goldens.sh damaged` remakes only these, from the committed segments.
damaged() {
  local d="$out/damaged"
  rm -rf "$d"
  mkdir -p "$d"
  : >"$d/exit-status.txt"
  for dir in __consumer_offsets-0 __transaction_state-0 __cluster_metadata-0; do
    mkdir -p "$d/$dir"
    python3 "$here/damage-decoder-records.py" "$out/$dir/00000000000000000000.log" \
      "$d/$dir/00000000000000000000.log" 100 19
  done
  # a __consumer_offsets record without a key: Kafka's tool throws (a stack trace on stderr)
  mkdir -p "$d/missing-key/__consumer_offsets-0"
  python3 "$here/damage-decoder-records.py" --missing-key "$out/__consumer_offsets-0/00000000000000000000.log" \
    "$d/missing-key/__consumer_offsets-0/00000000000000000000.log"
  local out="$d"
  dump missing-key --offsets-decoder missing-key/__consumer_offsets-0/00000000000000000000.log
  dump offsets --offsets-decoder __consumer_offsets-0/00000000000000000000.log
  dump transactions --transaction-log-decoder __transaction_state-0/00000000000000000000.log
  dump metadata --cluster-metadata-decoder __cluster_metadata-0/00000000000000000000.log
  wc -c "$d"/*.* "$d"/*/*.log
}
if [[ "${1:-}" == damaged ]]; then
  damaged
  exit 0
fi

scratch="$(mktemp -d)"
broker_pid=""
cleanup() {
  [[ -n "$broker_pid" ]] && kill "$broker_pid" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port="$(free_port)"
controller="$(free_port)"
cat >"$scratch/server.properties" <<EOP
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$scratch/logs
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
EOP
"$run" storage format -t c2VnbG9nLWRlY29kZXJzMQ -c "$scratch/server.properties" --standalone >"$scratch/format.out"

mkfifo "$scratch/stdin"
"$run" broker "$scratch/server.properties" "$scratch/broker.log" <"$scratch/stdin" >"$scratch/broker.out" 2>&1 &
broker_pid=$!
exec 3>"$scratch/stdin"
for _ in $(seq 1 600); do
  if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null; then
    break
  fi
  sleep 0.2
done
bootstrap="127.0.0.1:$port"
"$run" create-topic "$bootstrap" events 2 retention.ms=86400000 "max.message.bytes=1048588"
"$run" create-topic "$bootstrap" txns 1
"$run" create-topic "$bootstrap" scratch 3 cleanup.policy=compact
"$run" produce "$bootstrap" events none 12 7 >/dev/null
"$run" group-commit "$bootstrap" events classic-group classic 12 60000 >/dev/null
"$run" group-commit "$bootstrap" events consumer-group consumer 12 60000 >/dev/null
"$run" txn-produce "$bootstrap" txns 3 11 >/dev/null
"$run" alter-config "$bootstrap" events retention.ms=3600000 segment.ms=600000
"$run" alter-config "$bootstrap" events segment.ms=
"$run" delete-topic "$bootstrap" scratch
sleep 2
exec 3>&- # end of stdin: the broker shuts down cleanly
wait "$broker_pid"
broker_pid=""

mkdir -p "$out"
rm -rf "$out"/__* "$out"/*.stdout "$out"/*.stderr "$out/exit-status.txt"
# the directories keep Kafka's names: DumpLogSegments takes the base offset from the file name
for dir in __consumer_offsets-0 __transaction_state-0 __cluster_metadata-0; do
  mkdir -p "$out/$dir"
  cp "$scratch/logs/$dir/00000000000000000000.log" "$out/$dir/"
  chmod 644 "$out/$dir/00000000000000000000.log"
done
: >"$out/exit-status.txt"
dump offsets --offsets-decoder __consumer_offsets-0/00000000000000000000.log
dump transactions --transaction-log-decoder __transaction_state-0/00000000000000000000.log
dump metadata --cluster-metadata-decoder __cluster_metadata-0/00000000000000000000.log
wc -c "$out"/*.* "$out"/__*/*
damaged
