package dev.seglog.bench;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * recover_logdir on Kafka: LogManager.loadLogs's procedure for one log directory after an unclean shutdown (no
 * clean-shutdown marker, no recovery-point checkpoint: every segment recovered), as the Rust side's
 * logdir_system.rs does with LogDir::open. LogManager itself lives in Kafka's core (Scala) jar; this does what its
 * loadLogs does per directory: a pool of num.recovery.threads.per.data.dir threads (Kafka 4's default, 2), one
 * UnifiedLog.create per partition with hadCleanShutdown false and the checkpointed recovery point (none: 0).
 */
final class RecoverLogDir {
    static final int PARTITIONS = 20;
    static final int THREADS = 2;

    private final KafkaBench bench;

    RecoverLogDir(KafkaBench bench) {
        this.bench = bench;
    }

    static void makeUnclean(Path root) throws Exception {
        try (Stream<Path> entries = Files.list(root)) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                if (Files.isDirectory(entry)) {
                    try (Stream<Path> files = Files.list(entry)) {
                        for (Path f : (Iterable<Path>) files::iterator) {
                            if (f.getFileName().toString().endsWith(".snapshot")) {
                                Files.delete(f);
                            }
                        }
                    }
                } else {
                    Files.delete(entry);
                }
            }
        }
    }

    void run(KafkaScheduler scheduler) throws Exception {
        runOne(scheduler, false);
        runOne(scheduler, true);
    }

    /**
     * recover_logdir, or with idempotent recover_logdir_idempotent: the same directory with each partition written
     * by one idempotent producer (appended as a leader), so that recovery also rebuilds producer state.
     */
    private void runOne(KafkaScheduler scheduler, boolean idempotent) throws Exception {
        String workload = idempotent ? "recover_logdir_idempotent" : "recover_logdir";
        KafkaBench.Shape shape = KafkaBench.SHAPES[0];
        long mib = Math.max(1, bench.datasetMib * 50 / 1024);
        int count = shape.batchesFor(mib);
        long end = (long) count * shape.recordsPerBatch();
        Path root = bench.dir.resolve("logdir").resolve(workload);
        KafkaBench.deleteTree(root);
        LogConfig config = new LogConfig(new HashMap<>());
        for (int p = 0; p < PARTITIONS; p++) {
            Path dir = root.resolve("bench-" + p);
            Files.createDirectories(dir);
            UnifiedLog log = create(dir, config, scheduler);
            if (idempotent) {
                for (ByteBuffer b : PartitionWorkloads.idempotentBatches(shape, count)) {
                    log.appendAsLeader(MemoryRecords.readableRecords(b), 0);
                }
            } else {
                for (KafkaBench.Batch b : KafkaBench.batches(shape, count)) {
                    log.appendAsFollower(PartitionWorkloads.epoch0(b.records()), 0);
                }
            }
            log.close();
        }
        bench.figure(workload, "ms", bench.measure(() -> {
            makeUnclean(root);
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            long started = System.nanoTime();
            List<Future<UnifiedLog>> loading = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                Path dir = root.resolve("bench-" + p);
                loading.add(pool.submit(() -> create(dir, config, scheduler)));
            }
            List<UnifiedLog> logs = new ArrayList<>();
            for (Future<UnifiedLog> f : loading) {
                logs.add(f.get());
            }
            long elapsed = System.nanoTime() - started;
            pool.shutdown();
            for (UnifiedLog log : logs) {
                if (log.logEndOffset() != end) {
                    throw new IllegalStateException(log.topicPartition() + " ends at " + log.logEndOffset() + ", not " + end);
                }
                log.close();
            }
            return elapsed;
        }, nanos -> nanos / 1e6), "LogManager.loadLogs's procedure after an unclean shutdown: " + PARTITIONS
            + " partitions of " + mib + " MiB" + (idempotent ? " each written by one idempotent producer" : "")
            + ", every segment recovered (UnifiedLog.create, recovery point 0), "
            + THREADS + " recovery threads (Kafka 4's default)");
        // root is removed by PartitionWorkloads.run once the scheduler has stopped
    }

    static UnifiedLog create(Path dir, LogConfig config, KafkaScheduler scheduler) throws Exception {
        return UnifiedLog.create(dir.toFile(), config, 0L, 0L, scheduler, new BrokerTopicStats(), Time.SYSTEM,
            60 * 60 * 1000, new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), 10 * 60 * 1000,
            new LogDirFailureChannel(1), false, Optional.empty());
    }
}
