package dev.seglog.oracle;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.LogCleanerManager;
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
 * Kafka 4.4's log cleaner on a copy of a partition directory, driven as LogCleanerTest drives it.
 *
 * <pre>
 * Oracle clean &lt;partition-dir&gt; &lt;config-file&gt; &lt;out-dir&gt; &lt;time-ms&gt;[:&lt;first-dirty&gt;]...
 * </pre>
 *
 * The partition directory (named topic-N, as Kafka requires) is copied to a temporary directory and
 * opened with UnifiedLog.create as after a clean shutdown, with the topic config read from the
 * properties file, a clock that reads only what it is set to, and the high watermark moved to the
 * log end offset (as seglog's open sets it). Each pass sets the clock to its time, asks Kafka's
 * LogCleanerManager.cleanableOffsets for the first uncleanable offset (the active segment, the last
 * stable offset, min.compaction.lag.ms), and runs Cleaner.doClean(LogToClean, time) from the first
 * dirty offset (default 0, a whole re-cleaning as LogCleanerTest does), with a dedupe buffer of
 * 16 MiB, so that the map never fills. After pass N, out-dir/passN/ receives the .log, .index,
 * .timeindex and (when it holds entries) .txnindex file of every live segment, the indexes cut to
 * their entries. stdout gets one line per pass: first dirty, first uncleanable and end offset.
 */
final class Compaction {

    private Compaction() {
    }

    /** A clock that moves only when set (Kafka's tests use MockTime, which is not in the jars). */
    private static final class FixedTime implements Time {
        private volatile long nowMs;

        FixedTime(long nowMs) {
            this.nowMs = nowMs;
        }

        void set(long ms) {
            nowMs = ms;
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
            nowMs += ms;
        }
    }

    static int run(String[] args) throws Exception {
        if (args.length < 4) {
            Oracle.ERR.println("usage: Oracle clean <partition-dir> <config-file> <out-dir> <time-ms>[:<first-dirty>]...");
            return 2;
        }
        Path input = Path.of(args[0]);
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(args[1]))) {
            props.load(in);
        }
        Map<String, Object> configs = new HashMap<>();
        props.forEach((k, v) -> configs.put((String) k, v));
        LogConfig config = new LogConfig(configs);
        Path out = Path.of(args[2]);
        List<long[]> passes = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            String[] parts = args[i].split(":");
            passes.add(new long[] {Long.parseLong(parts[0]), parts.length > 1 ? Long.parseLong(parts[1]) : 0L});
        }

        Path scratch = Files.createTempDirectory("seglog-oracle-clean");
        Path dir = scratch.resolve(input.getFileName());
        Files.createDirectories(dir);
        try (Stream<Path> files = Files.list(input)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, dir.resolve(f.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        FixedTime time = new FixedTime(passes.get(0)[0]);
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-oracle-cleaner-");
        scheduler.startup();
        // LogCleanerManager.cleanableOffsets is package-private: called as the cleaner thread calls it.
        Method cleanableOffsets = LogCleanerManager.class.getDeclaredMethod("cleanableOffsets",
            UnifiedLog.class, Optional.class, long.class);
        cleanableOffsets.setAccessible(true);
        try {
            UnifiedLog log = UnifiedLog.create(dir.toFile(), config, 0L, 0L, scheduler, new BrokerTopicStats(), time,
                60 * 60 * 1000, new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), 10 * 60 * 1000,
                new LogDirFailureChannel(1), true, Optional.empty());
            try {
                log.updateHighWatermark(log.logEndOffset());
                // LogCleaner's sizes: a read and a write buffer of half log.cleaner.io.buffer.size, the
                // broker's message.max.bytes as the largest; the rate unbounded.
                Cleaner cleaner = new Cleaner(0, new SkimpyOffsetMap(16 * 1024 * 1024), 256 * 1024, 1048588, 0.9,
                    new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", time), time, tp -> { });
                for (int i = 0; i < passes.size(); i++) {
                    long now = passes.get(i)[0];
                    long firstDirty = passes.get(i)[1];
                    time.set(now);
                    Object offsets = cleanableOffsets.invoke(null, log, Optional.of(firstDirty), now);
                    long dirty = (Long) accessor(offsets, "firstDirtyOffset");
                    long uncleanable = (Long) accessor(offsets, "firstUncleanableDirtyOffset");
                    long end = dirty;
                    if (dirty < uncleanable) {
                        end = cleaner.doClean(new LogToClean(log, dirty, uncleanable, false), now).getKey();
                    }
                    Oracle.OUT.println("pass " + (i + 1) + " at " + now + ": first dirty " + dirty
                        + ", first uncleanable " + uncleanable + ", end offset " + end);
                    save(log, out.resolve("pass" + (i + 1)));
                }
            } finally {
                log.close();
            }
        } finally {
            scheduler.shutdown();
            deleteTree(scratch);
        }
        return 0;
    }

    private static Object accessor(Object target, String name) throws Exception {
        Method m = target.getClass().getDeclaredMethod(name);
        m.setAccessible(true);
        return m.invoke(target);
    }

    /** Copies the live segments' files, each index cut to its entries. */
    private static void save(UnifiedLog log, Path to) throws IOException {
        Files.createDirectories(to);
        for (LogSegment segment : log.logSegments()) {
            copy(segment.log().file(), to, segment.log().sizeInBytes());
            copy(segment.offsetIndexFile(), to, segment.offsetIndex().sizeInBytes());
            copy(segment.timeIndexFile(), to, segment.timeIndex().sizeInBytes());
            File txn = segment.txnIndex().file();
            if (txn.exists() && txn.length() > 0) {
                copy(txn, to, txn.length());
            }
        }
    }

    private static void copy(File from, Path to, long length) throws IOException {
        try (FileChannel src = FileChannel.open(from.toPath(), StandardOpenOption.READ);
             FileChannel dst = FileChannel.open(to.resolve(from.getName()), StandardOpenOption.CREATE,
                 StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            long done = 0;
            while (done < length) {
                done += src.transferTo(done, length - done, dst);
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
