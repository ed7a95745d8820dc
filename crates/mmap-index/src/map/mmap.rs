//! [`MmapMemory`]: a shared memory map of a file (or anonymous memory, for a stored backing),
//! viewed as atomic 32-bit words, and the process-wide counts of live mappings.

use std::io;
use std::os::fd::BorrowedFd;

use super::Memory;

/// How many mappings this process holds right now, over all indexes. Tests and benches read it
/// through [`live_mappings`](crate::live_mappings) to prove that lazy opens create none. A plain
/// std atomic even under loom: it is a statistic, not part of any protocol.
static LIVE_MAPPINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The number of index mappings currently alive in this process.
pub(crate) fn live_mappings() -> usize {
    LIVE_MAPPINGS.load(std::sync::atomic::Ordering::Relaxed)
}

/// How many mappings of growing data files ([`MappedFile`](crate::MappedFile), the `.log`)
/// this process holds right now; kept apart from [`LIVE_MAPPINGS`] so that index accounting
/// (and the tests that rely on it) is unchanged.
static LIVE_FILE_MAPPINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The number of data-file mappings currently alive in this process.
pub(crate) fn live_file_mappings() -> usize {
    LIVE_FILE_MAPPINGS.load(std::sync::atomic::Ordering::Relaxed)
}

/// A shared memory map of an index file (`MAP_SHARED`, offset 0), writable or read-only.
#[derive(Debug)]
pub(crate) struct MmapMemory {
    /// `None` for a zero-length file: nothing is mapped at all.
    map: Option<memmap2::MmapRaw>,
    /// `map.len() / 4`.
    words: usize,
    /// The bytes from 0 known to have disk blocks (or data): the only ones ever viewed through
    /// [`Memory::cells`]. Past them an index file is a hole, where a first touch of a page
    /// through the mapping can be a `SIGBUS` on a full disk (docs/unsafe.md, contract 5); loads
    /// there read as zeros without touching memory. Raised (`Release`) by the writer after it
    /// allocated the blocks and before it stores into them; read `Acquire`.
    backed: std::sync::atomic::AtomicUsize,
    /// `backed` in whole words, at most `words`: the length of [`Memory::cells`], kept ready so
    /// that a lookup's first probe waits on one load rather than on its arithmetic. Raised with
    /// `backed`, after it.
    viewed: std::sync::atomic::AtomicUsize,
    /// False for a `PROT_READ` mapping, which must never be stored to.
    writable: bool,
    /// The live-mapping counter this mapping is counted in.
    counter: &'static std::sync::atomic::AtomicUsize,
}

impl MmapMemory {
    /// Maps the first `len` bytes of `file` shared, read-write or (for a file opened read-only)
    /// read-only, of which only the first `backed` bytes (those with disk blocks) are viewed.
    pub(crate) fn map(
        file: BorrowedFd<'_>,
        len: usize,
        writable: bool,
        backed: usize,
    ) -> io::Result<Self> {
        let map = Self::map_counted(file, len, writable, &LIVE_MAPPINGS, true)?;
        let backed = backed.min(len);
        map.backed
            .store(backed, std::sync::atomic::Ordering::Release);
        map.viewed.store(
            backed.div_ceil(4).min(map.words),
            std::sync::atomic::Ordering::Release,
        );
        Ok(map)
    }

