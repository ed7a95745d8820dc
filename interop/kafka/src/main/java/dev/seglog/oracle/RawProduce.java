package dev.seglog.oracle;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * One idempotent Produce request, as Kafka's idempotent producer sends it, for a producer id the caller
 * chooses (KafkaProducer gets its id from the broker, so it cannot continue a producer seglog wrote).
 *
 * <pre>
 * Oracle raw-produce &lt;host:port&gt; &lt;topic&gt; &lt;partition&gt; &lt;producer-id&gt; &lt;epoch&gt; &lt;base-sequence&gt; &lt;count&gt; &lt;value-prefix&gt;
 *     One batch of count records (values value-prefix-0 ...), acks=all, Produce version 12 (topic by name),
 *     sent to the broker at host:port. Prints {"error":"NONE" or Kafka's error name,"base_offset":N}.
 * </pre>
 */
final class RawProduce {

    private static final short VERSION = 12;

    private RawProduce() {
    }

    static int run(String[] args) throws Exception {
        if (args.length != 8) {
            Oracle.ERR.println("usage: raw-produce <host:port> <topic> <partition> <producer-id> <epoch> <base-sequence> <count> <value-prefix>");
            return 2;
        }
        String[] hostPort = args[0].split(":", 2);
        String topic = args[1];
        int partition = Integer.parseInt(args[2]);
        long producerId = Long.parseLong(args[3]);
        short epoch = Short.parseShort(args[4]);
        int baseSequence = Integer.parseInt(args[5]);
        int count = Integer.parseInt(args[6]);
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null,
                (args[7] + "-" + i).getBytes(StandardCharsets.UTF_8));
        }
        MemoryRecords batch = MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, epoch, baseSequence, records);

        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(topic);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(batch));
        topics.add(topicData);
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000).setTopicData(topics);
        ProduceRequest request = ProduceRequest.builder(data).build(VERSION);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, VERSION, "seglog-oracle", 1);
        ByteBuffer bytes = request.serializeWithHeader(header);

        try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(bytes.remaining());
            out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] response = new byte[in.readInt()];
            in.readFully(response);
            ProduceResponse parsed = (ProduceResponse) AbstractResponse.parseResponse(ByteBuffer.wrap(response), header);
            for (ProduceResponseData.TopicProduceResponse t : parsed.data().responses()) {
                for (ProduceResponseData.PartitionProduceResponse p : t.partitionResponses()) {
                    Oracle.OUT.println("{\"error\":\"" + Errors.forCode(p.errorCode()).name()
                        + "\",\"base_offset\":" + p.baseOffset() + "}");
                }
            }
        }
        return 0;
    }
}
