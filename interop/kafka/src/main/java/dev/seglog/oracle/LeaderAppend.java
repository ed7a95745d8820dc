package dev.seglog.oracle;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka 4.4's leader append, offline: each producer batch of a file appended to a new partition
 * directory through UnifiedLog.appendAsLeader (LogValidator, with the topic config of a properties
 * file), as a broker's ReplicaManager appends a produce request.
 *
 * <pre>
 * Oracle leader-append &lt;batches-file&gt; &lt;config-file&gt; &lt;partition-dir&gt; &lt;leader-epoch&gt; &lt;time-ms&gt;
 * </pre>
 *
 * The batches file holds RecordBatch v2 batches back to back, each one request. The partition
 * directory (named topic-N, not existing yet) is created; the clock reads time-ms throughout. The
 * log is flushed and closed, so the directory holds the .log Kafka wrote. stdout gets one line per
 * append: first offset, last offset, max timestamp.
 */
final class LeaderAppend {

    private LeaderAppend() {
    }

    /** A clock that reads one time. */
    private static final class FixedTime implements Time {
        private final long nowMs;

        FixedTime(long nowMs) {
            this.nowMs = nowMs;
        }

        @Override
        public long milliseconds() {
            return nowMs;
        }

        @Override
        public long nanoseconds() {
            return nowMs * 1_000_000L;
        }

        @Override
        public void sleep(long ms) {
        }
    }

    static int run(String[] args) throws Exception {
        if (args.length != 5) {
            Oracle.ERR.println("usage: Oracle leader-append <batches-file> <config-file> <partition-dir> <leader-epoch> <time-ms>");
            return 2;
        }
        ByteBuffer input = ByteBuffer.wrap(Files.readAllBytes(Path.of(args[0])));
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(args[1]))) {
            props.load(in);
        }
        Map<String, Object> configs = new HashMap<>();
        props.forEach((k, v) -> configs.put((String) k, v));
        LogConfig config = new LogConfig(configs);
        Path dir = Path.of(args[2]);
        int leaderEpoch = Integer.parseInt(args[3]);
        Time time = new FixedTime(Long.parseLong(args[4]));
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-oracle-append-");
        scheduler.startup();
        try {
            UnifiedLog log = UnifiedLog.create(dir.toFile(), config, 0L, 0L, scheduler, new BrokerTopicStats(), time,
                60 * 60 * 1000, new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), 10 * 60 * 1000,
                new LogDirFailureChannel(1), true, Optional.empty());
            try {
                while (input.remaining() >= 12) {
                    int size = 12 + input.getInt(input.position() + 8);
                    ByteBuffer one = input.slice(input.position(), size);
                    input.position(input.position() + size);
                    var info = log.appendAsLeader(MemoryRecords.readableRecords(one), leaderEpoch);
                    Oracle.OUT.println(info.firstOffset() + " " + info.lastOffset() + " " + info.maxTimestamp());
                }
                log.flush(true);
            } finally {
                log.close();
            }
        } finally {
            scheduler.shutdown();
        }
        return 0;
    }
}
