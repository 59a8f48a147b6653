//! Per-plan CPU parallelism (DESIGN.md §4): each plan owns a rayon pool sized by its
//! `nthreads` option (0 = all cores). With one thread no pool is created and all work runs on
//! the caller's thread, so calling a plan from inside the caller's own OpenMP/rayon region is
//! safe.

use crate::error::{Error, Result};

/// A plan's thread configuration.
pub struct Threads {
    pool: Option<rayon::ThreadPool>,
    n: usize,
}

impl Threads {
    /// `nthreads = 0` means all cores (`std::thread::available_parallelism`).
    /// Errors: [`Error::Internal`] if the pool cannot be built.
    pub fn new(nthreads: usize) -> Result<Self> {
        let n = if nthreads == 0 {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        } else {
            nthreads
        };
        if n == 1 {
            return Ok(Threads { pool: None, n });
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("farfield-{i}"))
            .build()
            .map_err(|e| Error::Internal(format!("could not start {n} threads: {e}")))?;
        Ok(Threads { pool: Some(pool), n })
    }

    /// Number of threads.
    pub fn count(&self) -> usize {
        self.n
    }

    /// Whether work should be split across threads.
    pub fn parallel(&self) -> bool {
        self.pool.is_some()
    }

    /// Runs `f` for every index `0..n`, in parallel on the plan's pool when it has one, else
    /// in order on the caller's thread.
    pub fn for_each<F: Fn(usize) + Sync + Send>(&self, n: usize, f: F) {
        match &self.pool {
            Some(p) => p.install(|| {
                use rayon::prelude::*;
                (0..n).into_par_iter().for_each(f)
            }),
            None => (0..n).for_each(f),
        }
    }
}

/// A raw pointer that may be shared between threads, for disjoint writes whose disjointness
/// the caller guarantees (documented at each use).
#[derive(Clone, Copy)]
pub(crate) struct SyncPtr<E>(pub *mut E);
// SAFETY: users only write to disjoint elements or under a lock (see each use).
unsafe impl<E> Send for SyncPtr<E> {}
unsafe impl<E> Sync for SyncPtr<E> {}
