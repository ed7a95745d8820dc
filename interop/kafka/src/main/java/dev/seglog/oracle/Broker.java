package dev.seglog.oracle;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A Kafka broker (kafka.Kafka) in this JVM, for the broker-level interop checks.
 *
 * <p>Logging goes through log4j2 to the given file (run.sh puts the log4j2 binding first on the
 * classpath for this command). A watchdog thread reads stdin: at end of file, which is when the
 * process that started us closed the pipe or died, it calls System.exit, which runs Kafka's shutdown
 * hook (a clean shutdown); if that takes longer than 60 s it halts.
 */
final class Broker {

    private Broker() {
    }

    static int run(String[] args) throws IOException {
        if (args.length != 2) {
            Oracle.ERR.println("usage: Oracle broker <server.properties> <log file>");
            return 2;
        }
        Path log = Path.of(args[1]).toAbsolutePath();
        Path config = log.resolveSibling("log4j2-broker.properties");
        String text = String.join("\n",
            "status = warn",
            "appender.file.type = File",
            "appender.file.name = file",
            "appender.file.fileName = " + log.toString().replace("\\", "\\\\"),
            "appender.file.layout.type = PatternLayout",
            "appender.file.layout.pattern = [%d] %p %m (%c)%n",
            "rootLogger.level = info",
            "rootLogger.appenderRef.file.ref = file",
            "logger.kafka.name = kafka",
            "logger.kafka.level = info",
            "logger.apache.name = org.apache.kafka",
            "logger.apache.level = info",
            "");
        Files.writeString(config, text, StandardCharsets.UTF_8);
        System.setProperty("log4j2.configurationFile", config.toString());

        Thread watchdog = new Thread(() -> {
            InputStream in = System.in;
            byte[] buf = new byte[256];
            try {
                while (in.read(buf) >= 0) {
                    // the parent never writes; anything read is ignored
                }
            } catch (IOException e) {
                // treated as end of file
            }
            Thread halt = new Thread(() -> {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    return;
                }
                Runtime.getRuntime().halt(3);
            }, "seglog-broker-halt");
            halt.setDaemon(true);
            halt.start();
            System.exit(0);
        }, "seglog-broker-stdin-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();

        kafka.Kafka.main(new String[] {args[0]});
        return 0;
    }
}
