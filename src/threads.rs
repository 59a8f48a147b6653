//! Per-plan CPU parallelism (docs/design.md §4): each plan owns a rayon pool sized by its
//! `nthreads` option (0 = all cores). With one thread no pool is created and all work runs on
//! the caller's thread, so calling a plan from inside the caller's own OpenMP/rayon region is
//! safe.

use crate::error::{Error, Result};
use rayon::prelude::*;

/// Largest `nthreads` a plan accepts (`FARFIELD_MAX_THREADS` in C): more than any
/// shared-memory node has cores, small enough that the pool's stacks always fit.
pub const MAX_THREADS: usize = 1024;

/// A plan's thread configuration.
pub struct Threads {
    pool: Option<rayon::ThreadPool>,
    n: usize,
}

impl Threads {
    /// `nthreads = 0` means all cores (`std::thread::available_parallelism`), at most
    /// [`MAX_THREADS`].
    /// Errors: [`Error::InvalidArg`] above [`MAX_THREADS`]; [`Error::Alloc`] if the operating
    /// system refuses to start the threads (the message names how many and why).
    pub fn new(nthreads: usize) -> Result<Self> {
        if nthreads > MAX_THREADS {
            return Err(Error::InvalidArg(format!(
                "nthreads = {nthreads} exceeds the supported maximum of {MAX_THREADS} (0 = all cores)"
            )));
        }
        let n = if nthreads == 0 {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(MAX_THREADS)
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
            .map_err(|e| Error::Alloc(format!("the operating system could not start {n} threads: {e}")))?;
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

    /// Calls `f(chunk_index, chunk)` for consecutive chunks of `chunk` elements of `data`.
    pub(crate) fn chunks<T, F>(&self, data: &mut [T], chunk: usize, f: F)
    where
        T: Send,
        F: Fn(usize, &mut [T]) + Sync + Send,
    {
        match &self.pool {
            None => data.chunks_mut(chunk).enumerate().for_each(|(i, c)| f(i, c)),
            Some(p) => p.install(|| data.par_chunks_mut(chunk).enumerate().for_each(|(i, c)| f(i, c))),
        }
    }

    /// Like [`Threads::chunks`] over two slices chunked alike (`a` by `ca`, `b` by `cb`, same count).
    pub(crate) fn chunks2<T, U, F>(&self, a: &mut [T], ca: usize, b: &[U], cb: usize, f: F)
    where
        T: Send,
        U: Sync,
        F: Fn(usize, &mut [T], &[U]) + Sync + Send,
    {
        match &self.pool {
            None => a.chunks_mut(ca).zip(b.chunks(cb)).enumerate().for_each(|(i, (x, y))| f(i, x, y)),
            Some(p) => p.install(|| {
                a.par_chunks_mut(ca).zip(b.par_chunks(cb)).enumerate().for_each(|(i, (x, y))| f(i, x, y))
            }),
        }
    }

    /// Sum over `0..n` of `f(i)`, in fixed blocks of 4096 terms summed in order, so the
    /// result does not depend on the thread count or on scheduling.
    pub(crate) fn sum<F>(&self, n: usize, f: F) -> f64
    where
        F: Fn(usize) -> f64 + Sync + Send,
    {
        const B: usize = 4096;
        let block = |b: usize| (b * B..((b + 1) * B).min(n)).map(&f).sum::<f64>();
        let nb = n.div_ceil(B);
        match &self.pool {
            None => (0..nb).map(block).sum(),
            Some(p) => p.install(|| (0..nb).into_par_iter().map(block).collect::<Vec<f64>>()).iter().sum(),
        }
    }

    /// Index of the first `i < n` with `pred(i)`, if any: blocks of consecutive indices are
    /// tested in parallel, each in order up to its first hit, and a block is skipped once an
    /// earlier one has hit. (With rayon's `find_first` over single indices, a 1D
    /// `setpts_by_reference` of 10⁷ points on two threads took 0.110–0.173 s, against
    /// 0.045–0.058 s with the blocks: docs/design.md §4.)
    pub(crate) fn find_first<F>(&self, n: usize, pred: F) -> Option<usize>
    where
        F: Fn(usize) -> bool + Sync + Send,
    {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        match &self.pool {
            None => (0..n).find(|&i| pred(i)),
            Some(p) => {
                let block = 4096.max(n.div_ceil(8 * self.n));
                let first = AtomicUsize::new(usize::MAX);
                p.install(|| {
                    (0..n.div_ceil(block)).into_par_iter().for_each(|b| {
                        let a = b * block;
                        if a < first.load(Relaxed) {
                            if let Some(i) = (a..(a + block).min(n)).find(|&i| pred(i)) {
                                first.fetch_min(i, Relaxed);
                            }
                        }
                    })
                });
                Some(first.into_inner()).filter(|&i| i < n)
            }
        }
    }

    /// Runs `a` and `b` potentially in parallel on the plan's pool (`rayon::join`: `a` on the
    /// calling worker, `b` available to the others, which also help with any parallel work
    /// inside either), else one after the other on the caller's thread.
    pub(crate) fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        match &self.pool {
            Some(p) => p.install(|| rayon::join(a, b)),
            None => (a(), b()),
        }
    }

    /// Runs `f` for every index `0..n`, in parallel on the plan's pool when it has one, else
    /// in order on the caller's thread.
    pub fn for_each<F: Fn(usize) + Sync + Send>(&self, n: usize, f: F) {
        match &self.pool {
            Some(p) => p.install(|| (0..n).into_par_iter().for_each(f)),
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

/// A raw const pointer that may be shared between threads, for read-only access to data whose
/// lifetime the caller guarantees (documented at each use).
#[derive(Clone, Copy)]
pub(crate) struct ConstPtr<E>(pub *const E);
// SAFETY: read-only access to data kept alive by contract (see each use).
unsafe impl<E> Send for ConstPtr<E> {}
unsafe impl<E> Sync for ConstPtr<E> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_first_is_the_first_hit() {
        for threads in [1, 2, 3] {
            let th = Threads::new(threads).unwrap();
            for n in [0usize, 1, 4095, 4096, 4097, 100_000] {
                assert_eq!(th.find_first(n, |_| false), None, "threads {threads} n {n}");
                // hits at every position class: first, a block's edges, last, several at once
                let mut cases = vec![vec![0], vec![n.saturating_sub(1)], vec![n / 2, n / 2 + 1, n.saturating_sub(1)]];
                cases.extend([4095, 4096, 12_500, 99_999].iter().filter(|&&i| i < n).map(|&i| vec![i, n - 1]));
                for hits in cases.into_iter().filter(|_| n > 0) {
                    let want = hits.iter().min().copied();
                    assert_eq!(th.find_first(n, |i| hits.contains(&i)), want, "threads {threads} n {n} hits {hits:?}");
                }
            }
        }
    }
}
