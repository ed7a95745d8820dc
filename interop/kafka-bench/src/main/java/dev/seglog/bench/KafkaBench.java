package dev.seglog.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.OffsetIndex;
import org.apache.kafka.storage.internals.log.OffsetPosition;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;

/**
 * Kafka's side of {@code cargo xtask bench-compare}: the same workloads as the Rust systems
 * (benches/src/bin/bench-compare), on Kafka 4.4.0's own storage classes, with the same sizes, the same
 * random targets (xorshift64 with the same seed), warm-up rounds that are thrown away, and timed rounds
 * whose samples are printed as one JSON document on stdout. The xtask computes medians and ratios.
 *
 * <p>Each round of a lookup workload runs its operations back to back, so the JIT has compiled the loop
 * after the first warm-up round; each append round writes a fresh segment (the previous one deleted first).
 */
public final class KafkaBench {
    static final long BASE_TIMESTAMP = 1_700_000_000_000L;
    static final int FETCH_BYTES = 17 * 1024;
    static final long FSYNC_EVERY = 1 << 20;
    static final double MIB = 1024.0 * 1024.0;

    /** Records of recordBytes (values, no key) in batches of recordsPerBatch. */
    record Shape(String name, int recordBytes, int recordsPerBatch) {
        int batchesFor(long mib) {
            return (int) Math.max(1, (mib << 20) / ((long) recordBytes * recordsPerBatch));
        }

        long payloadBytes(int batches) {
            return (long) batches * recordsPerBatch * recordBytes;
        }
    }

    static final Shape[] SHAPES = {new Shape("1k_x16", 1024, 16), new Shape("100b_x100", 100, 100)};

    /** A prebuilt batch and its last offset. */
    record Batch(long lastOffset, MemoryRecords records) { }

    interface Round {
        long run() throws Exception;
    }

    interface Op {
        long apply(long target) throws Exception;
    }

    final Path dir;
    final long appendMib;
    final long fsyncAppendMib;
    final long datasetMib;
    final int samples;
    final int warmup;
    final int lookups;
    final int reads;
    final long openSegments;
    final String part;
    final List<String> figures = new ArrayList<>();

    KafkaBench(Map<String, String> args) {
        dir = Path.of(required(args, "--dir"));
        appendMib = Long.parseLong(required(args, "--append-mib"));
        fsyncAppendMib = Long.parseLong(required(args, "--fsync-append-mib"));
        datasetMib = Long.parseLong(required(args, "--dataset-mib"));
        samples = Integer.parseInt(required(args, "--samples"));
        warmup = Integer.parseInt(required(args, "--warmup"));
        lookups = Integer.parseInt(required(args, "--lookups"));
        reads = Integer.parseInt(required(args, "--reads"));
        openSegments = Long.parseLong(required(args, "--open-segments"));
        String p = args.remove("--part");
        part = p == null ? "main" : p;
        if (!args.isEmpty()) {
            throw new IllegalArgumentException("unknown flags " + args.keySet());
        }
    }

    /** The command-line flags of these parameters, with --part part. */
    java.util.List<String> args(String part) {
        return java.util.List.of("--dir", dir.toString(), "--append-mib", Long.toString(appendMib),
            "--fsync-append-mib", Long.toString(fsyncAppendMib), "--dataset-mib", Long.toString(datasetMib),
            "--samples", Integer.toString(samples), "--warmup", Integer.toString(warmup), "--lookups",
            Integer.toString(lookups), "--reads", Integer.toString(reads), "--open-segments", Long.toString(openSegments),
            "--part", part);
    }

