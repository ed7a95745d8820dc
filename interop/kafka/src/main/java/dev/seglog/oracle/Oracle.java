package dev.seglog.oracle;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;

/**
 * Runs pieces of Apache Kafka in-process so seglog can compare its output with Kafka's.
 *
 * <pre>
 * Oracle dump &lt;DumpLogSegments args...&gt;
 *     org.apache.kafka.tools.DumpLogSegments, exactly as kafka-dump-log.sh runs it.
 *     Exit status: 0 on success, the status Kafka passes to Exit.exit (usage errors),
 *     or 1 if Kafka throws (the stack trace goes to stderr).
 * Oracle recover &lt;segment-dir&gt; &lt;base-offset&gt;[,&lt;base-offset&gt;...] &lt;index-interval-bytes&gt; &lt;segment-index-bytes&gt;
 *     For each base offset in turn: LogSegment.open on the existing &lt;base-offset&gt;.log in segment-dir,
 *     LogSegment.recover with a fresh ProducerStateManager and LeaderEpochFileCache (both kept in a
 *     temporary directory, not in segment-dir), prints the number of bytes truncated on stdout (one line
 *     per segment), then closes the segment, which trims the .index and .timeindex files to their entries.
 * Oracle storage &lt;kafka-storage.sh args...&gt;
 *     kafka.tools.StorageTool (formats a KRaft node's log directory), with the exit status it passes to Exit.exit.
 * Oracle broker &lt;server.properties&gt; &lt;log file&gt;
 *     kafka.Kafka, a broker in this JVM, logging to the file through log4j2. It exits (cleanly, through
 *     Kafka's shutdown hook) on SIGTERM or when its stdin reaches end of file, so it cannot outlive the
 *     process that started it with a pipe on stdin. See {@link Broker}.
 * Oracle matrix &lt;list-file&gt; &lt;index-interval-bytes&gt;
 *     The oracle of the damage matrix: what Kafka's classes read in each listed partition directory. See {@link DamageMatrix}.
 * Oracle snapshot &lt;dir&gt; &lt;script&gt;
 *     Kafka's ProducerStateManager driven step by step, snapshots written to dir. See {@link Snapshots}.
 * Oracle create-topic | produce | consume ...
 *     Kafka's own Admin, KafkaProducer and KafkaConsumer; records as JSON Lines. See {@link Clients}.
 * Oracle tool &lt;class&gt; &lt;args...&gt;
 *     A Kafka tool's main (org.apache.kafka.tools.GetOffsetShell, LogDirsCommand, ...), exit status as dump's.
 * Oracle raw-produce ...
 *     One idempotent Produce request for a producer id the caller chooses. See {@link RawProduce}.
 * Oracle share-consume | share-delete ...
 *     A KafkaShareConsumer acknowledging records (accept, release, reject); Admin.deleteShareGroups. See {@link ShareGroups}.
 * Oracle txn-produce | txn-produce-until-killed ...
 *     Transactional and idempotent KafkaProducers at once. See {@link Transactions}.
 * </pre>
 *
 * stdout and stderr are UTF-8 whatever the platform charset is, so the output does not depend on the locale.
 */
public final class Oracle {

    /** Thrown by the Exit procedure Kafka calls instead of System.exit. */
    private static final class ExitCalled extends RuntimeException {
        final int status;