    /// The bytes from 0 that may be viewed (see the field).
    #[inline]
    pub(crate) fn backed_bytes(&self) -> usize {
        self.backed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Records that the first `bytes` bytes (at most the mapping) now have disk blocks.
    pub(crate) fn set_backed(&self, bytes: usize) {
        self.set_viewed(bytes);
    }

    /// Raises `backed` to `bytes` (at most the mapping), then `viewed`. Only ever raised once
    /// the mapping is shared: the words a lookup views only grow while the mapping lives.
    fn set_viewed(&self, bytes: usize) {
        let bytes = bytes.min(self.words * 4);
        self.backed
            .fetch_max(bytes, std::sync::atomic::Ordering::Release);
        self.viewed.fetch_max(
            bytes.div_ceil(4).min(self.words),
            std::sync::atomic::Ordering::Release,
        );
    }

    /// Maps the first `len` bytes of `file` shared and read-only (`PROT_READ`), counted as a
    /// data-file mapping. `len` may exceed the file's length (mapping ahead of a growing file):
    /// the owner of the mapping must then never let a reader touch a page past the end of file.
    pub(crate) fn map_data_read_only(file: BorrowedFd<'_>, len: usize) -> io::Result<Self> {
        Self::map_counted(file, len, false, &LIVE_FILE_MAPPINGS, false)
    }

    /// Anonymous memory holding a copy of `bytes`, counted as an index mapping: the page cache
    /// of an index whose file lives in an [`IndexStore`](seglog_fs::IndexStore) rather than on a real
    /// file system. `writable` as for [`MmapMemory::map`].
    pub(crate) fn anonymous(bytes: &[u8], writable: bool) -> io::Result<Self> {
        Self::anonymous_with_len(bytes, bytes.len(), writable)
    }

    /// Anonymous memory of `len` bytes (at least `bytes.len()`) starting with a copy of `bytes`,
    /// counted as an index mapping; only the copied bytes are viewed, the rest reads as zeros
    /// without being touched: the private snapshot of a read-only open, whose file's tail past
    /// its data is a hole.
    pub(crate) fn anonymous_with_len(bytes: &[u8], len: usize, writable: bool) -> io::Result<Self> {
        let len = len.max(bytes.len());
        if len == 0 {
            return Ok(Self {
                map: None,
                words: 0,
                backed: std::sync::atomic::AtomicUsize::new(0),
                viewed: std::sync::atomic::AtomicUsize::new(0),
                writable,
                counter: &LIVE_MAPPINGS,
            });
        }
        let mut anon = memmap2::MmapOptions::new().len(len).map_anon()?;
        anon.get_mut(..bytes.len())
            .ok_or_else(|| io::Error::other("mmap returned a short mapping"))?
            .copy_from_slice(bytes);
        let map = memmap2::MmapRaw::from(anon);
        if map.len() != len
            || map
                .as_ptr()
                .align_offset(align_of::<std::sync::atomic::AtomicU32>())
                != 0
        {
            return Err(io::Error::other(
                "mmap returned a short or misaligned mapping",
            ));
        }
        LIVE_MAPPINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Self {
            map: Some(map),
            words: len / 4,
            // Anonymous memory has no holes; the bytes past the copy are zeros, left untouched.
            backed: std::sync::atomic::AtomicUsize::new(bytes.len()),
            viewed: std::sync::atomic::AtomicUsize::new(bytes.len().div_ceil(4).min(len / 4)),
            writable,
            counter: &LIVE_MAPPINGS,
        })
    }

