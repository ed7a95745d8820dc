//! The reads of a `.log` mapping ([`MappedFile`](crate::MappedFile)): pin, load the published
//! length, copy the bytes below it (or lend them to a closure, [`lend_published`]), unpin. The production copy is a plain `memcpy`
//! ([`copy_published`]), sound because nobody writes a byte below the published length while a
//! reader's pin is held (docs/unsafe.md, "Mapped data files"); the loom models and the tests use
//! a copy of relaxed word loads ([`copy_words`]).

use super::{Memory, MmapMemory, SwapCell};
use crate::loom::{AtomicUsize, Ordering};

/// Pins the active mapping of `cell`, loads the published length (the cell's payload), and hands
/// `copy` the words below it (see [`Memory::cells_up_to`]), that length, `position` and `buf`,
/// then unpins; returns what `copy` returns. `None` once closed.
///
/// Every byte below the length handed to `copy` is written (and its write ordered before
/// this call's acquire load), and none of them is written again until `copy` returns: the
/// owner writes only at or past the published length, and a shrink waits for this pin before
/// the file is cut and appended to again (docs/unsafe.md, "Mapped data files").
#[inline]
pub(crate) fn read_with<M: Memory>(
    cell: &SwapCell<M, AtomicUsize>,
    position: usize,
    buf: &mut [u8],
    copy: impl FnOnce(&[M::Word], usize, usize, &mut [u8]) -> usize,
) -> Option<usize> {
    let pin = cell.pin().ok()?;
    // Acquire, and after the pin: pairs with the owner's `Release` publication (the bytes
    // below the length are written), and a mapping installed after a shrink is only seen
    // together with the lowered length (see `mapped_file.rs`).
    let published = cell.extra().load(Ordering::Acquire);
    // Only the words below the published length are viewed: a mapping may reach past the
    // end of the file, and no reference may cover a page the file does not back.
    pin.with(|mem| copy(mem.cells_up_to(published), published, position, buf))
}

/// [`read_with`] with the plain copy ([`copy_published`]): the bytes at `position` of the
/// mapping, up to the published length and the end of the pinned mapping, copied into `buf`;
/// how many were copied, or `None` once closed.
#[inline]
pub(crate) fn read_published(
    cell: &SwapCell<MmapMemory, AtomicUsize>,
    position: usize,
    buf: &mut [u8],
) -> Option<usize> {
    read_with(cell, position, buf, |cells, published, position, buf| {
        #[expect(unsafe_code, reason = "a plain copy of published bytes")]
        // SAFETY:
        // - `published` is the length `read_with` loaded under the pin it holds while this
        //   runs, which is `copy_published`'s contract.
        unsafe {
            copy_published(cells, published, position, buf)
        }
    })
}

/// Pins the active mapping of `cell`, loads the published length, and, when the words below it
/// cover all of `position..position + len`, hands `lend` those words (see
/// [`Memory::cells_up_to`]), `position` and `len`, then unpins; returns what `lend` returns.
/// `None` (without calling `lend`) once closed, while evicted, or when the range reaches past
/// the published length or the pinned mapping.
///
/// What [`read_with`] guarantees of the bytes it hands over holds for the whole call of `lend`:
/// each byte of the range is written (ordered before this call's acquire load) and not written
/// again until `lend` returns, however long it runs. The owner writes only at or past the
/// published length, and every truncation below it waits for this pin before the file is cut,
/// so a truncation followed by appends rewrites these bytes only after this pin is released
/// (docs/unsafe.md, "Mapped data files", contract 7).
#[inline]
pub(crate) fn lend_with<M: Memory, R>(
    cell: &SwapCell<M, AtomicUsize>,
    position: usize,
    len: usize,
    lend: impl FnOnce(&[M::Word], usize, usize) -> R,
) -> Option<R> {
    let pin = cell.pin().ok()?;
    // Acquire, after the pin, as in `read_with`.
    let published = cell.extra().load(Ordering::Acquire);
    pin.with(|mem| {
        let cells = mem.cells_up_to(published);
        (copy_len(cells, published, position, len) == len).then(|| lend(cells, position, len))
    })
    .flatten()
}

