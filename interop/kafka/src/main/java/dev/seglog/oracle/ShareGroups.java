package dev.seglog.oracle;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What fills __share_group_state (KIP-932's share coordinator) with ShareSnapshot and ShareUpdate records, for the
 * --share-group-state-decoder goldens.
 *
 * <pre>
 * share-consume &lt;bootstrap&gt; &lt;topic&gt; &lt;group&gt; &lt;records&gt; &lt;timeout-ms&gt; &lt;mixed|accept&gt;
 *     Sets the group's share.auto.offset.reset to earliest, then a KafkaShareConsumer in the group
 *     (share.acknowledgement.mode explicit) subscribes to the topic and polls until that many records are done
 *     (accepted or rejected), then closes. "accept" accepts every record and commits once per poll (commitSync).
 *     "mixed" commits each acknowledgement on its own (one share state update each), and picks it by offset
 *     modulo 3: 0 is accepted; 1 is released on its first delivery (so it comes back, with a delivery count
 *     of 2) and accepted on the next; 2 is rejected.
 *     Prints "accepted released rejected".
 * share-delete &lt;bootstrap&gt; &lt;group&gt;
 *     Admin.deleteShareGroups: the share coordinator writes a tombstone for each of the group's partitions.
 * </pre>
 */
final class ShareGroups {

    private ShareGroups() {
    }

    static int consume(String[] args) throws Exception {
        if (args.length != 6 || !(args[5].equals("mixed") || args[5].equals("accept"))) {
            Oracle.ERR.println("usage: share-consume <bootstrap> <topic> <group> <records> <timeout-ms> <mixed|accept>");
            return 2;
        }
        try (Admin admin = admin(args[0])) {
            AlterConfigOp earliest = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, args[2]),
                List.of(earliest))).all().get();
        }
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[2]);
        props.put("share.acknowledgement.mode", "explicit");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        long want = Long.parseLong(args[3]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[4]);
        boolean mixed = args[5].equals("mixed");
        long accepted = 0;
        long released = 0;
        long rejected = 0;
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(args[1]));
            while (accepted + rejected < want) {
                if (System.currentTimeMillis() > deadline) {
                    Oracle.ERR.println("share-consume: timed out after " + accepted + " accepted, " + rejected
                        + " rejected");
                    return 1;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    AcknowledgeType type = AcknowledgeType.ACCEPT;
                    if (mixed && record.offset() % 3 == 1 && record.deliveryCount().orElse((short) 1) == 1) {
                        type = AcknowledgeType.RELEASE;
                    } else if (mixed && record.offset() % 3 == 2) {
                        type = AcknowledgeType.REJECT;
                    }
                    consumer.acknowledge(record, type);
                    switch (type) {
                        case ACCEPT -> accepted++;
                        case RELEASE -> released++;
                        default -> rejected++;
                    }
                    if (mixed) {
                        consumer.commitSync();
                    }
                }
                if (!records.isEmpty()) {
                    consumer.commitSync();
                }
            }
        }
        Oracle.OUT.println(accepted + " " + released + " " + rejected);
        return 0;
    }

    static int delete(String[] args) throws Exception {
        if (args.length != 2) {
            Oracle.ERR.println("usage: share-delete <bootstrap> <group>");
            return 2;
        }
        try (Admin admin = admin(args[0])) {
            admin.deleteShareGroups(List.of(args[1])).all().get();
        }
        return 0;
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        return Admin.create(props);
    }
}
