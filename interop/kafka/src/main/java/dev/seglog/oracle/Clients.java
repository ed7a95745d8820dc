package dev.seglog.oracle;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's own clients, for the broker-level interop checks. Records are printed as JSON Lines in the
 * shape `seglog consume --json` prints: {"offset","timestamp","timestamp_type","key","value",
 * "headers":[{"key","value"}]}, bytes in base64 (null for null).
 *
 * <pre>
 * create-topic &lt;bootstrap&gt; &lt;topic&gt; &lt;partitions&gt; [&lt;config&gt;=&lt;value&gt;...]
 * produce &lt;bootstrap&gt; &lt;topic&gt; &lt;codec&gt;[,&lt;codec&gt;...] &lt;records|forever&gt; &lt;seed&gt;
 *     For each codec in turn, a KafkaProducer (acks=all, idempotent) with that compression.type sends the
 *     records to partition 0: null keys, null values, headers and out-of-order timestamps, made from the
 *     seed; the n-th record overall (from 0) has a value starting "codec-n " when it is not null. Prints
 *     each record once it is acknowledged, with the offset the broker gave it, and flushes each line.
 *     "forever" produces until killed.
 * consume &lt;bootstrap&gt; &lt;topic&gt; &lt;partition&gt; &lt;records&gt; &lt;timeout-ms&gt; [&lt;isolation.level&gt;]
 *     KafkaConsumer, assigned the partition from its beginning (no group), prints records until it
 *     has that many, or with "end" until its position reaches the end offset it was given at the start
 *     (the high watermark, or the last stable offset under read_committed); fails if the timeout passes first. The isolation level defaults to the
 *     consumer's (read_uncommitted).
 * describe-producers &lt;bootstrap&gt; &lt;topic&gt; &lt;partition&gt;
 *     Admin.describeProducers: the partition's active producers as the broker holds them, one JSON line
 *     each, by producer id: {"producer_id","epoch","last_sequence","coordinator_epoch","txn_start"}
 *     (txn_start -1 when no transaction is open).
 * </pre>
 */
final class Clients {

    private Clients() {
    }

