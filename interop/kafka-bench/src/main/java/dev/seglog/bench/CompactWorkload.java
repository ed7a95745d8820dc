package dev.seglog.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * compact_1g on Kafka's Cleaner, in a process of its own (--part compact) so that the peak memory is the
 * cleaner's: the same keyed dataset as the Rust side's compact_system.rs (1 KiB records, every key written ten
 * times), cleaned whole with Cleaner.doClean and the broker's default dedupe buffer (log.cleaner.dedupe.buffer.size
 * 128 MiB, one thread) and io buffer; the answer read back: one record per key, the last one written. The time is
 * measured in this JVM (warmed up); the peak memory in fresh JVMs of the same options that only open a copy and clean
 * it (--part compact-clean), so that the data's building is not counted.
 */
final class CompactWorkload {
    static final int DEDUPE_BYTES = 128 * 1024 * 1024;

    private final KafkaBench bench;

    CompactWorkload(KafkaBench bench) {
        this.bench = bench;
    }

    static MemoryRecords keyedBatch(long base, int count, long keys, byte[] value) {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            byte[] key = String.format("key-%08d", (base + i) % keys).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            records[i] = new SimpleRecord(KafkaBench.BASE_TIMESTAMP + base + i, key, value);
        }
        return MemoryRecords.withRecords(base, Compression.NONE, records);
    }

    UnifiedLog open(Path dir, LogConfig config, KafkaScheduler scheduler) throws Exception {
        return UnifiedLog.create(dir.toFile(), config, 0L, 0L, scheduler, new BrokerTopicStats(), Time.SYSTEM,
            60 * 60 * 1000, new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), 10 * 60 * 1000,
            new LogDirFailureChannel(1), true, Optional.empty());
    }

    static void copyDir(Path from, Path to) throws Exception {
        KafkaBench.deleteTree(to);
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    LogConfig config() {
        Map<String, Object> props = new HashMap<>();
        props.put("cleanup.policy", "compact");
        props.put("segment.bytes", Long.toString(Math.min(1L << 30, Math.max(1L << 20, (bench.datasetMib << 20) / 8))));
        return new LogConfig(props);
    }

    long records() {
        long count = Math.max(160, (bench.datasetMib << 20) / 1024);
        return count - count % 160;
    }

    Path source() {
        return bench.dir.resolve("compact-source").resolve("bench-0");
    }

    Path work() {
        return bench.dir.resolve("compact").resolve("bench-0");
    }

    static Cleaner cleaner() throws Exception {
        return new Cleaner(0, new SkimpyOffsetMap(DEDUPE_BYTES), 256 * 1024, 1048588, 0.9,
            new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", Time.SYSTEM), Time.SYSTEM, tp -> { });
    }

    interface Clean<T> {
        T clean(UnifiedLog log) throws Exception;
    }

    /** One round: copies the source, opens the copy, cleans it through clean, checks the answer. */
    <T> T round(KafkaScheduler scheduler, Clean<T> clean) throws Exception {
        long records = records();
        long keys = records / 10;
        copyDir(source(), work());
        UnifiedLog log = open(work(), config(), scheduler);
        log.updateHighWatermark(log.logEndOffset());
        T measured = clean.clean(log);
        long kept = 0;
        long lowest = Long.MAX_VALUE;
        for (LogSegment segment : log.logSegments()) {
            for (RecordBatch batch : segment.log().batches()) {
                for (Record record : batch) {
                    kept++;
                    lowest = Math.min(lowest, record.offset());
                }
            }
        }
        if (kept != keys || lowest != records - keys) {
            throw new IllegalStateException("cleaning kept " + kept + " records from " + lowest);
        }
        log.close();
        return measured;
    }

    /** --part compact-clean: a fresh JVM that cleans one copy of the source and prints its PeakMemory. */
    String cleanChild() throws Exception {
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-bench-compact-");
        scheduler.startup();
        try {
            return round(scheduler, log -> PeakMemory.during(() -> {
                cleaner().doClean(new LogToClean(log, 0L, log.activeSegment().baseOffset(), false),
                    System.currentTimeMillis());
                return null;
            })).toJson();
        } finally {
            scheduler.shutdown();
        }
    }

    /** The peak memory of one cleaning in a fresh JVM of the same options (the heap's included). */
    PeakMemory peakInFreshJvm() throws Exception {
        java.util.List<String> command = new java.util.ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(KafkaBench.class.getName());
        command.addAll(bench.args("compact-clean"));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(child.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (child.waitFor() != 0) {
            throw new IllegalStateException("the cleaning JVM failed: " + child.exitValue());
        }
        return PeakMemory.fromJson(out.trim());
    }

    void run() throws Exception {
        long count = records();
        long keys = count / 10;
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-bench-compact-");
        scheduler.startup();
        try {
            Path source = source();
            Files.createDirectories(source);
            byte[] value = new byte[1024];
            java.util.Arrays.fill(value, (byte) 'v');
            UnifiedLog built = open(source, config(), scheduler);
            for (long base = 0; base < count; base += 16) {
                built.appendAsFollower(PartitionWorkloads.epoch0(keyedBatch(base, 16, keys, value)), 0);
            }
            built.roll();
            built.close();
            Cleaner cleaner = cleaner();
            bench.figure("compact_1g", "ms", bench.measure(() -> round(scheduler, log -> {
                long started = System.nanoTime();
                cleaner.doClean(new LogToClean(log, 0L, log.activeSegment().baseOffset(), false), System.currentTimeMillis());
                return System.nanoTime() - started;
            }), nanos -> nanos / 1e6), "Cleaner.doClean of " + count + " records, " + keys + " keys, dedupe buffer 128 MiB");
            PeakMemory[] peaks = new PeakMemory[bench.samples];
            for (int i = 0; i < peaks.length; i++) {
                peaks[i] = peakInFreshJvm();
            }
            bench.figure("compact_1g_peak_memory", "MiB", java.util.Arrays.stream(peaks).mapToDouble(p -> p.hwmMib).toArray(),
                "VmHWM of a fresh JVM during Cleaner.doClean alone (reset when it starts; the offset map allocated in it; heap -Xms2g, touched pages only)");
            bench.figure("compact_1g_peak_anon", "MiB", java.util.Arrays.stream(peaks).mapToDouble(p -> p.anonMib).toArray(),
                "largest RssAnon sampled every 2 ms during Cleaner.doClean (heap, metaspace, code, stacks)");
            bench.figure("compact_1g_peak_file", "MiB", java.util.Arrays.stream(peaks).mapToDouble(p -> p.fileMib).toArray(),
                "largest RssFile sampled every 2 ms during Cleaner.doClean (mapped file pages: the JVM, jars, indexes)");
            KafkaBench.deleteTree(bench.dir.resolve("compact"));
            KafkaBench.deleteTree(bench.dir.resolve("compact-source"));
        } finally {
            scheduler.shutdown();
        }
    }
}