/// [`lend_with`] over a real mapping: `f` borrows the `len` published bytes at `position` of
/// the pinned mapping, with no copy, or is not called (`None`) when they are not all mapped
/// and published. A truncation of the file waits until `f` returns.
#[inline]
pub(crate) fn lend_published<R>(
    cell: &SwapCell<MmapMemory, AtomicUsize>,
    position: usize,
    len: usize,
    f: impl FnOnce(&[u8]) -> R,
) -> Option<R> {
    lend_with(cell, position, len, |cells, position, len| {
        #[expect(unsafe_code, reason = "lending published bytes of a mapping")]
        // SAFETY:
        // - `cells`, `position` and `len` come from `lend_with`, which checked that
        //   `position + len` is at most the published length it loaded under the pin it
        //   holds while this runs, and at most `4 * cells.len()`: `published_bytes`'s contract.
        let bytes = unsafe { published_bytes(cells, position, len) };
        f(bytes)
    })
}

/// The `len` bytes at `position` of `cells` as a byte slice, borrowed as long as `cells` is.
///
/// # Safety
/// `position + len` must be at most `4 * cells.len()` and at most a published length loaded by
/// [`lend_with`] under the pin that keeps `cells` alive, and the slice must not outlive that pin:
/// then no byte of it is written while it lives (docs/unsafe.md, "Mapped data files",
/// contracts 2, 3 and 7).
#[inline]
#[expect(
    unsafe_code,
    reason = "the caller vouches that no byte lent is written while it is borrowed"
)]
unsafe fn published_bytes(
    cells: &[std::sync::atomic::AtomicU32],
    position: usize,
    len: usize,
) -> &[u8] {
    if len == 0 {
        return &[];
    }
    // In bounds (`len > 0`, so `position` is below the end of `cells`): the pointer `add` gives.
    let start = cells.as_ptr().cast::<u8>().wrapping_add(position);
    #[expect(unsafe_code, reason = "a shared view of published bytes of a mapping")]
    // SAFETY:
    // - `start..start + len` lies inside the memory `cells` covers (`position + len <=
    //   4 * cells.len()`): one mapping, mapped and in pages the file backs, alive for the
    //   borrow of `cells` (the caller's pin), initialized (any byte is a valid `u8`), and
    //   `len <= isize::MAX` since `cells` fits in memory; `u8` needs no alignment.
    // - The returned `&[u8]` asserts that nothing writes these bytes while it lives: every
    //   byte lies below the published length the caller loaded under its pin, and by the
    //   caller's contract none is written until the pin is released, which outlives the slice
    //   (the words are `UnsafeCell`s, so viewing them as plain bytes breaks no borrow of
    //   `cells`; other readers only load them, which does not conflict).
    // - The kernel's stores of a concurrent append touch only bytes at or past the published
    //   length, outside the slice.
    unsafe {
        std::slice::from_raw_parts(start, len)
    }
}

/// How many bytes a copy of `want` bytes at `position` takes from `cells`, stopping at
/// `published` and at the end of `cells`.
#[inline]
fn copy_len<W>(cells: &[W], published: usize, position: usize, want: usize) -> usize {
    let limit = published.min(cells.len().saturating_mul(4));
    want.min(limit.saturating_sub(position))
}

/// Copies the bytes at `position` of `cells` into `buf`, stopping at `published`, at the end of
/// `cells` and at the end of `buf`; returns how many. A plain `memcpy` of exactly those bytes:
/// no byte at or past `published` is read, so the kernel's stores of an append into the rest
/// of the last word (or page) are not a conflicting access.
///
/// # Safety
/// No byte below `published` (in the mapping `cells` views) may be written while this runs:
/// `published` must be a published length loaded by [`read_with`] under its pin
/// (docs/unsafe.md, "Mapped data files", contracts 2 and 3).
#[inline]
#[expect(
    unsafe_code,
    reason = "the caller vouches that no byte copied is being written"
)]
unsafe fn copy_published(
    cells: &[std::sync::atomic::AtomicU32],
    published: usize,
    position: usize,
    buf: &mut [u8],
) -> usize {
    let n = copy_len(cells, published, position, buf.len());
    if n == 0 {
        return 0;
    }
    // In bounds (`n > 0`, so `position` is below the end of `cells`): the pointer `add` gives.
    let src = cells.as_ptr().cast::<u8>().wrapping_add(position);
    #[expect(unsafe_code, reason = "copying published bytes out of a mapping")]
    // SAFETY:
    // - `src` is byte `position` of `cells`, and `position + n <= published.min(4 * cells.len())`
    //   (`copy_len`), so the source range lies inside the memory `cells` covers: mapped, in
    //   pages the file backs, alive while `cells` is borrowed (the caller's pin), and
    //   initialized (any byte is a valid `u8`).
    // - Reading through a pointer derived from `&[AtomicU32]` is allowed: the words are
    //   `UnsafeCell`s, so the shared borrow does not freeze them.
    // - No data race: every byte read lies below `published`, and by this function's contract
    //   no such byte is written until it returns (a concurrent append writes only at or past
    //   `published`, bytes this copy does not touch).
    // - `buf` is a `&mut [u8]` of at least `n` bytes, so it is valid for writes and cannot
    //   overlap the mapping, which is only ever viewed through shared references.
    unsafe {
        std::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), n);
    }
    n
}

