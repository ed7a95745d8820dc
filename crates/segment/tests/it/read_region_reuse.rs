//! `read_region` into a reused buffer: the buffer ends up holding exactly the region's bytes
//! (or the part of it the file holds), whatever it held before, longer or shorter, through the
//! `.log` mapping and through `pread` after close.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use seglog_segment::FileRegion;

#[test]
fn a_reused_buffer_holds_exactly_the_region() {
    let dir = tempfile::tempdir().unwrap();
    let segment = common::create(dir.path(), 0, 4096);
    for o in 0..50 {
        segment.append(o, &common::single(o)).unwrap();
    }
    let file = std::fs::read(segment.log_path()).unwrap();
    let size = segment.size();
    assert_eq!(file.len() as u64, size);
    let mut buf = Vec::new();
    for mapped in [true, false] {
        if !mapped {
            // Later reads use `pread`.
            segment.close().unwrap();
        }
        for (position, length) in [
            (0, 10),
            (3, 300),
            (7, 1),
            (100, 0),
            (0, size),
            (size - 5, 5),
            (size - 5, 50),
            (size, 10),
            (size + 10, 10),
            (1, size),
        ] {
            for stale in [0, 1, 50, 2000] {
                buf.clear();
                buf.resize(stale, 0xEE);
                segment
                    .read_region(FileRegion { position, length }, &mut buf)
                    .unwrap();
                let from = usize::try_from(position.min(size)).unwrap();
                let to = usize::try_from((position + length).min(size)).unwrap();
                assert_eq!(
                    buf,
                    &file[from..to.max(from)],
                    "mapped {mapped} position {position} length {length} stale {stale}"
                );
            }
        }
    }
}
