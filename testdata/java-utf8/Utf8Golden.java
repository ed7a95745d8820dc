// Prints how Java decodes ill-formed UTF-8, as Kafka's StringDecoder does (new String(bytes, UTF_8)),
// for a fixed set of byte patterns: one line per pattern, "<input hex> <decoded text as UTF-8 hex>".
// Run: java testdata/java-utf8/Utf8Golden.java > testdata/java-utf8/cases.txt
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

public class Utf8Golden {
    // Lead bytes of every class: continuation, C0/C1, 2-byte, 3-byte (E0, ED, others), 4-byte (F0, F4,
    // F5..F7), and bytes that never start a sequence.
    static final int[] LEADS = {0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF,
        0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFB, 0xFC, 0xFE, 0xFF};
    // Second bytes: ASCII, the edges of the continuation ranges Kafka's decoder treats apart, a lead.
    static final int[] SECONDS = {0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0};
    static final int[] THIRDS = {0x41, 0x80, 0xBF};
    static final int[] FOURTHS = {0x41, 0x80};

    public static void main(String[] args) {
        HexFormat hex = HexFormat.of();
        StringBuilder out = new StringBuilder();
        for (int lead : LEADS) {
            emit(out, hex, lead);
            for (int b2 : SECONDS) {
                emit(out, hex, lead, b2);
                for (int b3 : THIRDS) {
                    emit(out, hex, lead, b2, b3);
                    for (int b4 : FOURTHS) {
                        emit(out, hex, lead, b2, b3, b4);
                    }
                }
            }
        }
        System.out.print(out);
    }

    static void emit(StringBuilder out, HexFormat hex, int... tail) {
        byte[] input = new byte[2 + tail.length];
        input[0] = 'a';
        input[1] = 'b';
        for (int i = 0; i < tail.length; i++) {
            input[2 + i] = (byte) tail[i];
        }
        String decoded = new String(input, StandardCharsets.UTF_8);
        out.append(hex.formatHex(input)).append(' ')
            .append(hex.formatHex(decoded.getBytes(StandardCharsets.UTF_8))).append('\n');
    }
}