/// As [`copy_published`], one relaxed 32-bit load per word: the copy of the loom models, whose
/// memory is loom's atomics (which a plain copy cannot read), and the tests' reference.
#[cfg(test)]
pub(crate) fn copy_words<W: super::Word>(
    cells: &[W],
    published: usize,
    position: usize,
    buf: &mut [u8],
) -> usize {
    let n = copy_len(cells, published, position, buf.len());
    for (i, byte) in buf.iter_mut().take(n).enumerate() {
        let at = position + i;
        let word = native_bytes(super::load(cells, at / 4));
        *byte = word.get(at % 4).copied().unwrap_or_default();
    }
    n
}

/// A word's bytes in memory order: the word was loaded in the host's byte order.
#[cfg(test)]
#[inline]
#[expect(
    clippy::host_endian_bytes,
    reason = "memory order of a word loaded from memory is the host's order"
)]
fn native_bytes(word: u32) -> [u8; 4] {
    word.to_ne_bytes()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[expect(clippy::host_endian_bytes, reason = "a word's memory order")]
    fn cells(bytes: &[u8]) -> Vec<AtomicU32> {
        bytes
            .chunks(4)
            .map(|c| {
                let mut w = [0_u8; 4];
                w[..c.len()].copy_from_slice(c);
                AtomicU32::new(u32::from_ne_bytes(w))
            })
            .collect()
    }

    /// Both copies of `len` bytes at `position` with `published` bytes published, checked
    /// against slicing `data`: the count, the bytes, and nothing written past the count.
    fn check(data: &[u8], words: &[AtomicU32], published: usize, position: usize, len: usize) {
        let end = published.min(data.len() / 4 * 4);
        let expect = len.min(end.saturating_sub(position));
        let want = data.get(position..position + expect).unwrap_or_default();
        let mut plain = vec![0xAA_u8; len];
        #[expect(unsafe_code, reason = "testing the plain copy")]
        // SAFETY:
        // - Nothing writes `words` while the test runs (one thread, shared borrow).
        let n = unsafe { copy_published(words, published, position, &mut plain) };
        let mut atomic = vec![0xAA_u8; len];
        let m = copy_words(words, published, position, &mut atomic);
        // The loan covers exactly the same bytes when the copy would fill `len`, else none.
        if copy_len(words, published, position, len) == len {
            #[expect(unsafe_code, reason = "testing the loan")]
            // SAFETY:
            // - `copy_len` checked the bounds; nothing writes `words` while the test runs.
            let lent = unsafe { published_bytes(words, position, len) };
            assert_eq!(
                lent, want,
                "lent: published {published} position {position} len {len}"
            );
        }
        for (what, got, buf) in [("plain", n, &plain), ("words", m, &atomic)] {
            let at = format!("{what}: published {published} position {position} len {len}");
            assert_eq!(got, expect, "{at}");
            assert_eq!(&buf[..got], want, "{at}");
            assert!(buf[got..].iter().all(|&b| b == 0xAA), "{at}");
        }
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| {
                u8::try_from(i % 251)
                    .unwrap()
                    .wrapping_mul(37)
                    .wrapping_add(1)
            })
            .collect()
    }

    #[test]
    fn copies_match_slicing_for_every_alignment_and_length() {
        let data = data(96);
        let words = cells(&data);
        for published in [0, 1, 2, 3, 4, 5, 31, 32, 33, 63, 64, 95, 96, 200] {
            for position in 0..100 {
                for len in 0..100 {
                    check(&data, &words, published, position, len);
                }
            }
        }
    }

    #[test]
    fn a_mapping_shorter_than_the_published_length_bounds_the_copy() {
        // `cells` ends at the last word a reader may view, whatever was published.
        let data = data(64);
        let words = cells(&data);
        for position in 0..70 {
            check(&data[..40], &words[..10], 64, position, 64);
            check(&data[..40], &words[..10], 37, position, 64);
        }
    }

    proptest::proptest! {
        #[test]
        fn long_copies_match_slicing(
            size in 0_usize..20_000,
            published in 0_usize..20_100,
            position in 0_usize..20_100,
            len in 0_usize..20_100,
        ) {
            let data = data(size / 4 * 4);
            let words = cells(&data);
            check(&data, &words, published, position, len);
        }
    }
}
