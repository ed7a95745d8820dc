package dev.seglog.oracle;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Transactional and idempotent producers at once, for the interop checks of transactions.
 *
 * <pre>
 * txn-produce &lt;bootstrap&gt; &lt;topic&gt; &lt;rounds&gt; &lt;seed&gt;
 *     Two transactional producers (transactional ids seglog-txn-a, codec none, and seglog-txn-b, lz4) and an
 *     idempotent one (gzip) send to partition 0. In each round both transactions are open at once and the
 *     three producers' sends interleave; then each transaction commits or aborts (about one in three
 *     aborts, chosen from the seed) in an order chosen from the seed. Prints every acknowledged record as
 *     `Clients` does, with one more field, "txn": "committed", "aborted" or "none" (idempotent).
 * txn-produce-until-killed &lt;bootstrap&gt; &lt;topic&gt; &lt;rounds&gt; &lt;seed&gt;
 *     The same producers and rounds (transaction.timeout.ms 900000, the broker's maximum, so that the
 *     coordinator does not abort the last transactions while the check runs), each round's records
 *     printed (and flushed) as soon as its transactions ended, with "producer": "a", "b" or "i". Then
 *     both producers begin one more transaction and the three send until the process is killed, never
 *     ending those transactions; each record is printed (and flushed) once acknowledged, with "txn":
 *     "open" (or "none" for the idempotent producer). A record of a later transaction is acknowledged
 *     only once its producer's earlier transaction is complete (markers written), so once both open
 *     transactions have an acknowledged record, no transaction but those two is in doubt.
 * </pre>
 */
final class Transactions {

    private Transactions() {
    }

    private static final String[] NAMES = {"a", "b", "i"};