    static int createTopic(String[] args) throws Exception {
        if (args.length < 3) {
            Oracle.ERR.println("usage: create-topic <bootstrap> <topic> <partitions> [<config>=<value>...]");
            return 2;
        }
        Map<String, String> configs = new HashMap<>();
        for (int i = 3; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            configs.put(kv[0], kv[1]);
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(args[1], Integer.parseInt(args[2]), (short) 1).configs(configs)))
                .all().get();
        }
        return 0;
    }

    private static String b64(byte[] bytes) {
        return bytes == null ? "null" : "\"" + Base64.getEncoder().encodeToString(bytes) + "\"";
    }

    private static String jsonString(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static String json(long offset, long timestamp, String timestampType, byte[] key, byte[] value,
                       Iterable<Header> headers) {
        StringBuilder b = new StringBuilder();
        b.append("{\"offset\":").append(offset)
            .append(",\"timestamp\":").append(timestamp)
            .append(",\"timestamp_type\":").append(jsonString(timestampType))
            .append(",\"key\":").append(b64(key))
            .append(",\"value\":").append(b64(value))
            .append(",\"headers\":[");
        boolean first = true;
        for (Header h : headers) {
            if (!first) {
                b.append(',');
            }
            first = false;
            b.append("{\"key\":").append(jsonString(h.key())).append(",\"value\":").append(b64(h.value())).append('}');
        }
        return b.append("]}").toString();
    }

    private static byte[] text(Random rng, String prefix, int len) {
        StringBuilder b = new StringBuilder(prefix);
        while (b.length() < len) {
            b.append((char) (' ' + rng.nextInt(95)));
        }
        return b.toString().getBytes(StandardCharsets.US_ASCII);
    }

    static int produce(String[] args) throws Exception {
        if (args.length != 5) {
            Oracle.ERR.println("usage: produce <bootstrap> <topic> <codec>[,<codec>...] <records|forever> <seed>");
            return 2;
        }
        long count = args[3].equals("forever") ? Long.MAX_VALUE : Long.parseLong(args[3]);
        long seed = Long.parseLong(args[4]);
        long first = 0;
        for (String codec : args[2].split(",")) {
            produceWith(args[0], args[1], codec, count, new Random(seed++), first);
            first += count;
        }
        return 0;
    }

    /** One producer, one codec; the records' values start with "codec-n " where n counts from first. */
    private static void produceWith(String bootstrap, String topic, String codec, long count, Random rng, long first)
        throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("acks", "all");
        props.put("enable.idempotence", "true");
        props.put("compression.type", codec);
        props.put("linger.ms", "5");
        props.put("batch.size", "16384");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        AtomicReference<Exception> failed = new AtomicReference<>();
        long base = System.currentTimeMillis() - 3_600_000L;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (long i = first; i < first + count && failed.get() == null; i++) {
                long ts = base + (i - first) * 5 + (i % 5 == 0 ? -rng.nextInt(60_000) : 0);
                byte[] key = i % 7 == 3 ? null : ("key-" + rng.nextInt(500)).getBytes(StandardCharsets.US_ASCII);
                byte[] value;
                if (i % 11 == 5) {
                    value = null;
                } else {
                    int len = i % 13 == 0 ? 1000 + rng.nextInt(3000) : 10 + rng.nextInt(200);
                    value = text(rng, codec + "-" + i + " ", len);
                }
                List<Header> headers = new ArrayList<>();
                int nh = rng.nextInt(4);
                for (int h = 0; h < nh; h++) {
                    byte[] hv = rng.nextInt(4) == 0 ? null : text(rng, "hv-", 3 + rng.nextInt(20));
                    headers.add(new RecordHeader(h == 2 ? "h0" : "h" + h, hv));
                }
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, ts, key, value, headers);
                producer.send(record, (md, e) -> {
                    if (e != null) {
                        failed.compareAndSet(null, e);
                        return;
                    }
                    synchronized (Oracle.OUT) {
                        Oracle.OUT.println(json(md.offset(), ts, "CreateTime", key, value, headers));
                        Oracle.OUT.flush();
                    }
                });
            }
            producer.flush();
        }
        if (failed.get() != null) {
            throw failed.get();
        }
    }

    static int describeProducers(String[] args) throws Exception {
        if (args.length != 3) {
            Oracle.ERR.println("usage: describe-producers <bootstrap> <topic> <partition>");
            return 2;
        }
        TopicPartition tp = new TopicPartition(args[1], Integer.parseInt(args[2]));
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        try (Admin admin = Admin.create(props)) {
            List<org.apache.kafka.clients.admin.ProducerState> states = new ArrayList<>(
                admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers());
            states.sort(java.util.Comparator.comparingLong(org.apache.kafka.clients.admin.ProducerState::producerId));
            for (org.apache.kafka.clients.admin.ProducerState st : states) {
                Oracle.OUT.println("{\"producer_id\":" + st.producerId()
                    + ",\"epoch\":" + st.producerEpoch()
                    + ",\"last_sequence\":" + st.lastSequence()
                    + ",\"coordinator_epoch\":" + st.coordinatorEpoch().orElse(-1)
                    + ",\"txn_start\":" + st.currentTransactionStartOffset().orElse(-1) + "}");
            }
        }
        return 0;
    }

    static int consume(String[] args) {
        if (args.length != 5 && args.length != 6) {
            Oracle.ERR.println("usage: consume <bootstrap> <topic> <partition> <records> <timeout-ms> [<isolation.level>]");
            return 2;
        }
        TopicPartition tp = new TopicPartition(args[1], Integer.parseInt(args[2]));
        boolean toEnd = args[3].equals("end");
        long want = toEnd ? Long.MAX_VALUE : Long.parseLong(args[3]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[4]);
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        if (args.length == 6) {
            props.put("isolation.level", args[5]);
        }
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        long got = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = toEnd ? consumer.endOffsets(List.of(tp)).get(tp) : Long.MAX_VALUE;
            while (got < want && consumer.position(tp) < end) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    Oracle.ERR.println("consume: timed out with " + got + " records, "
                        + (toEnd ? "at offset " + consumer.position(tp) + " of " + end : "of " + want));
                    return 1;
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(Math.min(left, 1000)))) {
                    Oracle.OUT.println(json(r.offset(), r.timestamp(), r.timestampType().name, r.key(), r.value(), r.headers()));
                    got++;
                }
            }
        }
        return 0;
    }
}
