//! The loans this thread holds: which [`MappedFile`](crate::MappedFile)s have lent their bytes
//! to a closure further up this thread's stack ([`MappedFile::with_published`]).
//!
//! A shrink or close of a mapped file waits until every loan of it has ended. A loan held by
//! the very thread that asks for the shrink can never end meanwhile (its closure is the caller),
//! so the owner's operations look here first and refuse ([`Error::LoanHeld`]) instead of waiting
//! forever. Loans held by other threads are not recorded here: those a shrink waits for, as
//! before.
//!
//! The record is a small thread-local stack of identities (one per loan, so a nested loan of the
//! same file is counted again), set by a guard when the loan starts and cleared by its `Drop`,
//! also when the closure unwinds. It needs no synchronisation: only its own thread reads it.
//!
//! [`MappedFile::with_published`]: crate::MappedFile::with_published
//! [`Error::LoanHeld`]: crate::Error::LoanHeld
#![forbid(unsafe_code)]

use std::cell::Cell;
use std::marker::PhantomData;

/// How many loans one thread may hold at once (closures nested in closures). A loan asked for
/// past it is not given (the caller reads the bytes another way), so that every loan held is
/// recorded.
pub(crate) const MAX_LOANS_PER_THREAD: usize = 8;

/// This thread's loans: the identities of the files lent, innermost last.
struct Loans {
    /// How many of `ids` are in use.
    depth: Cell<usize>,
    ids: [Cell<usize>; MAX_LOANS_PER_THREAD],
}

thread_local! {
    // `const`-initialized and without `Drop`: an access is a plain thread-local load, with no
    // lazy initialization and no destructor to register (the loan is on the consume hot path).
    static LOANS: Loans = const {
        Loans {
            depth: Cell::new(0),
            ids: [const { Cell::new(0) }; MAX_LOANS_PER_THREAD],
        }
    };
}

/// A loan of the file `id` recorded for this thread until the guard drops. Not `Send`: it must
/// be dropped on the thread that recorded it.
pub(crate) struct LoanGuard {
    _not_send: PhantomData<*const ()>,
}

impl LoanGuard {
    /// Records a loan of the file `id` by this thread; `None` (nothing recorded) when this thread
    /// already holds [`MAX_LOANS_PER_THREAD`] loans.
    #[inline]
    pub(crate) fn enter(id: usize) -> Option<Self> {
        LOANS.with(|loans| {
            let depth = loans.depth.get();
            loans.ids.get(depth)?.set(id);
            loans.depth.set(depth + 1);
            Some(Self {
                _not_send: PhantomData,
            })
        })
    }
}

impl Drop for LoanGuard {
    #[inline]
    fn drop(&mut self) {
        // Guards drop in the reverse order of their `enter` (each lives in one stack frame of
        // this thread, unwinding included), so the innermost loan is the one that ends.
        LOANS.with(|loans| loans.depth.set(loans.depth.get().saturating_sub(1)));
    }
}

/// Whether this thread holds a loan of the file `id` now.
pub(crate) fn held_by_this_thread(id: usize) -> bool {
    LOANS.with(|loans| {
        let depth = loans.depth.get();
        loans.ids.iter().take(depth).any(|held| held.get() == id)
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn nested_loans_are_recorded_until_their_guards_drop() {
        assert!(!held_by_this_thread(1));
        let outer = LoanGuard::enter(1).unwrap();
        let inner = LoanGuard::enter(2).unwrap();
        let again = LoanGuard::enter(1).unwrap();
        assert!(held_by_this_thread(1) && held_by_this_thread(2));
        drop(again);
        assert!(held_by_this_thread(1), "the outer loan of 1 is still held");
        drop(inner);
        assert!(!held_by_this_thread(2) && held_by_this_thread(1));
        drop(outer);
        assert!(!held_by_this_thread(1));
    }

    #[test]
    fn another_threads_loans_are_not_this_threads() {
        let _held = LoanGuard::enter(7).unwrap();
        let seen = std::thread::spawn(|| held_by_this_thread(7))
            .join()
            .unwrap();
        assert!(!seen);
        assert!(held_by_this_thread(7));
    }

    #[test]
    fn a_loan_past_the_limit_is_refused_and_the_record_stays_exact() {
        let guards: Vec<_> = (1..=MAX_LOANS_PER_THREAD)
            .map(|id| LoanGuard::enter(id).unwrap())
            .collect();
        assert!(LoanGuard::enter(99).is_none());
        assert!(!held_by_this_thread(99));
        assert!(held_by_this_thread(MAX_LOANS_PER_THREAD));
        drop(guards);
        assert!(!held_by_this_thread(1));
        assert!(LoanGuard::enter(99).is_some_and(|_g| held_by_this_thread(99)));
        assert!(!held_by_this_thread(99));
    }

    #[test]
    fn an_unwinding_closure_clears_its_loan() {
        let result = std::panic::catch_unwind(|| {
            let _g = LoanGuard::enter(5).unwrap();
            panic!("the closure fails");
        });
        assert!(result.is_err());
        assert!(!held_by_this_thread(5));
    }
}
