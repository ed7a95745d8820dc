package dev.seglog.oracle;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.CloseableIterator;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.OffsetIndex;
import org.apache.kafka.storage.internals.log.OffsetPosition;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.TimeIndex;
import org.apache.kafka.storage.internals.log.TimestampOffset;

/**
 * The oracle of {@code cargo xtask damage-matrix}: Kafka's own classes read each case's partition
 * directory, independently of seglog's decoder, and say what the bytes hold.
 *
 * <pre>
 * Oracle matrix &lt;list-file&gt; &lt;index-interval-bytes&gt;
 *     For each partition directory listed (one a line), one JSON line on stdout:
 *     {"dir", "segments": [{"file", "base", "size",
 *        "batches": [{"pos", "size", "base", "last", "magic", "count", "maxTs",
 *                     "valid": null or the ensureValid error,
 *                     "records": [{"o", "t", "k", "v"}] (base64, null for null),
 *                     "recordsError": null or the error of iterating the records}],
 *        "stop": null or the error FileLogInputStream threw reading the next batch header,
 *        "kafkaRecover": {"truncated": bytes} or {"error": "..."}   (LogSegment.recover on a copy)}],
 *      "indexes": [{"file", "base", "sanity": null or error, "entries": [[offset, position]...]}],
 *      "timeIndexes": [{"file", "base", "sanity": null or error, "entries": [[timestamp, offset]...]}]}
 * </pre>
 *
 * A segment is a regular file named by 20 digits and {@code .log}, as Kafka's loader takes it. Nothing in
 * the case directories is opened for writing: LogSegment.recover and the index classes run on copies in
 * a scratch directory.
 */
final class DamageMatrix {
    private static final Pattern SEGMENT = Pattern.compile("\\d{20}\\.(log|index|timeindex)");

    private DamageMatrix() {
    }

    static int run(String[] args) throws Exception {
        if (args.length != 2) {
            Oracle.ERR.println("usage: Oracle matrix <list-file> <index-interval-bytes>");
            return 2;
        }
        Map<String, Object> props = new HashMap<>();
        props.put("index.interval.bytes", Integer.parseInt(args[1]));
        // small preallocated indexes for LogSegment.recover's fresh copies (the segments are small)
        props.put("segment.index.bytes", 64 * 1024);
        LogConfig config = new LogConfig(props);
        // LogSegment.close syncs its files: on a memory file system, where there is one, that costs nothing
        Path shm = Path.of("/dev/shm");
        Path scratch = Files.isDirectory(shm) && Files.isWritable(shm)
            ? Files.createTempDirectory(shm, "seglog-damage-oracle")
            : Files.createTempDirectory("seglog-damage-oracle");
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-oracle-scheduler-");
        scheduler.startup();
        try (BufferedReader list = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8)) {
            String line;
            while ((line = list.readLine()) != null) {
                if (!line.isBlank()) {
                    Oracle.OUT.println(oneCase(new File(line), config, scheduler, scratch));
                }
            }
        } finally {
            scheduler.shutdown();
            try (var paths = Files.walk(scratch)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        return 0;
    }

    private static String oneCase(File dir, LogConfig config, KafkaScheduler scheduler, Path scratch) throws IOException {
        StringBuilder segments = new StringBuilder();
        StringBuilder indexes = new StringBuilder();
        StringBuilder timeIndexes = new StringBuilder();
        String[] names = dir.list();
        Arrays.sort(names == null ? new String[0] : names);
        for (String name : names == null ? new String[0] : names) {
            File file = new File(dir, name);
            if (!SEGMENT.matcher(name).matches() || !file.isFile()) {
                continue;
            }
            long base = Long.parseLong(name.substring(0, 20));
            // a fresh scratch directory per file: the copies never meet
            Path work = Files.createTempDirectory(scratch, "f");
            Path copy = work.resolve(name);
            Files.copy(file.toPath(), copy, StandardCopyOption.REPLACE_EXISTING);
            if (name.endsWith(".log")) {
                append(segments, segment(name, base, copy.toFile(), work.toFile(), config, scheduler));
            } else if (name.endsWith(".timeindex")) {
                append(timeIndexes, timeIndex(name, base, copy.toFile()));
            } else {
                append(indexes, offsetIndex(name, base, copy.toFile()));
            }
        }
        return "{\"dir\":" + str(dir.getPath()) + ",\"segments\":[" + segments + "],\"indexes\":[" + indexes
            + "],\"timeIndexes\":[" + timeIndexes + "]}";
    }

    private static String segment(String name, long base, File copy, File work, LogConfig config,
                                  KafkaScheduler scheduler) throws IOException {
        StringBuilder batches = new StringBuilder();
        String stop = null;
        long size = copy.length(); // before LogSegment.recover truncates the copy
        try (FileRecords records = FileRecords.open(copy, false)) {
            Iterator<FileChannelRecordBatch> it = records.batches().iterator();
            while (true) {
                FileChannelRecordBatch batch;
                try {
                    if (!it.hasNext()) {
                        break;
                    }
                    batch = it.next();
                } catch (RuntimeException e) {
                    stop = error(e);
                    break;
                }
                append(batches, batch(batch));
            }
        }
        String recover = kafkaRecover(base, work, config, scheduler);
        return "{\"file\":" + str(name) + ",\"base\":" + base + ",\"size\":" + size + ",\"batches\":["
            + batches + "],\"stop\":" + str(stop) + ",\"kafkaRecover\":" + recover + "}";
    }

    private static String batch(FileChannelRecordBatch batch) {
        StringBuilder out = new StringBuilder();
        out.append("{\"pos\":").append(batch.position()).append(",\"size\":").append(batch.sizeInBytes());
        String valid = null;
        try {
            batch.ensureValid();
        } catch (RuntimeException e) {
            valid = error(e);
        }
        out.append(",\"valid\":").append(str(valid));
        try {
            // each field read before any is written, so a header that throws leaves no half entry
            String fields = ",\"base\":" + batch.baseOffset() + ",\"last\":" + batch.lastOffset() + ",\"magic\":"
                + batch.magic() + ",\"count\":" + batch.countOrNull() + ",\"maxTs\":" + batch.maxTimestamp();
            out.append(fields);
        } catch (RuntimeException e) {
            out.append(",\"headerError\":").append(str(error(e)));
        }
        StringBuilder recs = new StringBuilder();
        String recordsError = null;
        // the streaming iterator, as a consumer's fetch reads a batch (the list iterator allocates
        // recordsCount slots up front)
        try (CloseableIterator<Record> it = batch.streamingIterator(BufferSupplier.NO_CACHING)) {
            while (it.hasNext()) {
                Record r = it.next();
                append(recs, "{\"o\":" + r.offset() + ",\"t\":" + r.timestamp() + ",\"k\":" + b64(r.key()) + ",\"v\":"
                    + b64(r.value()) + "}");
            }
        } catch (RuntimeException e) {
            recordsError = error(e);
        }
        out.append(",\"records\":[").append(recs).append("],\"recordsError\":").append(str(recordsError)).append('}');
        return out.toString();
    }

    /** LogSegment.recover, as the loader calls it, on a copy of the .log alone (fresh indexes). */
    private static String kafkaRecover(long base, File work, LogConfig config, KafkaScheduler scheduler) {
        try {
            TopicPartition tp = new TopicPartition("seglog-oracle", 0);
            File state = new File(work, "state");
            state.mkdir();
            ProducerStateManager producerState = new ProducerStateManager(tp, state, 60 * 60 * 1000,
                new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), Time.SYSTEM);
            producerState.truncateFullyAndStartAt(base);
            LeaderEpochFileCache epochs = new LeaderEpochFileCache(tp,
                new LeaderEpochCheckpointFile(LeaderEpochCheckpointFile.newFile(state), new LogDirFailureChannel(1)),
                scheduler);
            LogSegment segment = LogSegment.open(work, base, config, Time.SYSTEM, true, 0, false, "");
            try {
                return "{\"truncated\":" + segment.recover(producerState, epochs) + "}";
            } finally {
                segment.close();
            }
        } catch (Exception e) {
            return "{\"error\":" + str(error(e)) + "}";
        }
    }

