//! Records as JSON Lines (the writer's expectations, the clients' and `seglog consume`'s output),
//! and their comparison.

use anyhow::{Context, Result, ensure};
use serde_json::Value;

/// One JSON Lines file or output, parsed.
pub(super) fn json_lines(text: &str, what: &str) -> Result<Vec<Value>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{what}: line {}: {l}", i + 1))
        })
        .collect()
}

/// `seglog consume --json --json-bytes base64` output (kcat's `-J` shape: `ts`, `tstype`,
/// `payload`, headers as a flat name/value array, bytes in base64) as the records the writer and
/// Kafka's clients list: `offset`, `timestamp`, `timestamp_type`, `key`, `value`, `headers` as
/// `[{"key","value"}]`.
pub(super) fn seglog_consumed(text: &str) -> Result<Vec<Value>> {
    json_lines(text, "seglog consume")?
        .iter()
        .map(|v| {
            let headers: Vec<Value> = v["headers"]
                .as_array()
                .map(|flat| {
                    flat.chunks(2)
                        .map(|kv| {
                            serde_json::json!({
                                "key": kv.first().cloned().unwrap_or(Value::Null),
                                "value": kv.get(1).cloned().unwrap_or(Value::Null),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            let timestamp_type = match v["tstype"].as_str() {
                Some("create") => "CreateTime",
                Some("logappend") => "LogAppendTime",
                Some(other) => anyhow::bail!("seglog consume: tstype {other:?}"),
                None => "NoTimestampType",
            };
            Ok(serde_json::json!({
                "offset": v["offset"],
                "timestamp": v.get("ts").cloned().unwrap_or(Value::from(-1)),
                "timestamp_type": timestamp_type,
                "key": v["key"],
                "value": v["payload"],
                "headers": headers,
            }))
        })
        .collect()
}

/// The fields every reader must agree on.
fn record_view(v: &Value) -> Value {
    serde_json::json!({
        "offset": v["offset"],
        "timestamp": v["timestamp"],
        "key": v["key"],
        "value": v["value"],
        "headers": v["headers"],
    })
}

/// Fails with the first difference if the two record lists are not the same.
pub(super) fn same_records(what: &str, expected: &[Value], actual: &[Value]) -> Result<()> {
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        let (e, a) = (record_view(e), record_view(a));
        ensure!(
            e == a,
            "{what}: record #{i} differs:\n  expected {e}\n  actual   {a}"
        );
    }
    ensure!(
        expected.len() == actual.len(),
        "{what}: expected {} records, got {}",
        expected.len(),
        actual.len()
    );
    Ok(())
}

pub(super) fn lines_of(values: &[Value]) -> String {
    values.iter().fold(String::new(), |mut text, v| {
        text.push_str(&v.to_string());
        text.push('\n');
        text
    })
}

pub(super) fn b64_decode(s: &str) -> Result<Vec<u8>> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0_u32, 0_u32);
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET
            .iter()
            .position(|&a| a == c)
            .with_context(|| format!("bad base64: {s}"))?;
        acc = (acc << 6) | u32::try_from(v)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xFF)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn seglog_consume_lines_read_as_the_writers_records() {
        let line = r#"{"topic":"t","partition":0,"offset":0,"tstype":"create","ts":5,"broker":-1,"headers":["h",null,"i","YQ=="],"key":null,"payload":"YQ=="}"#;
        let got = seglog_consumed(line).unwrap();
        assert_eq!(
            got[0],
            serde_json::json!({"offset":0,"timestamp":5,"timestamp_type":"CreateTime","key":null,"value":"YQ==","headers":[{"key":"h","value":null},{"key":"i","value":"YQ=="}]})
        );
        let v0 =
            r#"{"topic":"t","partition":0,"offset":3,"broker":-1,"key":"YQ==","payload":null}"#;
        let got = seglog_consumed(v0).unwrap();
        assert_eq!(got[0]["timestamp"], -1);
        assert_eq!(got[0]["timestamp_type"], "NoTimestampType");
        assert_eq!(got[0]["headers"], serde_json::json!([]));
    }

    #[test]
    fn records_compare_on_every_field() {
        let a = json_lines(
            r#"{"offset":0,"timestamp":5,"key":null,"value":"YQ==","headers":[{"key":"h","value":null}],"codec":"none"}"#,
            "a",
        )
        .unwrap();
        let same = json_lines(
            r#"{"headers":[{"value":null,"key":"h"}],"value":"YQ==","key":null,"timestamp":5,"offset":0,"timestamp_type":"CreateTime"}"#,
            "b",
        )
        .unwrap();
        same_records("t", &a, &same).unwrap();
        for changed in [
            r#"{"offset":1,"timestamp":5,"key":null,"value":"YQ==","headers":[{"key":"h","value":null}]}"#,
            r#"{"offset":0,"timestamp":6,"key":null,"value":"YQ==","headers":[{"key":"h","value":null}]}"#,
            r#"{"offset":0,"timestamp":5,"key":"YQ==","value":"YQ==","headers":[{"key":"h","value":null}]}"#,
            r#"{"offset":0,"timestamp":5,"key":null,"value":"Yg==","headers":[{"key":"h","value":null}]}"#,
            r#"{"offset":0,"timestamp":5,"key":null,"value":"YQ==","headers":[{"key":"h","value":""}]}"#,
            r#"{"offset":0,"timestamp":5,"key":null,"value":"YQ==","headers":[]}"#,
        ] {
            let b = json_lines(changed, "b").unwrap();
            assert!(same_records("t", &a, &b).is_err(), "{changed}");
        }
        assert!(same_records("t", &a, &[]).is_err());
    }

    #[test]
    fn base64_decodes() {
        assert_eq!(b64_decode("").unwrap(), b"");
        assert_eq!(b64_decode("YQ==").unwrap(), b"a");
        assert_eq!(b64_decode("aGVsbG8gd29ybGQ=").unwrap(), b"hello world");
        assert_eq!(b64_decode("+/8=").unwrap(), [0xfb, 0xff]);
        assert!(b64_decode("a*").is_err());
    }
}
