//! The stable-toolchain driver: proptest feeding each target arbitrary bytes and structured
//! mutations of its seeds, for a number of cases or a wall-clock budget. A failure is shrunk by
//! proptest to a small input, which [`Failure`] carries so it can be saved and replayed.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

use crate::{Target, seeds};

/// How long a run may go.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// This many inputs.
    Cases(u64),
    /// Inputs until this much time has passed (checked between chunks of inputs).
    Time(Duration),
}

/// What a run did.
#[derive(Debug, Clone, Copy)]
pub struct Report {
    /// The target run.
    pub target: Target,
    /// Inputs executed.
    pub executions: u64,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

/// A failing input, shrunk.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The target that failed.
    pub target: Target,
    /// The (shrunk) input.
    pub input: Vec<u8>,
    /// Why: the panic message.
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "fuzz target {} failed on a {}-byte input: {}",
            self.target.name(),
            self.input.len(),
            self.message
        )
    }
}

impl std::error::Error for Failure {}

/// Inputs per proptest run; a time budget is checked between runs.
const CHUNK: u32 = 64;

/// One structured change to a seed.
#[derive(Debug, Clone)]
enum Mutation {
    /// Overwrite a byte.
    Set(Index, u8),
    /// Flip one bit.
    Flip(Index, u8),
    /// Write an interesting big-endian integer (chosen by the second field) of 1, 2, 4 or 8 bytes.
    Interesting(Index, u8),
    /// Cut the input here.
    Cut(Index),
    /// Insert bytes here.
    Insert(Index, Vec<u8>),
    /// Remove up to this many bytes here.
    Remove(Index, u16),
    /// Copy a range of the input over another place.
    Copy(Index, Index, u16),
    /// Append another seed (a splice).
    Splice(Index),
}

/// Values at the edges of the format's checks: sizes around the framing minimums, -1, and the
/// extremes of each width.
const INTERESTING: [i64; 16] = [
    0,
    1,
    -1,
    13,
    14,
    17,
    49,
    61,
    0x7f,
    0x80,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    -0x8000_0000,
    i64::MAX,
    i64::MIN,
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        3 => (any::<Index>(), 0_u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, v)| Mutation::Interesting(i, v)),
        1 => any::<Index>().prop_map(Mutation::Cut),
        1 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..32))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => (any::<Index>(), 1_u16..64).prop_map(|(i, n)| Mutation::Remove(i, n)),
        1 => (any::<Index>(), any::<Index>(), 1_u16..128).prop_map(|(a, b, n)| Mutation::Copy(a, b, n)),
        1 => any::<Index>().prop_map(Mutation::Splice),
    ]
}

fn apply(buf: &mut Vec<u8>, m: &Mutation, seeds: &[Vec<u8>]) {
    let at = |i: &Index, len: usize| if len == 0 { 0 } else { i.index(len) };
    match m {
        Mutation::Set(i, b) => {
            let p = at(i, buf.len());
            if let Some(x) = buf.get_mut(p) {
                *x = *b;
            }
        }
        Mutation::Flip(i, bit) => {
            let p = at(i, buf.len());
            if let Some(x) = buf.get_mut(p) {
                *x ^= 1 << bit;
            }
        }
        Mutation::Interesting(i, v) => {
            let value = INTERESTING
                .get(usize::from(*v) % INTERESTING.len())
                .copied()
                .unwrap_or_default()
                .to_be_bytes();
            let width = 1_usize << (*v / 16 % 4);
            let p = at(i, buf.len());
            let src = value.get(8 - width..).unwrap_or_default();
            let end = (p + width).min(buf.len());
            if let (Some(dst), Some(src)) = (buf.get_mut(p..end), src.get(..end - p)) {
                dst.copy_from_slice(src);
            }
        }
        Mutation::Cut(i) => {
            let p = i.index(buf.len() + 1);
            buf.truncate(p);
        }
        Mutation::Insert(i, bytes) => {
            let p = i.index(buf.len() + 1);
            buf.splice(p..p, bytes.iter().copied());
        }
        Mutation::Remove(i, n) => {
            let p = i.index(buf.len() + 1);
            let end = (p + usize::from(*n)).min(buf.len());
            buf.drain(p..end);
        }
        Mutation::Copy(from, to, n) => {
            let (len, n) = (buf.len(), usize::from(*n));
            let (f, t) = (at(from, len), at(to, len));
            let n = n.min(len - f).min(len - t);
            buf.copy_within(f..f + n, t);
        }
        Mutation::Splice(i) => {
            if let Some(other) = seeds.get(at(i, seeds.len())) {
                buf.extend_from_slice(other);
            }
        }
    }
}