    private static String offsetIndex(String name, long base, File copy) {
        StringBuilder entries = new StringBuilder();
        String sanity = null;
        try {
            OffsetIndex index = new OffsetIndex(copy, base, -1, false);
            try {
                try {
                    index.sanityCheck();
                } catch (RuntimeException e) {
                    sanity = error(e);
                }
                for (int i = 0; i < index.entries(); i++) {
                    OffsetPosition e = index.entry(i);
                    append(entries, "[" + e.offset() + "," + e.position() + "]");
                }
            } finally {
                index.close();
            }
        } catch (Exception e) {
            sanity = error(e);
        }
        return "{\"file\":" + str(name) + ",\"base\":" + base + ",\"sanity\":" + str(sanity) + ",\"entries\":["
            + entries + "]}";
    }

    private static String timeIndex(String name, long base, File copy) {
        StringBuilder entries = new StringBuilder();
        String sanity = null;
        try {
            TimeIndex index = new TimeIndex(copy, base, -1, false);
            try {
                try {
                    index.sanityCheck();
                } catch (RuntimeException e) {
                    sanity = error(e);
                }
                for (int i = 0; i < index.entries(); i++) {
                    TimestampOffset e = index.entry(i);
                    append(entries, "[" + e.timestamp() + "," + e.offset() + "]");
                }
            } finally {
                index.close();
            }
        } catch (Exception e) {
            sanity = error(e);
        }
        return "{\"file\":" + str(name) + ",\"base\":" + base + ",\"sanity\":" + str(sanity) + ",\"entries\":["
            + entries + "]}";
    }

    private static void append(StringBuilder list, String item) {
        if (list.length() > 0) {
            list.append(',');
        }
        list.append(item);
    }

    private static String error(Throwable e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    private static String b64(ByteBuffer buffer) {
        if (buffer == null) {
            return "null";
        }
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return "\"" + Base64.getEncoder().encodeToString(bytes) + "\"";
    }

    static String str(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
