#!/usr/bin/env bash
# Regenerates testdata/kraft/ (described in testdata/README-kafka.md): the KRaft metadata log of a real
# Kafka 4.4 node formatted with --standalone (a dynamic quorum), whose files hold every KRaft control
# record type, and what Kafka's DumpLogSegments prints for them.
#
#   testdata/kraft/00000000000000000000-0000000000.checkpoint   the bootstrap snapshot kafka-storage format
#                                                               writes (SnapshotHeader, KRaftVersion,
#                                                               KRaftVoters, SnapshotFooter)
#   testdata/kraft/00000000000000000000.log                     the metadata log after a short run
#                                                               (LeaderChange, metadata records)
#   testdata/kraft/metadata.stdout, .stderr, exit-status.txt    kafka-dump-log --deep-iteration
#                                                               --print-data-log on both files, in the
#                                                               form of testdata/kafka-dump/
#
# Not deterministic (cluster id aside, the node writes wall-clock timestamps and random directory ids):
# the goldens are the files one run made and Kafka's own dump of them.
# Needs java 17+ and mvn (see run.sh; $SEGLOG_M2 picks the Maven repository).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
run="interop/kafka/run.sh"
out="testdata/kraft"
"$run" build >/dev/null

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
cat >"$scratch/server.properties" <<EOF
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
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
EOF
"$run" storage format -t c2VnbG9nLWtyYWZ0LWdvbGQ -c "$scratch/server.properties" --standalone >"$scratch/format.out"

meta="$scratch/logs/__cluster_metadata-0"
mkfifo "$scratch/stdin"
"$run" broker "$scratch/server.properties" "$scratch/broker.log" <"$scratch/stdin" >"$scratch/broker.out" 2>&1 &
broker_pid=$!
exec 3>"$scratch/stdin"
# Wait for the broker to serve, then a few seconds more for the metadata log to take records.
for _ in $(seq 1 600); do
  if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null; then
    break
  fi
  sleep 0.2
done
sleep 5
exec 3>&- # end of stdin: the broker shuts down cleanly
wait "$broker_pid"
broker_pid=""

mkdir -p "$out"
cp "$meta/00000000000000000000-0000000000.checkpoint" "$meta/00000000000000000000.log" "$out/"
chmod 644 "$out"/*
args=(--deep-iteration --print-data-log --files "$out/00000000000000000000-0000000000.checkpoint,$out/00000000000000000000.log")
set +e
"$run" dump "${args[@]}" >"$out/metadata.stdout" 2>"$out/metadata.stderr"
status=$?
set -e
echo "metadata $status kafka-dump-log.sh ${args[*]}" >"$out/exit-status.txt"
echo "wrote $out: $(grep -a -c 'LeaderChange\|KRaftVersion\|KRaftVoters\|SnapshotHeader\|SnapshotFooter' "$out/metadata.stdout") KRaft control records dumped"
