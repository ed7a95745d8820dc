//! [`Records::try_for_each_view`]: the iterator's records handed to a callback with the decode
//! inlined into one loop, for a consumer that reads every record; and the iterator's step.

use std::ops::ControlFlow;

use super::{RecordView, Records, to_u64};
use crate::error::{CorruptKind, Field, Result};

impl<'a> Records<'a> {
    /// Hands `f` each record in turn, as the iterator yields them, and stops at the first error
    /// (returned, after `f` had the records before it) or when `f` breaks (`Ok(Some(b))`).
    ///
    /// The same records and errors as the iterator, with the decode inlined into this loop: a
    /// `RecordView` returned from an out-of-line `next` goes through memory, and reading it back
    /// cost a consumer that reads every record more than the decode (docs/perf/consume.md).
    #[inline]
    pub fn try_for_each_view<B>(
        &mut self,
        mut f: impl FnMut(&RecordView<'a>) -> ControlFlow<B>,
    ) -> Result<Option<B>> {
        while let Some(record) = self.step() {
            if let ControlFlow::Break(b) = f(&record?) {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }

    /// The iterator's step: the next record, the error in its place, or `None` after the last
    /// record or the first error.
    #[expect(
        clippy::inline_always,
        reason = "inlined into try_for_each_view's loop, which is the point of it (docs/perf/consume.md)"
    )]
    #[inline(always)]
    pub(super) fn step(&mut self) -> Option<Result<RecordView<'a>>> {
        if self.failed || self.read >= self.ctx.count {
            return None;
        }
        self.read += 1;
        let rec = match self.decode() {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        if self.read == self.ctx.count && self.pos != self.buf.len() {
            let kind = CorruptKind::RecordsRemaining {
                remaining: to_u64(self.buf.len() - self.pos),
            };
            let pos = self.pos;
            return Some(Err(self.err(pos, Field::Records, kind)));
        }
        Some(Ok(rec))
    }
}
