package dev.seglog.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * The peak memory of one operation in this JVM, measured as the Rust side's peak_memory.rs does: VmHWM reset just
 * before it (/proc/self/clear_refs 5) and read after it, and the largest RssAnon and RssFile that a thread sampled from
 * /proc/self/status every 2 ms meanwhile. VmHWM counts every resident page: the heap pages the JVM touched (-Xms2g
 * reserves the heap, only touched pages are resident), metaspace, code cache, thread stacks and mapped files.
 */
final class PeakMemory {
    final double hwmMib;
    final double startMib;
    final double anonMib;
    final double fileMib;

    private PeakMemory(double hwmMib, double startMib, double anonMib, double fileMib) {
        this.hwmMib = hwmMib;
        this.startMib = startMib;
        this.anonMib = anonMib;
        this.fileMib = fileMib;
    }

    static long statusKib(String name) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).replace("kB", "").trim());
            }
        }
        throw new IllegalStateException("no " + name + " in /proc/self/status");
    }

    static PeakMemory during(Callable<?> op) throws Exception {
        Files.writeString(Path.of("/proc/self/clear_refs"), "5");
        long start = statusKib("VmRSS");
        long[] max = new long[2];
        Exception[] failed = new Exception[1];
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Thread sampler = new Thread(() -> {
            try {
                while (true) {
                    max[0] = Math.max(max[0], statusKib("RssAnon"));
                    max[1] = Math.max(max[1], statusKib("RssFile"));
                    if (done.get()) {
                        return;
                    }
                    Thread.sleep(2);
                }
            } catch (Exception e) {
                failed[0] = e;
            }
        }, "peak-memory-sampler");
        sampler.start();
        try {
            op.call();
        } finally {
            done.set(true);
            sampler.join();
        }
        if (failed[0] != null) {
            throw failed[0];
        }
        return new PeakMemory(statusKib("VmHWM") / 1024.0, start / 1024.0, max[0] / 1024.0, max[1] / 1024.0);
    }

    String toJson() {
        return "{\"hwm_mib\":" + hwmMib + ",\"start_mib\":" + startMib + ",\"anon_mib\":" + anonMib + ",\"file_mib\":"
            + fileMib + "}";
    }

    static PeakMemory fromJson(String json) {
        return new PeakMemory(field(json, "hwm_mib"), field(json, "start_mib"), field(json, "anon_mib"),
            field(json, "file_mib"));
    }

    private static double field(String json, String name) {
        int at = json.indexOf("\"" + name + "\":");
        if (at < 0) {
            throw new IllegalStateException("no " + name + " in " + json);
        }
        int from = at + name.length() + 3;
        int to = from;
        while (to < json.length() && "0123456789.E-".indexOf(json.charAt(to)) >= 0) {
            to++;
        }
        return Double.parseDouble(json.substring(from, to));
    }
}
