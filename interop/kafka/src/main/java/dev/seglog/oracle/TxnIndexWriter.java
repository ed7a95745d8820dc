package dev.seglog.oracle;

import java.io.File;

import org.apache.kafka.common.message.AbortedTxn;
import org.apache.kafka.storage.internals.log.TransactionIndex;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * Writes a `.txnindex` with Kafka's own TransactionIndex: one append per argument
 * `producerId:firstOffset:lastOffset:lastStableOffset`, then flush and close. The start offset is the
 * file name's base offset, as Kafka's segments and DumpLogSegments use. Kafka's precondition
 * (increasing last offsets) applies; its exception fails the command.
 */
final class TxnIndexWriter {
    private TxnIndexWriter() {
    }

    static int run(String[] args) throws Exception {
        if (args.length < 1) {
            Oracle.ERR.println("usage: Oracle txnindex <file> <producerId>:<firstOffset>:<lastOffset>:<lastStableOffset>...");
            return 2;
        }
        File file = new File(args[0]);
        try (TransactionIndex index = new TransactionIndex(UnifiedLog.offsetFromFile(file), file)) {
            for (int i = 1; i < args.length; i++) {
                String[] f = args[i].split(":");
                if (f.length != 4) {
                    Oracle.ERR.println("not producerId:firstOffset:lastOffset:lastStableOffset: " + args[i]);
                    return 2;
                }
                index.append(new AbortedTxn()
                    .setProducerId(Long.parseLong(f[0]))
                    .setFirstOffset(Long.parseLong(f[1]))
                    .setLastOffset(Long.parseLong(f[2]))
                    .setLastStableOffset(Long.parseLong(f[3])));
            }
            index.flush();
        }
        return 0;
    }
}