    /// The first `len` bytes of the memory (zeros past its end), read word by word with the same
    /// relaxed atomic loads as lookups: what a write-back of the mapping would write.
    pub(crate) fn snapshot(&self, len: usize) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(len);
        for word in self.atomics() {
            let value = word.load(std::sync::atomic::Ordering::Relaxed);
            bytes.extend_from_slice(zerocopy::IntoBytes::as_bytes(&value));
        }
        bytes.resize(len, 0);
        bytes
    }

    fn map_counted(
        file: BorrowedFd<'_>,
        len: usize,
        writable: bool,
        counter: &'static std::sync::atomic::AtomicUsize,
        random_access: bool,
    ) -> io::Result<Self> {
        if len == 0 {
            return Ok(Self {
                map: None,
                words: 0,
                backed: std::sync::atomic::AtomicUsize::new(0),
                viewed: std::sync::atomic::AtomicUsize::new(0),
                writable,
                counter,
            });
        }
        let mut options = memmap2::MmapOptions::new();
        options.len(len);
        let map = if writable {
            options.map_raw(&file)?
        } else {
            options.map_raw_read_only(&file)?
        };
        if map.len() != len
            || map
                .as_ptr()
                .align_offset(align_of::<std::sync::atomic::AtomicU32>())
                != 0
        {
            return Err(io::Error::other(
                "mmap returned a short or misaligned mapping",
            ));
        }
        if random_access {
            // An index is read by binary search and written a few bytes at a time: readahead on
            // a fault only zero-fills pages of the preallocated (sparse) tail that no entry will
            // reach soon, which made each append's first touch of a page cost microseconds.
            // Advice is a hint: a kernel that refuses it changes nothing but speed.
            let _ = map.advise(memmap2::Advice::Random);
        }
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Self {
            map: Some(map),
            words: len / 4,
            // A data file's mapping is viewed only below a published length (`cells_up_to`);
            // an index's is narrowed by `map`.
            backed: std::sync::atomic::AtomicUsize::new(len),
            viewed: std::sync::atomic::AtomicUsize::new(len / 4),
            writable,
            counter,
        })
    }

    /// The mapped words that may be viewed (below `backed`) as atomics.
    #[inline]
    fn atomics(&self) -> &[std::sync::atomic::AtomicU32] {
        self.atomics_prefix(self.viewed.load(std::sync::atomic::Ordering::Acquire))
    }

    /// The first `words` mapped words (at most all of them) as atomics.
    #[inline]
    fn atomics_prefix(&self, words: usize) -> &[std::sync::atomic::AtomicU32] {
        let Some(map) = &self.map else {
            return &[];
        };
        let words = words.min(self.words);
        #[expect(unsafe_code, reason = "viewing the mapped file as atomic words")]
        #[expect(
            clippy::cast_ptr_alignment,
            reason = "a mapping is page-aligned; `map` checks it"
        )]
        // SAFETY:
        // - The pointer is non-null and aligned for `AtomicU32`: a live mapping's start is
        //   page-aligned (and `map` checked it).
        // - Valid for `words * 4 <= map.len()` bytes while `&self` lives (unmapped only on drop),
        //   in pages the file backs with blocks: an index is viewed below `backed` (contract 5);
        //   a `.log` below a published length (docs/unsafe.md); `words * 4` fits `isize`.
        // - The bytes are initialized and any bit pattern is a valid `AtomicU32`.
        // - We access them only through these atomics; docs/unsafe.md rules out other writers
        //   except the kernel's `pwrite` (a race on values) and shrinking under a mapping.
        // - A read-only mapping is only read (`Relaxed` loads, a `.log`'s plain copy), which std
        //   allows on read-only memory; `Core::push` checks `Memory::writable` before any store.
        unsafe {
            std::slice::from_raw_parts(
                map.as_mut_ptr().cast::<std::sync::atomic::AtomicU32>(),
                words,
            )
        }
    }

    /// `msync(MS_SYNC)` of the whole mapping.
    pub(crate) fn flush(&self) -> io::Result<()> {
        self.map.as_ref().map_or(Ok(()), memmap2::MmapRaw::flush)
    }

    /// Whether a mapping exists (false for a zero-length file).
    pub(crate) fn is_mapped(&self) -> bool {
        self.map.is_some()
    }
}

impl Memory for MmapMemory {
    type Word = std::sync::atomic::AtomicU32;

    #[inline]
    fn cells(&self) -> &[std::sync::atomic::AtomicU32] {
        self.atomics()
    }

    /// All the mapped words, viewed or not: an index's capacity.
    #[inline]
    fn words(&self) -> usize {
        self.words
    }

    #[inline]
    fn cells_up_to(&self, bytes: usize) -> &[std::sync::atomic::AtomicU32] {
        self.atomics_prefix(bytes.div_ceil(4))
    }

    #[inline]
    fn writable(&self) -> bool {
        self.writable
    }
}

impl Drop for MmapMemory {
    fn drop(&mut self) {
        if self.map.take().is_some() {
            self.counter
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}
