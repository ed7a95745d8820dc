package dev.seglog.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.Pipe;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * The partition-level workloads on Kafka's UnifiedLog, as the Rust side's partition_system.rs runs them on
 * seglog's PartitionLog: sequential consumption zero-copy into a drained pipe and decoded, appendAsLeader of
 * idempotent batches, and opening a log of many segments after a clean and an unclean shutdown.
 */
final class PartitionWorkloads {
    static final int FETCH_BYTES = 1 << 20;
    static final long PRODUCER_ID = 1000;

    private final KafkaBench bench;
    private final KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-bench-log-");

    PartitionWorkloads(KafkaBench bench) {
        this.bench = bench;
    }

    /** A follower's batches carry the leader's epoch (Kafka's appendAsFollower refuses -1). */
    static MemoryRecords epoch0(MemoryRecords records) {
        for (MutableRecordBatch batch : records.batches()) {
            batch.setPartitionLeaderEpoch(0);
        }
        return records;
    }

    static Path freshDir(Path parent) throws IOException {
        KafkaBench.deleteTree(parent);
        Files.createDirectories(parent);
        return parent.resolve("bench-0");
    }

    UnifiedLog open(Path dir, LogConfig config, long recoveryPoint, boolean clean) throws IOException {
        return UnifiedLog.create(dir.toFile(), config, 0L, recoveryPoint, scheduler, new BrokerTopicStats(), Time.SYSTEM,
            60 * 60 * 1000, new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), 10 * 60 * 1000,
            new LogDirFailureChannel(1), clean, Optional.empty());
    }

    /**
     * The far end of a zero-copy fetch, the same as the Rust side's (pipe_drain.rs): a FIFO whose reader is
     * the native drainer process {@code seglog-bench-compare drain} (path in $SEGLOG_BENCH_DRAINER), which
     * enlarges the pipe to 1 MiB and splices it into /dev/null. A Java thread reading a Pipe would copy every
     * byte; the writer here is a FileChannel on the FIFO, so FileRecords.writeTo's transferTo is sendfile.
     */
    static final class Drain implements TransferableChannel {
        final Path fifo;
        final Process drainer;
        final java.io.BufferedReader said;
        final FileChannel sink;
        long finishedAt;
        long drainerCpuNanos;

        Drain(Path dir) throws Exception {
            fifo = dir.resolve("drain.fifo");
            Files.deleteIfExists(fifo);
            Process mkfifo = new ProcessBuilder("mkfifo", "-m", "600", fifo.toString()).inheritIO().start();
            if (mkfifo.waitFor() != 0) {
                throw new IOException("mkfifo " + fifo + " failed");
            }
            String exe = System.getenv("SEGLOG_BENCH_DRAINER");
            if (exe == null) {
                throw new IllegalStateException("SEGLOG_BENCH_DRAINER is not set (run.sh sets it)");
            }
            String mode = System.getenv().getOrDefault("SEGLOG_BENCH_DRAIN_MODE", "splice");
            drainer = new ProcessBuilder(exe, "drain", "--fifo", fifo.toString(), "--mode", mode)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            said = new java.io.BufferedReader(new java.io.InputStreamReader(drainer.getInputStream()));
            // opening a FIFO for writing waits for its reader: only once the drainer is about to open it
            String open = said.readLine();
            if (!"open".equals(open)) {
                throw new IllegalStateException("the drainer said " + open);
            }
            sink = FileChannel.open(fifo, java.nio.file.StandardOpenOption.WRITE);
            String ready = said.readLine();
            if (!"ready".equals(ready)) {
                throw new IllegalStateException("the drainer said " + ready);
            }
        }

        /**
         * Closes the write end, waits for the drainer's count; finishedAt is when it came (before the exit),
         * in the round's clock (see {@link #clock}), drainerCpuNanos the drainer's CPU time.
         */
        long finish() throws Exception {
            sink.close();
            String said = this.said.readLine();
            finishedAt = clock();
            if (drainer.waitFor() != 0 || said == null) {
                throw new IllegalStateException("the drainer failed");
            }
            Files.delete(fifo);
            String[] parts = said.trim().split(" ");
            drainerCpuNanos = Long.parseLong(parts[1]);
            return Long.parseLong(parts[0]);
        }

        @Override public boolean hasPendingWrites() { return false; }
        @Override public long transferFrom(FileChannel file, long position, long count) throws IOException {
            return file.transferTo(position, count, sink);
        }
        @Override public int write(ByteBuffer src) throws IOException { return sink.write(src); }
        @Override public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            return sink.write(srcs, offset, length);
        }
        @Override public long write(ByteBuffer[] srcs) throws IOException { return sink.write(srcs); }
        @Override public boolean isOpen() { return sink.isOpen(); }
        @Override public void close() throws IOException { sink.close(); }
    }

    /** SEGLOG_BENCH_CPU_CLOCK=1: the consume workloads in CPU time, as on the Rust side (docs/perf/consume.md). */
    static final boolean CPU_CLOCK = "1".equals(System.getenv("SEGLOG_BENCH_CPU_CLOCK"));

    /** The consume rounds' clock: wall time, or this thread's CPU time under CPU_CLOCK. */
    static long clock() {
        return CPU_CLOCK ? KafkaBench.THREADS.getCurrentThreadCpuTime() : System.nanoTime();
    }

    void consumeSequential(UnifiedLog log, int batchLen) throws Exception {
        long end = log.logEndOffset();
        long size = log.size();
        int per = KafkaBench.SHAPES[0].recordsPerBatch();
        bench.figure("consume_sequential", "MiB/s", bench.measure(() -> {
            Drain drain = new Drain(bench.dir);
            long started = clock();
            long offset = 0;
            long sent = 0;
            long whole = 0;
            while (offset < end) {
                FetchDataInfo fetch = log.read(offset, FETCH_BYTES, FetchIsolation.HIGH_WATERMARK, true);
                if (fetch.fetchOffsetMetadata.messageOffset != offset) {
                    throw new IllegalStateException("fetch at " + offset + " started at " + fetch.fetchOffsetMetadata);
                }
                FileRecords records = (FileRecords) fetch.records;
                int length = records.sizeInBytes();
                int done = 0;
                while (done < length) {
                    done += records.writeTo(drain, done, length - done);
                }
                // a fetch may end in part of a batch, which the next one sends again
                if (length < batchLen) {
                    throw new IllegalStateException("fetch at " + offset + ": " + length + " bytes");
                }
                sent += length;
                whole += (long) (length / batchLen) * batchLen;
                offset += (long) (length / batchLen) * per;
            }
            long drained = drain.finish();
            long elapsed = drain.finishedAt - started + (CPU_CLOCK ? drain.drainerCpuNanos : 0);
            if (drained != sent || whole != size || offset != end) {
                throw new IllegalStateException("sent " + sent + " (drained " + drained + ") of " + size + " up to " + offset);
            }
            return elapsed;
        }, KafkaBench.mibPerS(size)), "UnifiedLog.read of 1 MiB fetches from offset 0 to the end (the next from the last whole batch), each sent with FileRecords.writeTo (FileChannel.transferTo, sendfile) into a 1 MiB FIFO that a drainer process splices to /dev/null");
    }

    void consumeRecords(UnifiedLog log, long payload) throws Exception {
        long end = log.logEndOffset();
        long size = log.size();
        ByteBuffer buf = ByteBuffer.allocate(2 * FETCH_BYTES);
        bench.figure("consume_records", "MiB/s", bench.measure(() -> {
            long started = clock();
            long offset = 0;
            long values = 0;
            while (offset < end) {
                FetchDataInfo fetch = log.read(offset, FETCH_BYTES, FetchIsolation.HIGH_WATERMARK, true);
                buf.clear();
                ((FileRecords) fetch.records).readInto(buf, 0);
                for (MutableRecordBatch batch : MemoryRecords.readableRecords(buf).batches()) {
                    batch.ensureValid();
                    for (Record record : batch) {
                        if (record.offset() != offset) {
                            throw new IllegalStateException("record " + record.offset() + " at " + offset);
                        }
                        // as the consumer's ByteArrayDeserializer: key and value copied out
                        if (record.hasKey()) {
                            values += org.apache.kafka.common.utils.Utils.toArray(record.key()).length;
                        }
                        if (record.hasValue()) {
                            values += org.apache.kafka.common.utils.Utils.toArray(record.value()).length;
                        }
                        offset++;
                    }
                }
            }
            long elapsed = clock() - started;
            if (offset != end || values != payload) {
                throw new IllegalStateException("decoded " + offset + " of " + end + ", " + values + " of " + payload);
            }
            return elapsed;
        }, KafkaBench.mibPerS(size)), "UnifiedLog.read of 1 MiB fetches, FileRecords.readInto, MemoryRecords batches (ensureValid: CRC) and every record's offset, key and value copied out");
    }

    /**
     * count idempotent batches of shape as a producer sends them (the Rust side's idempotent_batches): producer
     * PRODUCER_ID, epoch 0, sequences counting up from 0, record i of batch b stamped BASE_TIMESTAMP + b * per + i.
     */
    static List<ByteBuffer> idempotentBatches(KafkaBench.Shape shape, int count) {
        byte[] value = new byte[shape.recordBytes()];
        java.util.Arrays.fill(value, (byte) 'v');
        List<ByteBuffer> batches = new ArrayList<>(count);
        int per = shape.recordsPerBatch();
        for (int b = 0; b < count; b++) {
            SimpleRecord[] records = new SimpleRecord[per];
            for (int i = 0; i < per; i++) {
                records[i] = new SimpleRecord(KafkaBench.BASE_TIMESTAMP + (long) b * per + i, null, value);
            }
            batches.add(MemoryRecords.withIdempotentRecords(Compression.NONE, PRODUCER_ID, (short) 0, b * per, records).buffer());
        }
        return batches;
    }

    void logAppend() throws Exception {
        KafkaBench.Shape shape = KafkaBench.SHAPES[0];
        int count = shape.batchesFor(bench.appendMib);
        int per = shape.recordsPerBatch();
        List<ByteBuffer> batches = idempotentBatches(shape, count);
        Map<String, Object> props = new HashMap<>();
        props.put("segment.bytes", Long.toString(Math.min(1L << 30, Math.max(1L << 20, (bench.appendMib << 20) / 8))));
        LogConfig config = new LogConfig(props);
        Path parent = bench.dir.resolve("log_append");
        bench.figure("log_append", "MiB/s", bench.measure(() -> {
            UnifiedLog log = open(freshDir(parent), config, 0L, true);
            List<MemoryRecords> copies = new ArrayList<>(count);
            for (ByteBuffer b : batches) {
                ByteBuffer copy = ByteBuffer.allocate(b.remaining());
                copy.put(b.duplicate()).flip();
                copies.add(MemoryRecords.readableRecords(copy));
            }
            long started = System.nanoTime();
            for (int i = 0; i < count; i++) {
                LogAppendInfo info = log.appendAsLeader(copies.get(i), 0);
                if (info.firstOffset() != (long) i * per) {
                    throw new IllegalStateException("batch " + i + " appended at " + info.firstOffset());
                }
            }
            long elapsed = System.nanoTime() - started;
            if (log.logEndOffset() != (long) count * per || log.numberOfSegments() < 8) {
                throw new IllegalStateException("log end " + log.logEndOffset() + " in " + log.numberOfSegments() + " segments");
            }
            log.close();
            KafkaBench.deleteTree(parent);
            return elapsed;
        }, KafkaBench.mibPerS(shape.payloadBytes(count))), "UnifiedLog.appendAsLeader of idempotent 1 KiB x 16 batches (one producer): offsets assigned, batches validated, producer state, indexes, a roll every 1/8 of the data");
    }

    /** A round of opening that takes longer than this is measured once (see measureCapped). */
    static final long OPEN_CAP_NANOS = 60_000_000_000L;

    void open(Path dir, long end, boolean clean) throws Exception {
        int segments = (int) bench.openSegments;
        int per = KafkaBench.SHAPES[0].recordsPerBatch();
        long recoveryPoint = clean ? end : (long) (segments / 2) * per;
        LogConfig config = new LogConfig(new HashMap<>());
        bench.figure(clean ? "open_10k_clean" : "open_10k_unclean", "ms", bench.measureCapped(() -> {
            long started = System.nanoTime();
            UnifiedLog log = open(dir, config, recoveryPoint, clean);
            long elapsed = System.nanoTime() - started;
            if (log.logEndOffset() != end || log.numberOfSegments() != segments) {
                throw new IllegalStateException("opened " + log.numberOfSegments() + " segments up to " + log.logEndOffset());
            }
            log.close();
            return elapsed;
        }, nanos -> nanos / 1e6, OPEN_CAP_NANOS), "UnifiedLog.create (LogLoader) of " + segments + " segments after "
            + (clean ? "a clean shutdown" : "an unclean shutdown, recovery point halfway (the upper half recovered)")
            + "; a first round over 60 s is the only sample");
    }

    /** The consume group: consumeSequential and consumeRecords on one dataset. */
    void runConsume() throws Exception {
        KafkaBench.Shape shape = KafkaBench.SHAPES[0];
        int count = shape.batchesFor(bench.datasetMib);
        List<KafkaBench.Batch> batches = KafkaBench.batches(shape, count);
        Path consumeParent = bench.dir.resolve("consume"); // removed by run(group)
        UnifiedLog log = open(freshDir(consumeParent), new LogConfig(new HashMap<>()), 0L, true);
        for (KafkaBench.Batch b : batches) {
            log.appendAsFollower(epoch0(b.records()), 0);
        }
        log.flush(false);
        log.updateHighWatermark(log.logEndOffset());
        consumeSequential(log, batches.get(0).records().sizeInBytes());
        consumeRecords(log, shape.payloadBytes(count));
        log.close();
    }

    /** The open group: open_10k_clean and open_10k_unclean on one dataset. */
    void runOpen() throws Exception {
        KafkaBench.Shape shape = KafkaBench.SHAPES[0];
        int segments = (int) bench.openSegments;
        Path openParent = bench.dir.resolve("open"); // removed by run(group)
        Path dir = freshDir(openParent);
        UnifiedLog built = open(dir, new LogConfig(new HashMap<>()), 0L, true);
        List<KafkaBench.Batch> one = KafkaBench.batches(shape, segments);
        for (int i = 0; i < segments; i++) {
            built.appendAsFollower(epoch0(one.get(i).records()), 0);
            if (i + 1 < segments) {
                built.roll();
            }
        }
        built.close();
        long end = (long) segments * shape.recordsPerBatch();
        open(dir, end, true);
        open(dir, end, false);
    }

    /**
     * One of the partition-level groups (consume, log_append, open, logdir), with the scheduler running. Its
     * directory is removed once the scheduler has stopped: a log's recovery may leave a leader-epoch checkpoint
     * write queued on it, which would race with the removal (a bench run failed on that race once in about
     * eight unclean opens).
     */
    void run(String group) throws Exception {
        scheduler.startup();
        try {
            switch (group) {
                case "consume" -> runConsume();
                case "log_append" -> logAppend();
                case "open" -> runOpen();
                case "logdir" -> new RecoverLogDir(bench).run(scheduler);
                default -> throw new IllegalArgumentException("unknown --part " + group);
            }
        } finally {
            scheduler.shutdown();
        }
        KafkaBench.deleteTree(bench.dir.resolve(group));
    }
}
