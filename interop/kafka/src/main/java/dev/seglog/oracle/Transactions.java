package dev.seglog.oracle;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;

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
 * </pre>
 */
final class Transactions {

    private Transactions() {
    }

    private record Sent(Future<RecordMetadata> metadata, long ts, byte[] key, byte[] value, List<Header> headers) {
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String transactionalId, String codec) {
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
        return new KafkaProducer<>(props);
    }

    private static byte[] text(Random rng, String prefix, int len) {
        StringBuilder b = new StringBuilder(prefix);
        while (b.length() < len) {
            b.append((char) (' ' + rng.nextInt(95)));
        }
        return b.toString().getBytes(StandardCharsets.US_ASCII);
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
        String[] names = {"a", "b", "i"};
        List<String> out = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> a = producer(bootstrap, "seglog-txn-a", "none");
             KafkaProducer<byte[], byte[]> b = producer(bootstrap, "seglog-txn-b", "lz4");
             KafkaProducer<byte[], byte[]> idem = producer(bootstrap, null, "gzip")) {
            a.initTransactions();
            b.initTransactions();
            List<KafkaProducer<byte[], byte[]>> all = List.of(a, b, idem);
            long n = 0;
            for (int round = 0; round < rounds; round++) {
                a.beginTransaction();
                b.beginTransaction();
                List<List<Sent>> sent = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
                int sends = 20 + rng.nextInt(60);
                for (int s = 0; s < sends; s++, n++) {
                    int p = rng.nextInt(3);
                    long ts = System.currentTimeMillis() - rng.nextInt(1000);
                    byte[] key = n % 7 == 3 ? null : ("key-" + rng.nextInt(100)).getBytes(StandardCharsets.US_ASCII);
                    byte[] value = n % 11 == 5 ? null : text(rng, names[p] + "-" + n + " ", 1000 + rng.nextInt(1500));
                    List<Header> headers = new ArrayList<>();
                    if (rng.nextInt(3) == 0) {
                        headers.add(new RecordHeader("round", Integer.toString(round).getBytes(StandardCharsets.US_ASCII)));
                    }
                    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, ts, key, value, headers);
                    sent.get(p).add(new Sent(all.get(p).send(record), ts, key, value, headers));
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
                        RecordMetadata md = s.metadata().get();
                        String json = Clients.json(md.offset(), s.ts(), "CreateTime", s.key(), s.value(), s.headers());
                        out.add(json.substring(0, json.length() - 1) + ",\"txn\":\"" + txn + "\"}");
                    }
                }
            }
        }
        for (String line : out) {
            Oracle.OUT.println(line);
        }
        return 0;
    }
}
