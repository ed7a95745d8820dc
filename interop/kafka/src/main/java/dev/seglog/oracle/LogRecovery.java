package dev.seglog.oracle;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Optional;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka 4.4's own load of one partition directory, in place, as a broker's LogManager loads it
 * after an unclean shutdown, but with no replica manager around it: UnifiedLog.create with
 * lastShutdownClean=false and the given recovery point and log start offset (LogLoader recovers
 * from the recovery point, rebuilds the leader epoch cache from the recovered batches and truncates
 * it to the log end), then close. No leader is elected, so no leader epoch is added.
 *
 * <pre>
 * Oracle unified-recover &lt;partition-dir&gt; &lt;recovery-point&gt; &lt;log-start-offset&gt;
 * </pre>
 *
 * stdout gets one line: the log end offset and the leader epoch cache's entries after the load.
 */
final class LogRecovery {

    private LogRecovery() {
    }

    static int run(String[] args) throws Exception {
        if (args.length != 3) {
            Oracle.ERR.println("usage: Oracle unified-recover <partition-dir> <recovery-point> <log-start-offset>");
            return 2;
        }
        Path dir = Path.of(args[0]);
        long recoveryPoint = Long.parseLong(args[1]);
        long logStartOffset = Long.parseLong(args[2]);
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-oracle-recover-");
        scheduler.startup();
        try {
            UnifiedLog log = UnifiedLog.create(dir.toFile(), new LogConfig(new HashMap<>()), logStartOffset,
                recoveryPoint, scheduler, new BrokerTopicStats(), Time.SYSTEM, 60 * 60 * 1000,
                new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), 10 * 60 * 1000,
                new LogDirFailureChannel(1), false, Optional.empty());
            try {
                Oracle.OUT.println("log end offset " + log.logEndOffset() + ", epochs "
                    + log.leaderEpochCache().epochEntries());
            } finally {
                log.close();
            }
        } finally {
            scheduler.shutdown();
        }
        return 0;
    }
}
