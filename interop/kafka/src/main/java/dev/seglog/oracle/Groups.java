package dev.seglog.oracle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What fills __consumer_offsets and __cluster_metadata with many record types, for the dump decoders' goldens.
 *
 * <pre>
 * group-commit &lt;bootstrap&gt; &lt;topic&gt; &lt;group&gt; &lt;classic|consumer&gt; &lt;records&gt; &lt;timeout-ms&gt;
 *     A KafkaConsumer in the group (group.protocol as given) subscribes to the topic, polls until it has
 *     seen that many records, committing each poll's position with commitSync (metadata "seglog"),
 *     then leaves the group (close). Prints the number of records it saw.
 * alter-config &lt;bootstrap&gt; &lt;topic&gt; &lt;config&gt;=&lt;value&gt;|&lt;config&gt;= ...
 *     Admin.incrementalAlterConfigs on the topic: SET each config with a value, DELETE each without.
 * delete-topic &lt;bootstrap&gt; &lt;topic&gt;
 *     Admin.deleteTopics.
 * </pre>
 */
final class Groups {

    private Groups() {
    }

    static int commit(String[] args) throws Exception {
        if (args.length != 6) {
            Oracle.ERR.println("usage: group-commit <bootstrap> <topic> <group> <classic|consumer> <records> <timeout-ms>");
            return 2;
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[2]);
        props.put("group.protocol", args[3]);
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        long want = Long.parseLong(args[4]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[5]);
        long seen = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(args[1]));
            while (seen < want) {
                if (System.currentTimeMillis() > deadline) {
                    Oracle.ERR.println("group-commit: timed out after " + seen + " records");
                    return 1;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                seen += records.count();
                if (!records.isEmpty()) {
                    Map<TopicPartition, OffsetAndMetadata> offsets = new java.util.HashMap<>();
                    for (TopicPartition tp : records.partitions()) {
                        offsets.put(tp, new OffsetAndMetadata(consumer.position(tp), "seglog"));
                    }
                    consumer.commitSync(offsets);
                }
            }
        }
        Oracle.OUT.println(seen);
        return 0;
    }

    static int alterConfig(String[] args) throws Exception {
        if (args.length < 3) {
            Oracle.ERR.println("usage: alter-config <bootstrap> <topic> <config>=<value>|<config>= ...");
            return 2;
        }
        Collection<AlterConfigOp> ops = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            ops.add(kv[1].isEmpty()
                ? new AlterConfigOp(new ConfigEntry(kv[0], ""), AlterConfigOp.OpType.DELETE)
                : new AlterConfigOp(new ConfigEntry(kv[0], kv[1]), AlterConfigOp.OpType.SET));
        }
        try (Admin admin = admin(args[0])) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, args[1]), ops)).all().get();
        }
        return 0;
    }

    static int deleteTopic(String[] args) throws Exception {
        if (args.length != 2) {
            Oracle.ERR.println("usage: delete-topic <bootstrap> <topic>");
            return 2;
        }
        try (Admin admin = admin(args[0])) {
            admin.deleteTopics(List.of(args[1])).all().get();
        }
        return 0;
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        return Admin.create(props);
    }
}