/// Where the target's input holds a `.log`, for CRC fix-ups.
fn log_start(target: Target) -> Option<usize> {
    match target {
        Target::RecordFormat | Target::SegmentRecover => Some(0),
        Target::CliDump => Some(crate::cli_dump::HEADER),
        Target::Index => None,
    }
}

/// Recomputes the checksum of every whole batch from `start` on (CRC-32C for v2, CRC-32 for
/// v0/v1), so that mutations behind the checksum reach the parsers instead of failing the CRC.
pub fn fix_crcs(buf: &mut [u8], start: usize) {
    let mut pos = start;
    while let Some(head) = buf
        .get(pos..pos + 17)
        .and_then(|h| <[u8; 17]>::try_from(h).ok())
    {
        let [_, _, _, _, _, _, _, _, s0, s1, s2, s3, _, _, _, _, magic] = head;
        let size = i32::from_be_bytes([s0, s1, s2, s3]);
        let Ok(size) = usize::try_from(size) else {
            return;
        };
        let end = pos + 12 + size;
        if size < 14 || end > buf.len() {
            return;
        }
        if magic == 2 && size >= 49 {
            let crc = seglog_record_format::crc32c(buf.get(pos + 21..end).unwrap_or_default());
            if let Some(dst) = buf.get_mut(pos + 17..pos + 21) {
                dst.copy_from_slice(&crc.to_be_bytes());
            }
        } else if magic < 2 {
            let crc = crc32(buf.get(pos + 16..end).unwrap_or_default());
            if let Some(dst) = buf.get_mut(pos + 12..pos + 16) {
                dst.copy_from_slice(&crc.to_be_bytes());
            }
        }
        pos = end;
    }
}

/// CRC-32 (IEEE), bitwise: legacy messages' checksum.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0_u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The inputs fed to `target`: one in eight arbitrary bytes, the rest mutated seeds, half of
/// them with their checksums fixed up afterwards.
pub fn inputs(target: Target) -> BoxedStrategy<Vec<u8>> {
    let seeds = seeds::seeds(target);
    let start = log_start(target);
    let pool = seeds.clone();
    let mutated = (
        prop::sample::select(seeds),
        prop::collection::vec(mutation(), 0..6),
        any::<bool>(),
    )
        .prop_map(move |(seed, mutations, fix)| {
            let mut buf = seed;
            for m in &mutations {
                apply(&mut buf, m, &pool);
            }
            if let (true, Some(start)) = (fix, start) {
                fix_crcs(&mut buf, start);
            }
            buf
        });
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..1024),
        7 => mutated,
    ]
    .boxed()
}

/// Runs `target` on generated inputs within `budget`, from the random seed `seed`.
pub fn run(target: Target, budget: Budget, seed: u64) -> Result<Report, Failure> {
    let strategy = inputs(target);
    let started = Instant::now();
    let mut executions = 0_u64;
    let mut round = 0_u64;
    loop {
        let cases = match budget {
            Budget::Cases(n) => {
                let left = n.saturating_sub(executions);
                if left == 0 {
                    break;
                }
                u32::try_from(left.min(u64::from(CHUNK))).unwrap_or(CHUNK)
            }
            Budget::Time(t) => {
                if started.elapsed() >= t {
                    break;
                }
                CHUNK
            }
        };
        let mut key = [0_u8; 32];
        for (k, b) in key
            .iter_mut()
            .zip(seed.to_be_bytes().into_iter().chain(round.to_be_bytes()))
        {
            *k = b;
        }
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
        let config = Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 4096,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, rng);
        let result = runner.run(&strategy, |input| {
            target.run(&input);
            Ok(())
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(reason, input)) => {
                return Err(Failure {
                    target,
                    input,
                    message: reason.to_string(),
                });
            }
            Err(TestError::Abort(reason)) => {
                return Err(Failure {
                    target,
                    input: Vec::new(),
                    message: format!("proptest aborted: {reason}"),
                });
            }
        }
        executions += u64::from(cases);
        round += 1;
    }
    Ok(Report {
        target,
        executions,
        elapsed: started.elapsed(),
    })
}
