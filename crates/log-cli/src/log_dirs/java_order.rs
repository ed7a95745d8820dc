//! `kafka-log-dirs.sh --describe`'s JSON, byte for byte: `LogDirsCommand` builds every object
//! as a `java.util.HashMap` and Jackson writes it in that map's iteration order, so the keys come
//! in bucket order (`{"brokers":..,"version":1}`), and so do the log directories (keyed by path)
//! and the partitions (keyed by `TopicPartition`). Entries that share a bucket keep the order
//! they were inserted in, which the broker's response decides; here they keep path or
//! (topic, partition) order.

use std::fmt::Write as _;

/// Java's `String.hashCode`: over UTF-16 code units, wrapping.
fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Kafka's `TopicPartition.hashCode`.
pub(crate) fn topic_partition_hash(topic: &str, partition: i32) -> i32 {
    31i32
        .wrapping_mul(31i32.wrapping_add(partition))
        .wrapping_add(string_hash(topic))
}

/// Java's `HashMap.hash`: the high half folded into the low one.
fn spread(hash: i32) -> u32 {
    let h = u32::from_be_bytes(hash.to_be_bytes());
    h ^ (h >> 16)
}

/// The table size of a `HashMap` that grew from the default 16 to hold `n` entries (load
/// factor 0.75).
fn capacity(n: usize) -> u32 {
    let mut cap: u32 = 16;
    while n > (cap as usize) / 4 * 3 && cap < (1 << 30) {
        cap *= 2;
    }
    cap
}

/// `items` (already in insertion order) in the iteration order of a `HashMap` holding them.
pub(crate) fn hash_map_order<T>(mut items: Vec<T>, hash: impl Fn(&T) -> i32) -> Vec<T> {
    let mask = capacity(items.len()) - 1;
    items.sort_by_key(|item| spread(hash(item)) & mask);
    items
}

/// One partition's line: `ReplicaInfo` as `LogDirsCommand` prints it.
pub(crate) struct PartitionJson<'a> {
    pub(crate) topic: &'a str,
    pub(crate) partition: i32,
    pub(crate) size: u64,
    pub(crate) offset_lag: i64,
    pub(crate) is_future: bool,
}

/// One log directory: its absolute path, the error class Kafka names for it, its partitions.
pub(crate) struct LogDirJson<'a> {
    pub(crate) log_dir: String,
    pub(crate) error: Option<&'static str>,
    pub(crate) partitions: Vec<PartitionJson<'a>>,
}

fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// The whole JSON line for one broker.
pub(crate) fn render(broker: i32, dirs: Vec<LogDirJson<'_>>) -> String {
    let dirs = hash_map_order(dirs, |d| string_hash(&d.log_dir));
    let mut out = format!("{{\"brokers\":[{{\"broker\":{broker},\"logDirs\":[");
    for (i, dir) in dirs.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"partitions\":[");
        let partitions = hash_map_order(dir.partitions, |p| {
            topic_partition_hash(p.topic, p.partition)
        });
        for (j, p) in partitions.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            let name = quoted(&format!("{}-{}", p.topic, p.partition));
            let _ = write!(
                out,
                "{{\"partition\":{name},\"size\":{},\"offsetLag\":{},\"isFuture\":{}}}",
                p.size, p.offset_lag, p.is_future
            );
        }
        let error = dir.error.map_or_else(|| "null".to_owned(), quoted);
        let _ = write!(
            out,
            "],\"error\":{error},\"logDir\":{}}}",
            quoted(&dir.log_dir)
        );
    }
    out.push_str("]}],\"version\":1}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hashes() {
        // Values Java gives: "brokers".hashCode(), new TopicPartition("t", 0).hashCode().
        assert_eq!(string_hash("brokers"), 150_569_914);
        assert_eq!(string_hash(""), 0);
        assert_eq!(topic_partition_hash("t", 0), 31 * 31 + 116);
    }

    #[test]
    fn keys_come_in_hash_map_order() {
        let order = hash_map_order(vec!["version", "brokers"], |k| string_hash(k));
        assert_eq!(order, ["brokers", "version"]);
        let order = hash_map_order(vec!["logDir", "error", "partitions"], |k| string_hash(k));
        assert_eq!(order, ["partitions", "error", "logDir"]);
        let order = hash_map_order(vec!["partition", "size", "offsetLag", "isFuture"], |k| {
            string_hash(k)
        });
        assert_eq!(order, ["partition", "size", "offsetLag", "isFuture"]);
        assert_eq!(capacity(12), 16);
        assert_eq!(capacity(13), 32);
    }

    #[test]
    fn partitions_come_in_a_brokers_order() {
        // A KRaft broker's published answer listed l07.storage.test-2, -1, -0 in that order.
        let topic = "l07.storage.test";
        let order = hash_map_order(vec![0, 1, 2], |p| topic_partition_hash(topic, *p));
        assert_eq!(order, [2, 1, 0]);
        let order = hash_map_order(vec![0, 1, 2], |p| topic_partition_hash("orders", *p));
        assert_eq!(order, [0, 1, 2]);
    }

    #[test]
    fn renders_kafkas_shape() {
        let json = render(
            1,
            vec![LogDirJson {
                log_dir: "/data/a".to_owned(),
                error: None,
                partitions: vec![PartitionJson {
                    topic: "t",
                    partition: 0,
                    size: 10,
                    offset_lag: 0,
                    is_future: false,
                }],
            }],
        );
        assert_eq!(
            json,
            "{\"brokers\":[{\"broker\":1,\"logDirs\":[{\"partitions\":[{\"partition\":\"t-0\",\"size\":10,\"offsetLag\":0,\"isFuture\":false}],\"error\":null,\"logDir\":\"/data/a\"}]}],\"version\":1}"
        );
    }
}
