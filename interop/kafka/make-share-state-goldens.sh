#!/usr/bin/env bash
# Regenerates testdata/kafka-dump/share-group-state/ (described in its README.md): the __share_group_state
# and __consumer_offsets segments of a real Kafka 4.4 node that ran share groups (KIP-932), and what Kafka's
# DumpLogSegments prints for them with --share-group-state-decoder and --offsets-decoder, after
# --deep-iteration --print-data-log. A sibling of make-decoder-goldens.sh, with its own broker, so that
# remaking one set of goldens leaves the other as it was.
#
# Share groups need nothing switched on in 4.4: a node formatted at the latest metadata version has
# share.version 2. The node runs: a topic of 2 partitions and 12 records; share group share-mixed
# accepts, releases (then accepts on redelivery) and rejects records (Oracle share-consume ... mixed);
# share group share-gone accepts every record and is then deleted (share-delete: tombstones). One
# snapshot per 3 updates (share.coordinator.snapshot.update.records.per.snapshot), so that the log holds
# ShareSnapshot and ShareUpdate records both. Then the node stops cleanly and its segments are copied.
# Not deterministic (the node writes wall-clock timestamps, random ids): the goldens are the files one
# run made and Kafka's own dump of them. Then damaged/ (see damaged() below).
# Needs java 17+ and mvn (see run.sh; $SEGLOG_M2 picks the Maven repository).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
run="interop/kafka/run.sh"
out="testdata/kafka-dump/share-group-state"
"$run" build >/dev/null

dump() { # name decoder-flag file
  local args=(--deep-iteration --print-data-log "$2" --files "$out/$3")
  set +e
  "$run" dump "${args[@]}" >"$out/$1.stdout" 2>"$out/$1.stderr"
  local status=$?
  set -e
  echo "$1 $status kafka-dump-log.sh ${args[*]}" >>"$out/exit-status.txt"
}

# damaged/: damaged copies of the __share_group_state records (damage-decoder-records.py), the decoder's
# errors as Kafka prints them, and a record without a key (Kafka's tool throws). `make-share-state-goldens.sh
# damaged` remakes only these, from the committed segment.
damaged() {
  local d="$out/damaged"
  rm -rf "$d"
  mkdir -p "$d/__share_group_state-0" "$d/missing-key/__share_group_state-0"
  : >"$d/exit-status.txt"
  python3 "$here/damage-decoder-records.py" "$out/__share_group_state-0/00000000000000000000.log" \
    "$d/__share_group_state-0/00000000000000000000.log" 100 35
  python3 "$here/damage-decoder-records.py" --missing-key "$out/__share_group_state-0/00000000000000000000.log" \
    "$d/missing-key/__share_group_state-0/00000000000000000000.log"
  local out="$d"
  dump missing-key --share-group-state-decoder missing-key/__share_group_state-0/00000000000000000000.log
  dump share-state --share-group-state-decoder __share_group_state-0/00000000000000000000.log
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
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
share.coordinator.snapshot.update.records.per.snapshot=3
group.initial.rebalance.delay.ms=0
EOP
"$run" storage format -t c2VnbG9nLXNoYXJlLXN0YXRl -c "$scratch/server.properties" --standalone >"$scratch/format.out"

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
"$run" create-topic "$bootstrap" shared 2
"$run" produce "$bootstrap" shared none 12 7 >/dev/null
"$run" share-consume "$bootstrap" shared share-mixed 12 120000 mixed
"$run" share-consume "$bootstrap" shared share-gone 12 120000 accept
"$run" share-delete "$bootstrap" share-gone
sleep 2
exec 3>&- # end of stdin: the broker shuts down cleanly
wait "$broker_pid"
broker_pid=""

mkdir -p "$out"
rm -rf "$out"/__* "$out"/*.stdout "$out"/*.stderr "$out/exit-status.txt"
# the directories keep Kafka's names: DumpLogSegments takes the base offset from the file name
for dir in __share_group_state-0 __consumer_offsets-0; do
  mkdir -p "$out/$dir"
  cp "$scratch/logs/$dir/00000000000000000000.log" "$out/$dir/"
  chmod 644 "$out/$dir/00000000000000000000.log"
done
: >"$out/exit-status.txt"
dump share-state --share-group-state-decoder __share_group_state-0/00000000000000000000.log
dump offsets --offsets-decoder __consumer_offsets-0/00000000000000000000.log
wc -c "$out"/*.* "$out"/__*/*
damaged