    private record Sent(Future<RecordMetadata> metadata, long ts, byte[] key, byte[] value, List<Header> headers) {
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String transactionalId, String codec) {
        return producer(bootstrap, transactionalId, codec, null);
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String transactionalId, String codec,
                                                          String txnTimeoutMs) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("acks", "all");
        props.put("enable.idempotence", "true");
        props.put("compression.type", codec);
        props.put("linger.ms", "2");
        props.put("batch.size", "16384");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        if (transactionalId != null) {
            props.put("transactional.id", transactionalId);
        }
        if (txnTimeoutMs != null) {
            props.put("transaction.timeout.ms", txnTimeoutMs);
        }
        return new KafkaProducer<>(props);
    }

    private static byte[] text(Random rng, String prefix, int len) {
        StringBuilder b = new StringBuilder(prefix);
        while (b.length() < len) {
            b.append((char) (' ' + rng.nextInt(95)));
        }
        return b.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** Sends the n-th record (of a round) through p; callback, if not null, runs on its acknowledgement. */
    private static Sent send(KafkaProducer<byte[], byte[]> p, String topic, Random rng, String name, long n, int round,
                             Callback callback) {
        long ts = System.currentTimeMillis() - rng.nextInt(1000);
        byte[] key = n % 7 == 3 ? null : ("key-" + rng.nextInt(100)).getBytes(StandardCharsets.US_ASCII);
        byte[] value = n % 11 == 5 ? null : text(rng, name + "-" + n + " ", 1000 + rng.nextInt(1500));
        List<Header> headers = new ArrayList<>();
        if (rng.nextInt(3) == 0) {
            headers.add(new RecordHeader("round", Integer.toString(round).getBytes(StandardCharsets.US_ASCII)));
        }
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, ts, key, value, headers);
        Sent sent = new Sent(null, ts, key, value, headers);
        return new Sent(p.send(record, callback == null ? null : (md, e) -> callback.acked(sent, md, e)), ts, key,
            value, headers);
    }

    private interface Callback {
        void acked(Sent sent, RecordMetadata md, Exception e);
    }

    private static String line(Sent s, RecordMetadata md, String producer, String txn) {
        String json = Clients.json(md.offset(), s.ts(), "CreateTime", s.key(), s.value(), s.headers());
        String extra = producer == null ? "" : ",\"producer\":\"" + producer + "\"";
        return json.substring(0, json.length() - 1) + extra + ",\"txn\":\"" + txn + "\"}";
    }

    private static void print(String line) {
        synchronized (Oracle.OUT) {
            Oracle.OUT.println(line);
            Oracle.OUT.flush();
        }
    }

    static int produce(String[] args) throws Exception {
        if (args.length != 4) {
            Oracle.ERR.println("usage: txn-produce <bootstrap> <topic> <rounds> <seed>");
            return 2;
        }
        String bootstrap = args[0];
        String topic = args[1];
        int rounds = Integer.parseInt(args[2]);
        Random rng = new Random(Long.parseLong(args[3]));
        List<String> out = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> a = producer(bootstrap, "seglog-txn-a", "none");
             KafkaProducer<byte[], byte[]> b = producer(bootstrap, "seglog-txn-b", "lz4");
             KafkaProducer<byte[], byte[]> idem = producer(bootstrap, null, "gzip")) {
            a.initTransactions();
            b.initTransactions();
            List<KafkaProducer<byte[], byte[]>> all = List.of(a, b, idem);
            long n = 0;
            for (int round = 0; round < rounds; round++) {
                n = round(all, topic, rng, round, n, false, out);
            }
        }
        for (String line : out) {
            Oracle.OUT.println(line);
        }
        return 0;
    }

    static int produceUntilKilled(String[] args) throws Exception {
        if (args.length != 4) {
            Oracle.ERR.println("usage: txn-produce-until-killed <bootstrap> <topic> <rounds> <seed>");
            return 2;
        }
        String bootstrap = args[0];
        String topic = args[1];
        int rounds = Integer.parseInt(args[2]);
        Random rng = new Random(Long.parseLong(args[3]));
        String timeout = "900000";
        try (KafkaProducer<byte[], byte[]> a = producer(bootstrap, "seglog-txn-a", "none", timeout);
             KafkaProducer<byte[], byte[]> b = producer(bootstrap, "seglog-txn-b", "lz4", timeout);
             KafkaProducer<byte[], byte[]> idem = producer(bootstrap, null, "gzip")) {
            a.initTransactions();
            b.initTransactions();
            List<KafkaProducer<byte[], byte[]>> all = List.of(a, b, idem);
            long n = 0;
            for (int round = 0; round < rounds; round++) {
                List<String> out = new ArrayList<>();
                n = round(all, topic, rng, round, n, true, out);
                for (String line : out) {
                    print(line);
                }
            }
            a.beginTransaction();
            b.beginTransaction();
            AtomicReference<Exception> failed = new AtomicReference<>();
            for (; failed.get() == null; n++) {
                int p = rng.nextInt(3);
                String txn = p == 2 ? "none" : "open";
                send(all.get(p), topic, rng, NAMES[p], n, rounds, (s, md, e) -> {
                    if (e != null) {
                        failed.compareAndSet(null, e);
                    } else {
                        print(line(s, md, NAMES[p], txn));
                    }
                });
            }
            throw failed.get();
        }
    }

    /**
     * One round: both transactions open, the three producers' sends interleaved, then each transaction
     * commits or aborts. Adds each record's line to out (with its producer's name if named); returns the
     * next record number.
     */
    private static long round(List<KafkaProducer<byte[], byte[]>> all, String topic, Random rng, int round, long first,
                              boolean named, List<String> out) throws Exception {
        all.get(0).beginTransaction();
        all.get(1).beginTransaction();
        List<List<Sent>> sent = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        int sends = 20 + rng.nextInt(60);
        long n = first;
        for (int s = 0; s < sends; s++, n++) {
            int p = rng.nextInt(3);
            sent.get(p).add(send(all.get(p), topic, rng, NAMES[p], n, round, null));
        }
        for (KafkaProducer<byte[], byte[]> p : all) {
            p.flush();
        }
        boolean[] abort = {rng.nextInt(3) == 0, rng.nextInt(3) == 0};
        int firstToEnd = rng.nextInt(2);
        for (int k = 0; k < 2; k++) {
            int t = (firstToEnd + k) % 2;
            KafkaProducer<byte[], byte[]> p = all.get(t);
            if (abort[t]) {
                p.abortTransaction();
            } else {
                p.commitTransaction();
            }
        }
        for (int p = 0; p < 3; p++) {
            String txn = p == 2 ? "none" : abort[p] ? "aborted" : "committed";
            for (Sent s : sent.get(p)) {
                out.add(line(s, s.metadata().get(), named ? NAMES[p] : null, txn));
            }
        }
        return n;
    }
}
