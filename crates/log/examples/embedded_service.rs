//! A service that embeds a seglog partition log: it appends with durable acknowledgements, reads
//! from an offset, looks an offset up by time, and shuts down cleanly.
//!
//! Run it with `cargo run -p seglog-log --example embedded_service [DIR]`.

use std::error::Error;

use seglog_log::record::{self, BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{
    Isolation, ListOffset, LogDir, LogDirOptions, RealFs, SchedulerConfig, SystemClock, Time,
    TopicPartition,
};

fn main() -> Result<(), Box<dyn Error>> {
    let root = std::env::args()
        .nth(1)
        .map_or_else(|| std::env::temp_dir().join("seglog-example"), Into::into);
    let options = LogDirOptions::default();
    // Open the log directory: it recovers whatever a previous run left, and holds a lock.
    let (dir, report) = LogDir::open(RealFs, &root, options)
        .map_err(|e| format!("opening the log directory {}: {e}", root.display()))?;
    println!(
        "opened {} (clean shutdown last time: {})",
        root.display(),
        report.had_clean_shutdown
    );
    dir.start_scheduler(SchedulerConfig::default());
    let log = dir.create_log(&TopicPartition::new("events", 0), None)?;

    // Append three batches; each call returns once its records are on stable storage.
    let mut builder = BatchBuilder::new();
    let now = SystemClock.now_ms();
    for batch_no in 0..3 {
        let values: Vec<String> = (0..4).map(|i| format!("event {batch_no}.{i}")).collect();
        let records = values.iter().zip(0..).map(|(v, i)| {
            NewRecord::new(
                i,
                now + i64::from(batch_no),
                Some(b"user-1"),
                Some(v.as_bytes()),
            )
        });
        let mut batch = Vec::new();
        builder.build(&BatchOptions::new(0, Compression::Lz4), records, &mut batch)?;
        let ack = log.append_durable(&mut batch)?;
        println!("acked offsets {}..={}", ack.first_offset, ack.last_offset);
    }
    log.set_high_watermark(log.log_end_offset());

    // Read from an offset, as a consumer would.
    let fetch = log.read(
        log.log_start_offset(),
        1 << 20,
        Isolation::HighWatermark,
        true,
    )?;
    let mut bytes = Vec::new();
    fetch.read_into(&mut bytes)?;
    for record in record::records(&bytes) {
        let record = record?;
        let value =
            String::from_utf8_lossy(record.value.as_deref().unwrap_or_default()).into_owned();
        println!("offset {} at {}: {value}", record.offset, record.timestamp);
    }

    // Look an offset up by time.
    let found = log.offset_for_timestamp(ListOffset::Timestamp(now + 1))?;
    println!(
        "first record at or after {}: {:?}",
        now + 1,
        found.map(|f| f.offset)
    );

    // Shut down cleanly: flush, close, checkpoints, clean-shutdown marker.
    dir.close()?;
    println!("closed cleanly");
    Ok(())
}