        ExitCalled(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    static final PrintStream OUT = utf8(FileDescriptor.out);
    static final PrintStream ERR = utf8(FileDescriptor.err);

    private static PrintStream utf8(FileDescriptor fd) {
        return new PrintStream(new BufferedOutputStream(new FileOutputStream(fd), 1 << 16), false, StandardCharsets.UTF_8);
    }

    private Oracle() {
    }

    public static void main(String[] args) {
        System.setOut(OUT);
        System.setErr(ERR);
        int status;
        try {
            status = run(args);
        } catch (ExitCalled e) {
            status = e.status;
        } catch (Throwable t) {
            ERR.print("Exception in thread \"main\" ");
            t.printStackTrace(ERR);
            status = 1;
        }
        OUT.flush();
        ERR.flush();
        System.exit(status);
    }

    private static int run(String[] args) throws Exception {
        if (args.length == 0) {
            return usage();
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "dump":
                return dump(rest);
            case "recover":
                return recover(rest);
            case "storage":
                return storage(rest);
            case "broker":
                return Broker.run(rest);
            case "create-topic":
                return Clients.createTopic(rest);
            case "produce":
                return Clients.produce(rest);
            case "consume":
                return Clients.consume(rest);
            case "tool":
                return tool(rest);
            case "raw-produce":
                return RawProduce.run(rest);
            case "group-commit", "alter-config", "delete-topic":
                return args[0].equals("group-commit") ? Groups.commit(rest) : args[0].equals("alter-config") ? Groups.alterConfig(rest) : Groups.deleteTopic(rest);
            case "share-consume":
                return ShareGroups.consume(rest);
            case "share-delete":
                return ShareGroups.delete(rest);
            case "describe-producers":
                return Clients.describeProducers(rest);
            case "txn-produce":
                return Transactions.produce(rest);
            case "txn-produce-until-killed":
                return Transactions.produceUntilKilled(rest);
            case "matrix":
                return DamageMatrix.run(rest);
            case "snapshot":
                return Snapshots.run(rest);
            case "txnindex":
                return TxnIndexWriter.run(rest);
            case "clean":
                return Compaction.run(rest);
            case "unified-recover":
                return LogRecovery.run(rest);
            case "leader-append":
                return LeaderAppend.run(rest);
            default:
                return usage();
        }
    }

    private static int usage() {
        ERR.println("usage: Oracle dump <DumpLogSegments args...>");
        ERR.println("       Oracle recover <segment-dir> <base-offset>[,<base-offset>...] <index-interval-bytes> <segment-index-bytes>");
        ERR.println("       Oracle matrix <list-file> <index-interval-bytes>");
        ERR.println("       Oracle snapshot <dir> <script>   (see Snapshots.java)");
        ERR.println("       Oracle txnindex <file> <producerId>:<firstOffset>:<lastOffset>:<lastStableOffset>...");
        ERR.println("       Oracle clean <partition-dir> <config-file> <out-dir> <time-ms>[:<first-dirty>]...   (see Compaction.java)");
        ERR.println("       Oracle unified-recover <partition-dir> <recovery-point> <log-start-offset>   (see LogRecovery.java)");
        ERR.println("       Oracle storage <kafka-storage.sh arguments...>");
        ERR.println("       Oracle broker <server.properties> <log4j2 log file>");
        ERR.println("       Oracle create-topic <bootstrap> <topic> <partitions> [<config>=<value>...]");
        ERR.println("       Oracle produce <bootstrap> <topic> <codec>[,<codec>...] <records|forever> <seed>");
        ERR.println("       Oracle consume <bootstrap> <topic> <partition> <records> <timeout-ms> [read_uncommitted|read_committed]");
        ERR.println("       Oracle txn-produce <bootstrap> <topic> <rounds> <seed>");
        ERR.println("       Oracle describe-producers <bootstrap> <topic> <partition>");
        ERR.println("       Oracle tool <class> <args...>");
        ERR.println("       Oracle raw-produce <host:port> <topic> <partition> <producer-id> <epoch> <base-sequence> <count> <value-prefix>");
        ERR.println("       Oracle txn-produce-until-killed <bootstrap> <topic> <rounds> <seed>");
        return 2;
    }

    private static int storage(String[] args) {
        Exit.setExitProcedure((status, message) -> {
            throw new ExitCalled(status, message);
        });
        try {
            kafka.tools.StorageTool.main(args);
            return 0;
        } catch (ExitCalled e) {
            return e.status;
        } finally {
            Exit.resetExitProcedure();
        }
    }

    private static int dump(String[] args) throws IOException {
        Exit.setExitProcedure((status, message) -> {
            throw new ExitCalled(status, message);
        });
        Exit.setHaltProcedure((status, message) -> {
            throw new ExitCalled(status, message);
        });
        try {
            org.apache.kafka.tools.DumpLogSegments.main(args);
            return 0;
        } catch (ExitCalled e) {
            return e.status;
        } finally {
            Exit.resetExitProcedure();
            Exit.resetHaltProcedure();
        }
    }

    /** Any Kafka tool's main (GetOffsetShell, LogDirsCommand, ...), its Exit calls turned into a status. */
    private static int tool(String[] args) throws Exception {
        if (args.length == 0) {
            return usage();
        }
        java.lang.reflect.Method main = Class.forName(args[0]).getMethod("main", String[].class);
        Exit.setExitProcedure((status, message) -> {
            throw new ExitCalled(status, message);
        });
        try {
            main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
            return 0;
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof ExitCalled exit) {
                return exit.status;
            }
            throw e;
        } finally {
            Exit.resetExitProcedure();
        }
    }

    private static int recover(String[] args) throws Exception {
        if (args.length != 4) {
            return usage();
        }
        File dir = new File(args[0]);
        String[] bases = args[1].split(",");
        int indexIntervalBytes = Integer.parseInt(args[2]);
        int segmentIndexBytes = Integer.parseInt(args[3]);

        Map<String, Object> props = new HashMap<>();
        props.put("index.interval.bytes", indexIntervalBytes);
        props.put("segment.index.bytes", segmentIndexBytes);
        LogConfig config = new LogConfig(props);

        // Producer state and the leader epoch checkpoint live in a scratch directory, so the only files
        // written next to the .log are the ones LogSegment itself owns (.index, .timeindex, .txnindex).
        Path state = Files.createTempDirectory("seglog-oracle-state");
        TopicPartition tp = new TopicPartition("seglog-oracle", 0);
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "seglog-oracle-scheduler-");
        scheduler.startup();
        try {
            for (String base : bases) {
                long baseOffset = Long.parseLong(base);
                // a fresh producer state and epoch cache per segment: each is recovered on its own
                ProducerStateManager producerState = new ProducerStateManager(tp, state.toFile(), 60 * 60 * 1000,
                    new ProducerStateManagerConfig(24 * 60 * 60 * 1000, false), Time.SYSTEM);
                producerState.truncateFullyAndStartAt(baseOffset);
                LeaderEpochFileCache epochs = new LeaderEpochFileCache(tp,
                    new LeaderEpochCheckpointFile(LeaderEpochCheckpointFile.newFile(state.toFile()), new LogDirFailureChannel(1)),
                    scheduler);
                epochs.clearAndFlush();

                // the same call LogLoader makes for an existing segment: fileAlreadyExists=true, initFileSize=0,
                // preallocate=false, no file suffix
                LogSegment segment = LogSegment.open(dir, baseOffset, config, Time.SYSTEM, true, 0, false, "");
                int truncated;
                try {
                    truncated = segment.recover(producerState, epochs);
                } finally {
                    segment.close();
                }
                OUT.println(truncated);
            }
            return 0;
        } finally {
            scheduler.shutdown();
            deleteTree(state);
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