    static String required(Map<String, String> args, String name) {
        String value = args.remove(name);
        if (value == null) {
            throw new IllegalArgumentException("missing " + name);
        }
        return value;
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            args.put(argv[i], argv[i + 1]);
        }
        if (argv.length % 2 != 0) {
            throw new IllegalArgumentException("every flag needs a value");
        }
        KafkaBench bench = new KafkaBench(args);
        if (!THREADS.isCurrentThreadCpuTimeSupported()) {
            throw new IllegalStateException("this JVM cannot measure a thread's CPU time");
        }
        Files.createDirectories(bench.dir);
        if (bench.part.equals("compact-clean")) {
            System.out.println(new CompactWorkload(bench).cleanChild());
            return;
        }
        if (bench.part.equals("compact")) {
            new CompactWorkload(bench).run();
        } else if (bench.part.equals("main")) {
            for (String group : GROUPS) {
                bench.runGroup(group);
            }
            deleteTree(bench.dir);
        } else if (List.of(GROUPS).contains(bench.part)) {
            bench.runGroup(bench.part);
        } else {
            throw new IllegalArgumentException("unknown --part " + bench.part + " (main, compact, or one of "
                + String.join(", ", GROUPS) + ")");
        }
        System.out.println("{\"system\":\"kafka\",\"version\":\"" + org.apache.kafka.common.utils.internals.AppInfoParser.getVersion()
            + "\",\"figures\":[" + String.join(",", bench.figures) + "]}");
    }

    /** Kafka's defaults: index.interval.bytes 4096, segment.index.bytes 10 MiB, no preallocation. */
    static LogConfig config() {
        return new LogConfig(new HashMap<>());
    }

    static LogSegment freshSegment(Path dir) throws IOException {
        deleteTree(dir);
        Files.createDirectories(dir);
        LogSegment seg = LogSegment.open(dir.toFile(), 0, config(), Time.SYSTEM, false, 0, false, "");
        // the lazy indexes are opened outside the timed part, as on the Rust side
        seg.offsetIndex();
        seg.timeIndex();
        return seg;
    }

    static List<Batch> batches(Shape shape, int count) {
        byte[] value = new byte[shape.recordBytes];
        java.util.Arrays.fill(value, (byte) 'v');
        List<Batch> out = new ArrayList<>(count);
        for (long b = 0; b < count; b++) {
            long base = b * shape.recordsPerBatch;
            SimpleRecord[] records = new SimpleRecord[shape.recordsPerBatch];
            for (int i = 0; i < shape.recordsPerBatch; i++) {
                records[i] = new SimpleRecord(BASE_TIMESTAMP + base + i, null, value);
            }
            out.add(new Batch(base + shape.recordsPerBatch - 1, MemoryRecords.withRecords(base, Compression.NONE, records)));
        }
        return out;
    }

    double[] measure(Round round, java.util.function.LongToDoubleFunction convert) throws Exception {
        for (int i = 0; i < warmup; i++) {
            round.run();
        }
        double[] out = new double[samples];
        for (int i = 0; i < samples; i++) {
            out[i] = convert.applyAsDouble(round.run());
        }
        return out;
    }

    /**
     * As {@link #measure}, but a round that takes longer than {@code capNanos} is the only one: no warm-up
     * is needed for a run that long, and the remaining rounds would only repeat it (Kafka's unclean open
     * of 10,000 segments takes minutes; see docs/benchmarks.md).
     */
    double[] measureCapped(Round round, java.util.function.LongToDoubleFunction convert, long capNanos) throws Exception {
        long first = round.run();
        if (first > capNanos) {
            return new double[] {convert.applyAsDouble(first)};
        }
        for (int i = 1; i < warmup; i++) {
            round.run();
        }
        double[] out = new double[samples];
        for (int i = 0; i < samples; i++) {
            out[i] = convert.applyAsDouble(round.run());
        }
        return out;
    }

    static java.util.function.LongToDoubleFunction mibPerS(long bytes) {
        return nanos -> bytes / MIB / (nanos / 1e9);
    }

    static java.util.function.LongToDoubleFunction nsPerOp(int ops) {
        return nanos -> (double) nanos / ops;
    }

    /** xorshift64, the same sequence as the Rust side's Rng. */
    static final class Rng {
        long state = 0x9e3779b97f4a7c15L;

        long below(long n) {
            state ^= state << 13;
            state ^= state >>> 7;
            state ^= state << 17;
            return Long.remainderUnsigned(state, n);
        }
    }

    static volatile long sink;

    static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();

    /**
     * The CPU time (user and system) this thread has used, in ns. The lookup workloads are timed with it, as
     * on the Rust side: on a shared machine wall time would also count the time spent waiting for a core.
     * The JVM's own threads (JIT, GC) are not counted.
     */
    static long threadCpuNanos() {
        return THREADS.getCurrentThreadCpuTime();
    }

    double[] randomOps(int ops, long count, Op op) throws Exception {
        Rng rng = new Rng();
        return measure(() -> {
            long acc = 0;
            long started = threadCpuNanos();
            for (int i = 0; i < ops; i++) {
                acc += op.apply(rng.below(count));
            }
            long elapsed = threadCpuNanos() - started;
            sink = acc;
            return elapsed;
        }, nsPerOp(ops));
    }

    void figure(String workload, String unit, double[] values, String note) {
        StringBuilder s = new StringBuilder();
        s.append("{\"workload\":\"").append(workload).append("\",\"unit\":\"").append(unit)
            .append("\",\"higher_is_better\":").append(unit.equals("MiB/s")).append(",\"samples\":[");
        for (int i = 0; i < values.length; i++) {
            s.append(i == 0 ? "" : ",").append(values[i]);
        }
        s.append("],\"note\":\"").append(note).append("\"}");
        figures.add(s.toString());
    }

    void append(Shape shape, boolean fsync) throws Exception {
        int count = shape.batchesFor(fsync ? fsyncAppendMib : appendMib);
        List<Batch> batches = batches(shape, count);
        Path appendDir = dir.resolve("append");
        double[] values = measure(() -> {
            LogSegment seg = freshSegment(appendDir);
            long unsynced = 0;
            long started = System.nanoTime();
            for (Batch b : batches) {
                seg.append(b.lastOffset, b.records);
                unsynced += b.records.sizeInBytes();
                if (fsync && unsynced >= FSYNC_EVERY) {
                    seg.flush();
                    unsynced = 0;
                }
            }
            long elapsed = System.nanoTime() - started;
            long appended = 0;
            for (Batch b : batches) {
                appended += b.records.sizeInBytes();
            }
            if (seg.size() != appended) {
                throw new IllegalStateException("the segment holds " + seg.size() + " of " + appended + " bytes");
            }
            seg.deleteIfExists();
            return elapsed;
        }, mibPerS(shape.payloadBytes(count)));
        figure("append_" + shape.name + (fsync ? "_fsync_1m" : ""), "MiB/s", values,
            "LogSegment.append of prebuilt MemoryRecords; flush() every MiB");
    }

    /**
     * The workload groups of --part, in the order --part main runs them; each builds only its own data,
     * so that the xtask can run one group on every system back to back (docs/perf/method.md).
     */
    static final String[] GROUPS = {"append", "segment", "consume", "log_append", "open", "logdir"};

    void runGroup(String group) throws Exception {
        switch (group) {
            case "append" -> runAppend();
            case "segment" -> runSegment();
            default -> new PartitionWorkloads(this).run(group);
        }
    }

    /** The append group: both page-cache shapes, then both with a flush every MiB. */
    void runAppend() throws Exception {
        for (boolean fsync : new boolean[] {false, true}) {
            for (Shape shape : SHAPES) {
                append(shape, fsync);
            }
        }
    }

    /** The segment group: recovery of the dataset segment, then the lookups and reads on it. */
    void runSegment() throws Exception {
        Shape shape = SHAPES[0];
        int count = shape.batchesFor(datasetMib);
        LogSegment seg = freshSegment(dir.resolve("dataset"));
        for (Batch b : batches(shape, count)) {
            seg.append(b.lastOffset, b.records);
        }
        seg.flush();
        long nextOffset = (long) count * shape.recordsPerBatch;
        int size = seg.size();

        Path state = Files.createTempDirectory(dir, "state");
        TopicPartition tp = new TopicPartition("seglog-bench", 0);
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-bench-scheduler-");
        scheduler.startup();
        try {
            ProducerStateManager producerState = new ProducerStateManager(tp, state.toFile(), 60 * 60 * 1000,
                new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), Time.SYSTEM);
            LeaderEpochFileCache epochs = new LeaderEpochFileCache(tp,
                new LeaderEpochCheckpointFile(LeaderEpochCheckpointFile.newFile(state.toFile()), new LogDirFailureChannel(1)),
                scheduler);
            figure("recovery", "MiB/s", measure(() -> {
                long started = System.nanoTime();
                int truncated = seg.recover(producerState, epochs);
                long elapsed = System.nanoTime() - started;
                if (truncated != 0) {
                    throw new IllegalStateException("recovery truncated " + truncated + " bytes");
                }
                return elapsed;
            }, mibPerS(size)), "LogSegment.recover: CRC of every batch, both indexes rebuilt");
        } finally {
            scheduler.shutdown();
        }

        OffsetIndex index = seg.offsetIndex();
        figure("index_lookup", "ns/op", randomOps(lookups, nextOffset, target -> {
            OffsetPosition found = index.lookup(target);
            if (found.offset() > target) {
                throw new IllegalStateException("index floor " + found + " above " + target);
            }
            return found.position();
        }), "OffsetIndex.lookup of a random offset, " + index.entries() + " entries");

        ByteBuffer buf = ByteBuffer.allocateDirect(FETCH_BYTES);
        figure("read_by_offset", "ns/op", randomOps(reads, nextOffset, target -> {
            FetchDataInfo fetch = seg.read(target, FETCH_BYTES, Optional.of((long) size), true);
            if (fetch == null || fetch.fetchOffsetMetadata.messageOffset > target) {
                throw new IllegalStateException("read of " + target + " failed");
            }
            buf.clear();
            ((FileRecords) fetch.records).readInto(buf, 0);
            if (buf.limit() < 61) {
                throw new IllegalStateException("short read of " + target);
            }
            return buf.limit();
        }), "LogSegment.read (index + batch header walk) and a copy of the 17 KiB region");

        figure("lookup_by_timestamp", "ns/op", randomOps(reads, nextOffset, target -> {
            Optional<FileRecords.TimestampAndOffset> found = seg.findOffsetByTimestamp(BASE_TIMESTAMP + target, 0, 1 << 20);
            if (found.isEmpty() || found.get().offset != target) {
                throw new IllegalStateException("timestamp of " + target + " found " + found);
            }
            return found.get().offset;
        }), "LogSegment.findOffsetByTimestamp: time index, offset index, record scan");

        seg.deleteIfExists();
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
