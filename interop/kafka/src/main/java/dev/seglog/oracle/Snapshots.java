package dev.seglog.oracle;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.CompletedTxn;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;
import org.apache.kafka.storage.internals.log.ProducerAppendInfo;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;

/**
 * {@code Oracle snapshot <dir> <script>}: drives Kafka's own ProducerStateManager (partition test-0, producer
 * expiry 86400000 ms) with the steps of a script and prints one line per step on stdout, so seglog's producer
 * state can be compared with Kafka's, step by step and snapshot file by snapshot file. Snapshots go to dir.
 *
 * <pre>
 * data &lt;origin&gt; &lt;pid&gt; &lt;epoch&gt; &lt;firstSeq&gt; &lt;lastSeq&gt; &lt;firstOffset&gt; &lt;lastOffset&gt; &lt;timestamp&gt; &lt;transactional 0|1&gt;
 *     prepareUpdate, appendDataBatch, update; prints "ok" or "error &lt;exception class&gt;: &lt;message&gt;"
 * marker &lt;origin&gt; &lt;pid&gt; &lt;epoch&gt; &lt;offset&gt; &lt;timestamp&gt; &lt;commit|abort&gt; &lt;coordinatorEpoch&gt; &lt;transactionVersion&gt;
 *     appendEndTxnMarker, update, then for a completed transaction lastStableOffset and completeTxn;
 *     prints "ok", "completed &lt;pid&gt; &lt;first&gt; &lt;last&gt; &lt;aborted&gt; lso &lt;lso&gt;" or "error ..."
 * end &lt;offset&gt;       updateMapEndOffset; prints "ok"
 * hw &lt;offset&gt;        onHighWatermarkUpdated; prints "ok"
 * expire &lt;nowMs&gt;     removeExpiredProducers; prints "ok"
 * snapshot           takeSnapshot; prints "snapshot &lt;file name&gt;" or "snapshot none"
 * state              prints "state fuo &lt;first unstable offset or none&gt; producers &lt;count&gt;"
 * </pre>
 * origin is client, coordinator or replication. Blank lines and lines starting with # are skipped.
 */
final class Snapshots {

    private Snapshots() {
    }

    static int run(String[] args) throws IOException {
        if (args.length != 2) {
            Oracle.ERR.println("usage: Oracle snapshot <dir> <script>");
            return 2;
        }
        File dir = new File(args[0]);
        ProducerStateManager psm = new ProducerStateManager(new TopicPartition("test", 0), dir, 60000,
                new ProducerStateManagerConfig(86400000, false), Time.SYSTEM);
        List<String> lines = Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8);
        for (String line : lines) {
            String trimmed = line.trim();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            String[] f = trimmed.split("\\s+");
            try {
                Oracle.OUT.println(step(psm, f));
            } catch (RuntimeException e) {
                Oracle.OUT.println("error " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        return 0;
    }

    private static AppendOrigin origin(String s) {
        switch (s) {
            case "client":
                return AppendOrigin.CLIENT;
            case "coordinator":
                return AppendOrigin.COORDINATOR;
            case "replication":
                return AppendOrigin.REPLICATION;
            default:
                throw new IllegalArgumentException("unknown origin " + s);
        }
    }

    private static String step(ProducerStateManager psm, String[] f) throws IOException {
        switch (f[0]) {
            case "data": {
                long pid = Long.parseLong(f[2]);
                ProducerAppendInfo info = psm.prepareUpdate(pid, origin(f[1]));
                info.appendDataBatch(Short.parseShort(f[3]), Integer.parseInt(f[4]), Integer.parseInt(f[5]),
                        Long.parseLong(f[8]), new LogOffsetMetadata(Long.parseLong(f[6])), Long.parseLong(f[7]),
                        f[9].equals("1"));
                psm.update(info);
                return "ok";
            }
            case "marker": {
                long pid = Long.parseLong(f[2]);
                ProducerAppendInfo info = psm.prepareUpdate(pid, origin(f[1]));
                ControlRecordType type = f[6].equals("commit") ? ControlRecordType.COMMIT : ControlRecordType.ABORT;
                Optional<CompletedTxn> done = info.appendEndTxnMarker(
                        new EndTransactionMarker(type, Integer.parseInt(f[7])), Short.parseShort(f[3]),
                        Long.parseLong(f[4]), Long.parseLong(f[5]), Short.parseShort(f[8]));
                psm.update(info);
                if (done.isEmpty()) {
                    return "ok";
                }
                CompletedTxn txn = done.get();
                long lso = psm.lastStableOffset(txn);
                psm.completeTxn(txn);
                return "completed " + txn.producerId() + " " + txn.firstOffset() + " " + txn.lastOffset() + " "
                        + txn.isAborted() + " lso " + lso;
            }
            case "end":
                psm.updateMapEndOffset(Long.parseLong(f[1]));
                return "ok";
            case "hw":
                psm.onHighWatermarkUpdated(Long.parseLong(f[1]));
                return "ok";
            case "expire":
                psm.removeExpiredProducers(Long.parseLong(f[1]));
                return "ok";
            case "snapshot":
                return "snapshot " + psm.takeSnapshot(true).map(File::getName).orElse("none");
            case "state":
                return "state fuo " + psm.firstUnstableOffset().map(o -> Long.toString(o.messageOffset)).orElse("none")
                        + " producers " + psm.activeProducers().size();
            default:
                throw new IllegalArgumentException("unknown step " + f[0]);
        }
    }
}
