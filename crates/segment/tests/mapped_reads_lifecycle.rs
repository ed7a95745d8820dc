//! The `.log` mapping's lifecycle, alone in its binary because it reads process-wide counters:
//! opening and appending map nothing, the first read maps the `.log` (and nothing on `SimFs`),
//! growth and truncation keep one mapping, and close and delete unmap it.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

mod common;

use seglog_fs::FileSystem;
use seglog_fs::sim::SimFs;
use seglog_mmap_index::{live_file_mappings, live_mappings};
use seglog_segment::FileRegion;
use seglog_segment::{LogSegment, SegmentConfig};

#[test]
fn opening_maps_nothing_reads_map_close_and_delete_unmap() {
    let dir = tempfile::tempdir().unwrap();
    let files = live_file_mappings();
    let segment = common::create(dir.path(), 0, 4096);
    for o in 0..100 {
        segment.append(o, &common::single(o)).unwrap();
    }
    assert_eq!(live_file_mappings(), files, "open and append map nothing");
    let indexes = live_mappings();
    assert_eq!(segment.read_next_offset().unwrap(), 100);
    assert_eq!(
        live_file_mappings(),
        files + 1,
        "the first read maps the .log"
    );
    assert_eq!(live_mappings(), indexes, "index accounting is unchanged");
    let fetch = segment.read_simple(42, 1 << 20).unwrap().unwrap();
    let mut buf = Vec::new();
    segment.read_region(fetch.region, &mut buf).unwrap();
    assert_eq!(common::records_of(&buf)[0].0, 42);
    segment.truncate_to(50, 0).unwrap();
    assert_eq!(segment.read_next_offset().unwrap(), 50);
    segment.append(50, &common::single(50)).unwrap();
    assert_eq!(segment.read_next_offset().unwrap(), 51);
    assert_eq!(live_file_mappings(), files + 1);
    segment.close().unwrap();
    assert_eq!(live_file_mappings(), files, "close unmaps");
    // Reads after close still work, through pread, and map nothing again.
    segment
        .read_region(
            FileRegion {
                position: 0,
                length: 10,
            },
            &mut buf,
        )
        .unwrap();
    assert_eq!(buf.len(), 10);
    assert_eq!(live_file_mappings(), files);
    drop(segment);

    let other = common::create(dir.path(), 1000, 4096);
    other.append(1000, &common::single(1000)).unwrap();
    assert_eq!(other.read_next_offset().unwrap(), 1001);
    assert_eq!(live_file_mappings(), files + 1);
    other.delete().unwrap();
    assert_eq!(live_file_mappings(), files, "delete unmaps");

    // The simulated file system never maps.
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let sim = LogSegment::open(fs, dir.path(), 0, SegmentConfig::default(), false, "", 0).unwrap();
    sim.append(0, &common::single(0)).unwrap();
    assert_eq!(sim.read_next_offset().unwrap(), 1);
    assert_eq!(live_file_mappings(), files);
}
