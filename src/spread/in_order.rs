//! 1D interpolation in the caller's point order, without the bin sort
//! ([`super::SpreadOpts::interp_only`]).
//!
//! In 1D the fine grid is one row (32 MB at nf = 2·10⁶ in f64) and a point reads `w`
//! consecutive values, one or two cache lines, so ordering the points buys little locality;
//! what it costs is the sort in `setpts` (a scatter of the coordinates and the permutation over
//! M) and, in every interpolation, writing the values back to the caller's order: a random
//! store per point over M outputs, each a cache miss with a read for ownership. In the
//! caller's order the outputs are written in sequence and the grid reads, independent loads,
//! overlap. Measured on a 2-core AMD EPYC (AVX2), M = 10⁷, N = 10⁶, one thread, tol 1e-6:
//! interpolation 0.53 s at random point order against 0.21 s when the same points come sorted,
//! the sort 0.39 s (docs/design.md §10). FINUFFT's default heuristic (`spread_sort = 2`) likewise
//! does not sort for 1D interpolation (Barnett, Magland & af Klinteberg, SIAM J. Sci. Comput.
//! 41 (2019) C479, §3.2). Spreading needs the sort (the private boxes and the locked wrap-add),
//! so a spreader in this mode does not spread.

use super::{sort, Spreader};
use crate::error::{Error, Result};
use crate::kernel::{KernelEval, MAX_WIDTH};
use crate::real::Real;
use crate::threads::{ConstPtr, SyncPtr, Threads};
use num_complex::Complex;
use std::sync::Mutex;
use std::time::Instant;

/// Points folded at a time when the coordinates are held by reference (on the stack).
const BLOCK: usize = 256;

impl<T: Real> Spreader<T> {
    /// `setpts` of a spreader that keeps its 1D points in the caller's order: keeps the folded
    /// copy (`copy`; folded and checked in one parallel pass, its pages requested huge) or the
    /// caller's array (checked), and cuts runs of consecutive points as subproblems.
    /// Errors: [`Error::NonFinite`] (the first bad index; the previous points stay set),
    /// [`Error::Alloc`] (of the copy: the previous points stay set; of the runs: then without
    /// points).
    pub(super) fn set_points_in_order(&mut self, x: &[T], threads: &Threads, copy: bool) -> Result<()> {
        let t0 = Instant::now();
        let m = x.len();
        let nf = self.nf[0];
        let chunk = (1 << 16).max(m.div_ceil(4 * threads.count()));
        let nonfinite = |i: usize| Error::NonFinite(format!("coordinate x of point {i} is {}", x[i]));
        if copy {
            // fold and check in one pass into a fresh array; on a bad coordinate it is dropped
            // and the previous points stay set
            let mut g = crate::error::try_vec::<T>(m, "folded coordinates")?;
            sort::advise_huge(&mut g);
            // SAFETY: capacity m; every element is written by the parallel pass below before
            // anything reads it (T is a plain float), or the vector is dropped unread.
            unsafe { g.set_len(m) };
            let bad = Mutex::new(usize::MAX);
            threads.chunks2(&mut g, chunk, x, chunk, |i, gd, xs| {
                if let Some(j) = sort::fold_points(xs, nf, gd) {
                    let mut b = bad.lock().unwrap_or_else(|p| p.into_inner());
                    *b = (*b).min(i * chunk + j);
                }
            });
            match bad.into_inner().unwrap_or_else(|p| p.into_inner()) {
                usize::MAX => {}
                i => return Err(nonfinite(i)),
            }
            self.release_points();
            self.g[0] = g;
        } else {
            if let Some(i) = threads.find_first(m, |i| !x[i].is_finite()) {
                return Err(nonfinite(i));
            }
            self.release_points();
            self.src[0] = ConstPtr(x.as_ptr());
        }
        let sp = self.max_sp;
        let mut subprobs = crate::error::try_vec(m.div_ceil(sp), "interpolation runs")?;
        subprobs.extend((0..m).step_by(sp).map(|a| (a, (a + sp).min(m))));
        self.subprobs = subprobs;
        self.sort_timings = sort::SortTimings { count_s: t0.elapsed().as_secs_f64(), ..Default::default() };
        self.m = m;
        self.ready = true;
        Ok(())
    }

    /// Interpolates `grid` at the points in the caller's order into `c`, one run of
    /// consecutive points per task, reading the kernel windows straight from the grid (with
    /// periodic wrap-around at its ends).
    pub(super) fn interp_in_order<K: KernelEval<T>>(&self, k: &K, grid: &[Complex<T>], c: &mut [Complex<T>], threads: &Threads) {
        // SAFETY: Complex<T> is repr(C) {re, im}, the layout of [T; 2].
        let bx = unsafe { std::slice::from_raw_parts(grid.as_ptr() as *const [T; 2], grid.len()) };
        let nf = self.nf[0];
        let cp = SyncPtr(c.as_mut_ptr());
        threads.for_each(self.subprobs.len(), |s| {
            let cp = cp;
            let (a, b) = self.subprobs[s];
            let mut held = [T::zero(); BLOCK];
            let mut q = a;
            while q < b {
                let e = if self.src[0].0.is_null() { b } else { (q + BLOCK).min(b) };
                let g: &[T] = if self.src[0].0.is_null() {
                    &self.g[0][q..e]
                } else {
                    // SAFETY: setpts_by_reference's contract keeps the M-element array alive.
                    let x = unsafe { std::slice::from_raw_parts(self.src[0].0, self.m) };
                    // the same fold as the copy (checked finite at setpts)
                    sort::fold_points(&x[q..e], nf, &mut held[..e - q]);
                    &held[..e - q]
                };
                // SAFETY: runs are disjoint, so c[q..e] is written by this task alone.
                let out = SyncPtr(unsafe { cp.0.add(q) });
                self.interp_row_points(k, g, bx, out);
                q = e;
            }
        });
    }

    /// Values at the points with folded coordinates `g` from the periodic row `bx` into
    /// `out[0..g.len()]`: the vector row kernels where the CPU has them, else a scalar loop.
    fn interp_row_points<K: KernelEval<T>>(&self, k: &K, g: &[T], bx: &[[T; 2]], out: SyncPtr<Complex<T>>) {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: the CPU supports the clone's extensions (checked at run time); `out` is
            // valid for g.len() values written by this caller alone.
            let done = unsafe {
                if crate::simd::has_avx512() {
                    self.interp1d_avx512(k, g, bx, 0, None, out)
                } else if crate::simd::has_avx2_fma() {
                    self.interp1d_avx2(k, g, bx, 0, None, out)
                } else {
                    false
                }
            };
            if done {
                return;
            }
        }
        let w = self.w[0];
        let half = T::of(0.5 * w as f64);
        let n = bx.len() as isize;
        let mut kx = [T::zero(); MAX_WIDTH];
        for (q, &gv) in g.iter().enumerate() {
            let start = (gv - half).ceil();
            let l0 = start.to_isize().unwrap_or(0);
            k.eval(start - gv, &mut kx);
            let mut v = Complex::new(T::zero(), T::zero());
            for (i, &kv) in kx.iter().take(w).enumerate() {
                let [re, im] = bx[(l0 + i as isize).rem_euclid(n) as usize];
                v += Complex::new(re * kv, im * kv);
            }
            // SAFETY: as above.
            unsafe { *out.0.add(q) = v };
        }
    }
}
