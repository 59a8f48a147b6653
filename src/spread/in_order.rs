//! 1D spreading and interpolation in the caller's point order, without the bin sort.
//!
//! In 1D the fine grid is one row (32 MB at nf = 2·10⁶ in f64) and a point touches `w`
//! consecutive values, one to four cache lines, so ordering the points buys little locality;
//! what it costs is the sort in `setpts` (a scatter of the coordinates and the permutation over
//! M) and, in every execute, the gather of the strengths (spreading) or the scatter of the
//! values (interpolation) through the permutation: a random access per point over M elements,
//! each a cache and TLB miss. In the caller's order those arrays are read or written in
//! sequence and only the grid accesses are scattered; they are independent, and each point
//! prefetches the cache lines of the window [`PREFETCH_AHEAD`](super::PREFETCH_AHEAD) points ahead, so their misses
//! overlap. Measured on a 2-core AMD EPYC (AVX2), M = 10⁷, N = 10⁶, one thread, tol 1e-6:
//! interpolation 0.53 s at random point order against 0.21 s when the same points come sorted,
//! the sort 0.39 s (docs/performance.md). FINUFFT's default heuristic (`spread_sort = 2`) likewise
//! does not sort for 1D interpolation (Barnett, Magland & af Klinteberg, SIAM J. Sci. Comput.
//! 41 (2019) C479, §3.2).
//!
//! Interpolation in this order is used by every 1D spreader made with
//! [`super::SpreadOpts::interp_only`] (which then refuses to spread). Spreading in this order
//! needs one grid per thread (the points of different threads meet anywhere in the row): thread
//! 0 spreads into the output grid, the others into private grids summed into it afterwards. A
//! 1D spreader keeps its points in the caller's order when those private grids take no more
//! memory than the sort's permutation would ([`private_grids`]) and, on more than one thread,
//! its kernel is at most [`IN_ORDER_MAX_WIDTH`] wide; it sorts them otherwise.

use super::{for_each_pair, prefetches, sort, window, Spreader};
#[cfg(target_arch = "x86_64")]
use super::inner_simd;
use crate::error::{Error, Result};
use crate::fft::AlignedVec;
use crate::kernel::{KernelEval, MAX_WIDTH};
use crate::real::Real;
use crate::threads::{ConstPtr, SyncPtr, Threads};
use num_complex::Complex;
use std::sync::Mutex;
use std::time::Instant;

/// Points folded at a time when the coordinates are held by reference (on the stack, 24 KiB
/// in f64). The windows of a block's last [`PREFETCH_AHEAD`](super::PREFETCH_AHEAD) points
/// are prefetched by no one, so a block is much longer than that: 256 left a quarter of the
/// points without their prefetch (docs/performance.md).
const BLOCK: usize = 2048;

/// Grid entries zeroed or summed per parallel task when spreading in the caller's order.
const GRID_CHUNK: usize = 1 << 16;

/// Grids that spreading `m` points in the caller's order onto a 1D grid of `nf` points fills
/// with `threads` threads: the output grid plus one private grid per further thread, as many as
/// fit in the memory of the permutation (4 bytes per point) that the bin sort would keep.
/// At least 1, at most `threads`.
pub(super) fn private_grids<T: Real>(m: usize, nf: usize, threads: usize) -> usize {
    let grid_bytes = (nf * std::mem::size_of::<Complex<T>>()).max(1);
    1 + threads.saturating_sub(1).min(4 * m / grid_bytes)
}

/// Widest kernel with which a 1D spreader on more than one thread keeps the points in the
/// caller's order ([`spreads_in_order`]). From w = 10 each window is a read-modify-write of 3–4
/// cache lines at a random place of one of several grids beyond the cache, and the bin-sorted
/// points, spread box by box, take less time in all despite the sort. Measured on the 2-core
/// AMD EPYC VM (Zen 4), M = 10⁷, N = 10⁶, two threads, NUFFT type 1 setpts + execute,
/// alternating pairs (2026-11-29): tol 1e-12 (w = 13) 0.30–0.39 s in order against
/// 0.28–0.29 s sorted (four pairs; 0.31–0.40 against 0.29–0.40 in three more), tol 1e-9
/// (w = 10) 0.30–0.34 against 0.26–0.27 s, tol 1e-6 (w = 7) 0.25–0.27 against 0.25–0.26 s
/// (level), tol 1e-3 (w = 4) 0.19–0.27 against 0.25–0.27 s. On one thread the caller's order
/// stays ahead at w = 13 (0.52–0.54 against 0.54–0.59 s): one grid, no private grid to fill
/// and sum.
pub(super) const IN_ORDER_MAX_WIDTH: usize = 9;

/// Whether a 1D spreader with kernel width `w` keeps `m` points in the caller's order for
/// `threads` threads: when every thread gets its own grid ([`private_grids`]), so spreading
/// loses no parallelism, and, on more than one thread, `w ≤` [`IN_ORDER_MAX_WIDTH`].
pub(super) fn spreads_in_order<T: Real>(m: usize, nf: usize, w: usize, threads: usize) -> bool {
    private_grids::<T>(m, nf, threads) == threads.max(1) && (threads <= 1 || w <= IN_ORDER_MAX_WIDTH)
}

/// 1/(2π) as a double-double: `INV_2PI_HI + INV_2PI_LO` equals 1/(2π) to about 1e-33.
const INV_2PI_HI: f64 = 0.159_154_943_091_895_35;
const INV_2PI_LO: f64 = -9.839_338_337_591_243e-18;

/// `a + b` as a double-double `(s, e)`, `s = fl(a + b)`, `s + e = a + b` exactly (Knuth's
/// TwoSum).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// The grid coordinate `x·nf/(2π)` of a point (radians, |x| ≤ 64) folded by whole periods
/// into about `[0, nf)` (a hair outside is allowed: the in-order loops wrap windows at both
/// ends), as a double-double `(hi, lo)`. `c = nf/(2π)` as a double-double. The product is
/// exact to ~1e-32 relative (Dekker's product by fused multiply-add), the period subtraction
/// exactly (TwoSum), so the coordinate is exact to ~1e-16 grid points instead of the
/// half-ulp of `nf` (1.2e-10 at nf = 2·10⁶) of one double, which put an accuracy floor of
/// ~5e-11 under 1D transforms at N = 10⁶ (ours before, FINUFFT's and ducc0's:
/// `benches/results/nufft_peers_2026-11-27b.md`, docs/performance.md).
#[inline(always)]
fn fold_dd_small(x: f64, nf: f64, c: (f64, f64)) -> (f64, f64) {
    let p = x * c.0;
    let pl = x.mul_add(c.0, -p) + x * c.1;
    let k = (p * (1.0 / nf)).floor();
    let (r, e) = two_sum(p, -(k * nf));
    two_sum(r, pl + e)
}

/// Folds the coordinates `x` (radians) of 1D points into grid units as a double-double:
/// `hi[j]` in `T` (about `[0, nf)`) and `lo[j]` in f32 (|lo| ≤ one ulp of `hi`, stored to
/// f32's relative precision, ~1e-17 grid points for f64), so that `hi + lo` is the exact
/// coordinate to ~1e-16 grid points ([`fold_dd_small`]; for |x| > 64 the reduction mod 2π of
/// [`super::reduce_2pi`] first, exact to ~1e-16 of a period). Branch-free for |x| ≤ 64 (the
/// AVX2/FMA clone vectorises it); a block holding larger or non-finite values is redone point
/// by point. Returns the index of the first non-finite coordinate, if any (the outputs are then
/// partly written).
pub(super) fn fold_points_dd<T: Real>(x: &[T], nf: usize, hi: &mut [T], lo: &mut [f32]) -> Option<usize> {
    #[inline(always)]
    fn split<T: Real>(h: f64, l: f64) -> (T, f32) {
        let ht = T::of(h);
        (ht, ((h - ht.to_f64v()) + l) as f32)
    }
    #[inline(always)]
    fn body<T: Real>(x: &[T], nf: usize, hi: &mut [T], lo: &mut [f32]) -> Option<usize> {
        let nff = nf as f64;
        let c0 = nff * INV_2PI_HI;
        let c = (c0, nff.mul_add(INV_2PI_HI, -c0) + nff * INV_2PI_LO);
        let mut ok = true;
        for ((h, l), &v) in hi.iter_mut().zip(lo.iter_mut()).zip(x) {
            let xf = v.to_f64v();
            ok &= xf.abs() <= 64.0;
            let (a, b) = fold_dd_small(xf, nff, c);
            (*h, *l) = split::<T>(a, b);
        }
        if ok {
            return None;
        }
        for (j, ((h, l), &v)) in hi.iter_mut().zip(lo.iter_mut()).zip(x).enumerate() {
            if !v.is_finite() {
                return Some(j);
            }
            let xf = v.to_f64v();
            if xf.abs() > 64.0 {
                let u = super::reduce_2pi(xf);
                let g = u * nff;
                (*h, *l) = split::<T>(g, u.mul_add(nff, -g));
            }
        }
        None
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2<T: Real>(x: &[T], nf: usize, hi: &mut [T], lo: &mut [f32]) -> Option<usize> {
        body(x, nf, hi, lo)
    }
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { avx2(x, nf, hi, lo) };
    }
    body(x, nf, hi, lo)
}

/// The low parts of the coordinates `x` (radians, finite) of 1D points whose grid coordinates
/// `g` come from the bin sort's fold ([`super::fold`]; ~1e-9 grid points off at nf = 2·10⁶,
/// from rounding `x/2π`): `glo[j]` = the double-double fold of `x[j]` ([`fold_points_dd`])
/// minus `g[j]`, taken modulo `nf` into [−nf/2, nf/2]. So `g[j] + glo[j]` is the coordinate
/// to ~1e-16 grid points, as for points in the caller's order, while `g` (which decided the
/// point's bin) is kept. Computed in the sort's scatter pass, where `x` is read in order
/// (by reference: per subproblem, from the coordinates gathered for the fold).
pub(super) fn low_parts<T: Real>(x: &[T], g: &[T], nf: usize, glo: &mut [f32]) {
    let (nff, half) = (nf as f64, 0.5 * nf as f64);
    let mut hi = [T::zero(); BLOCK];
    let mut lo = [0f32; BLOCK];
    for ((xb, gb), ob) in x.chunks(BLOCK).zip(g.chunks(BLOCK)).zip(glo.chunks_mut(BLOCK)) {
        let n = xb.len();
        fold_points_dd(xb, nf, &mut hi[..n], &mut lo[..n]);
        for j in 0..n {
            // exact: hi and g agree to ~1e-9 grid points, or differ by about nf (a point at a
            // period's end folded to either end)
            let mut d = hi[j].to_f64v() - gb[j].to_f64v();
            if d > half {
                d -= nff;
            } else if d < -half {
                d += nff;
            }
            ob[j] = (d + lo[j] as f64) as f32;
        }
    }
}

impl<T: Real> Spreader<T> {
    /// `setpts` of a spreader that keeps its 1D points in the caller's order: keeps the folded
    /// copy (`copy`; folded and checked in one parallel pass) or the caller's array (checked),
    /// and cuts runs of consecutive points as subproblems.
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
            let mut glo = crate::error::try_vec::<f32>(m, "folded coordinates (low parts)")?;
            // SAFETY: capacity m; every element is written by the parallel pass below before
            // anything reads it (plain floats), or the vectors are dropped unread.
            unsafe {
                g.set_len(m);
                glo.set_len(m);
            }
            let bad = Mutex::new(usize::MAX);
            let (gp, lp) = (SyncPtr(g.as_mut_ptr()), SyncPtr(glo.as_mut_ptr()));
            threads.for_each(m.div_ceil(chunk), |i| {
                let (gp, lp) = (gp, lp);
                let (a, b) = (i * chunk, ((i + 1) * chunk).min(m));
                // SAFETY: the chunks a..b are disjoint and inside both m-element vectors.
                let (gd, ld) = unsafe { (std::slice::from_raw_parts_mut(gp.0.add(a), b - a), std::slice::from_raw_parts_mut(lp.0.add(a), b - a)) };
                if let Some(j) = fold_points_dd(&x[a..b], nf, gd, ld) {
                    let mut bb = bad.lock().unwrap_or_else(|p| p.into_inner());
                    *bb = (*bb).min(a + j);
                }
            });
            match bad.into_inner().unwrap_or_else(|p| p.into_inner()) {
                usize::MAX => {}
                i => return Err(nonfinite(i)),
            }
            self.release_points();
            self.g[0] = g;
            self.glo = glo;
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
        self.in_order = true;
        self.sort_timings = sort::SortTimings { count_s: t0.elapsed().as_secs_f64(), ..Default::default() };
        self.m = m;
        self.ready = true;
        Ok(())
    }

    /// Calls `f(q, g, glo)` for consecutive blocks of the points `a..b` (caller's order): `q`
    /// the first point of the block, `g` and `glo` the high and low parts of their folded
    /// coordinates ([`fold_points_dd`]; all of `a..b` at once from the copy, blocks of
    /// [`BLOCK`] folded on the stack when held by reference).
    fn for_each_block(&self, a: usize, b: usize, mut f: impl FnMut(usize, &[T], &[f32])) {
        if self.src[0].0.is_null() {
            f(a, &self.g[0][a..b], &self.glo[a..b]);
            return;
        }
        // SAFETY: setpts_by_reference's contract keeps the M-element array alive.
        let x = unsafe { std::slice::from_raw_parts(self.src[0].0, self.m) };
        let mut held = [T::zero(); BLOCK];
        let mut held_lo = [0f32; BLOCK];
        let mut q = a;
        while q < b {
            let e = (q + BLOCK).min(b);
            // the same fold as the copy (checked finite at setpts)
            fold_points_dd(&x[q..e], self.nf[0], &mut held[..e - q], &mut held_lo[..e - q]);
            f(q, &held[..e - q], &held_lo[..e - q]);
            q = e;
        }
    }

    /// Interpolates `grid` at the points in the caller's order into `c`, one run of
    /// consecutive points per task, reading the kernel windows straight from the grid (with
    /// periodic wrap-around at its ends).
    pub(super) fn interp_in_order<K: KernelEval<T>>(&self, k: &K, grid: &[Complex<T>], c: &mut [Complex<T>], threads: &Threads) {
        // SAFETY: Complex<T> is repr(C) {re, im}, the layout of [T; 2].
        let bx = unsafe { std::slice::from_raw_parts(grid.as_ptr() as *const [T; 2], grid.len()) };
        let cp = SyncPtr(c.as_mut_ptr());
        threads.for_each(self.subprobs.len(), |s| {
            let cp = cp;
            let (a, b) = self.subprobs[s];
            self.for_each_block(a, b, |q, g, glo| {
                // SAFETY: runs are disjoint, so c[q..q + g.len()] is written by this task alone.
                let out = SyncPtr(unsafe { cp.0.add(q) });
                self.interp_row_points(k, g, glo, bx, 0, None, out);
            });
        });
    }

    /// Spreads the strengths `c` (caller's order) at the points in the caller's order onto
    /// `grid`, overwriting it: the points are cut into [`private_grids`] equal runs, the first
    /// spread into `grid`, each other into a private grid, which are then added to `grid`.
    /// Errors: [`Error::Alloc`] (a private grid; `grid` is then unchanged).
    pub(super) fn spread_in_order<K: KernelEval<T>>(&self, k: &K, c: &[Complex<T>], grid: &mut [Complex<T>], threads: &Threads) -> Result<()> {
        let (m, nf) = (self.m, self.nf[0]);
        let parts = private_grids::<T>(m, nf, threads.count());
        let mut private = crate::error::try_vec::<AlignedVec<Complex<T>>>(parts - 1, "private spreading grids")?;
        for _ in 1..parts {
            private.push(AlignedVec::zeroed(nf, "private spreading grid")?);
        }
        threads.chunks(grid, GRID_CHUNK, |_, r| r.fill(Complex::new(T::zero(), T::zero())));
        let mut dst = crate::error::try_vec::<SyncPtr<[T; 2]>>(parts, "private spreading grids")?;
        // Complex<T> is repr(C) {re, im}, the layout of [T; 2]
        dst.push(SyncPtr(grid.as_mut_ptr() as *mut [T; 2]));
        dst.extend(private.iter_mut().map(|p| SyncPtr(p.as_mut_ptr() as *mut [T; 2])));
        threads.for_each(parts, |t| {
            // SAFETY: each of the `parts` grids (nf entries, alive until after this loop) is
            // written by task t alone.
            let bx = unsafe { std::slice::from_raw_parts_mut(dst[t].0, nf) };
            self.for_each_block(t * m / parts, (t + 1) * m / parts, |q, g, glo| self.spread_row_points(k, g, glo, &c[q..q + g.len()], bx, 0));
        });
        if !private.is_empty() {
            threads.chunks(grid, GRID_CHUNK, |i, r| {
                let (o, len) = (i * GRID_CHUNK, r.len());
                for p in &private {
                    r.iter_mut().zip(&p[o..o + len]).for_each(|(d, s)| *d += *s);
                }
            });
        }
        Ok(())
    }

    /// Spreads the strengths `cs` at the points with folded coordinates `g + glo` into the
    /// row `bx` whose first entry is grid index `lo`: the whole periodic grid in the caller's
    /// order (`lo` = 0), or a sorted subproblem's box, which holds every window. The vector row
    /// kernels where the CPU has them.
    pub(super) fn spread_row_points<K: KernelEval<T>>(&self, k: &K, g: &[T], glo: &[f32], cs: &[Complex<T>], bx: &mut [[T; 2]], lo: isize) {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx2_fma() {
            // SAFETY: the CPU supports the clone's extensions (checked at run time).
            return unsafe { self.spread1d_avx2(k, g, glo, cs, bx, lo) };
        }
        #[cfg(target_arch = "x86_64")]
        return self.spread1d_w::<K, 0, false>(k, g, glo, cs, bx, lo);
        #[cfg(not(target_arch = "x86_64"))]
        self.spread1d::<K, false>(k, g, glo, cs, bx, lo)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn spread1d_avx2<K: KernelEval<T>>(&self, k: &K, g: &[T], glo: &[f32], cs: &[Complex<T>], bx: &mut [[T; 2]], lo: isize) {
        self.spread1d::<K, true>(k, g, glo, cs, bx, lo)
    }

    /// [`Self::spread_row_points`] for the clone (`FMA`: the AVX2/FMA one), dispatched on the
    /// width.
    #[inline(always)]
    fn spread1d<K: KernelEval<T>, const FMA: bool>(&self, k: &K, g: &[T], glo: &[f32], cs: &[Complex<T>], bx: &mut [[T; 2]], lo: isize) {
        macro_rules! go {
            ($($n:literal),*) => {
                match self.w[0] {
                    $($n => self.spread1d_w::<K, $n, FMA>(k, g, glo, cs, bx, lo),)*
                    _ => self.spread1d_w::<K, 0, FMA>(k, g, glo, cs, bx, lo),
                }
            };
        }
        specialised_widths!(go)
    }

    /// [`Self::spread1d`] for the width `W` (`W = 0`: any width): the points in pairs
    /// ([`for_each_pair`]), each window added by [`add_window`].
    #[inline(always)]
    fn spread1d_w<K: KernelEval<T>, const W: usize, const FMA: bool>(&self, k: &K, g: &[T], glo: &[f32], cs: &[Complex<T>], bx: &mut [[T; 2]], lo: isize) {
        let w = if W == 0 { self.w[0] } else { W };
        let mut ker = [[T::zero(); MAX_WIDTH]; 2];
        // the caller's order only: a sorted box is small and its windows advance in order
        let ahead = (self.in_order && prefetches(bx)).then_some((bx.as_ptr(), bx.len()));
        for_each_pair(g, Some(glo), w, ahead, |[(qa, la, ta), (qb, lb, tb)], both| {
            if FMA {
                k.eval_fused_n([ta, tb], &mut ker);
            } else {
                k.eval(ta, &mut ker[0]);
                k.eval(tb, &mut ker[1]);
            }
            add_window::<T, W, FMA>(bx, la - lo, w, &ker[0], cs[qa]);
            if both {
                add_window::<T, W, FMA>(bx, lb - lo, w, &ker[1], cs[qb]);
            }
        });
    }

    /// Values at the points with folded coordinates `g + glo` from the row `bx` whose first
    /// entry is grid index `lo` (the whole periodic grid in the caller's order, `lo` = 0; or a
    /// sorted subproblem's box): point `q`'s value to `out[perm[q]]` (to `out[q]` without
    /// `perm`). The vector row kernels where the CPU has them, else a scalar loop.
    ///
    /// `out` must be valid for those indices and written by no one else meanwhile (safe to
    /// call: the callers own the disjoint outputs of their runs or subproblems).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn interp_row_points<K: KernelEval<T>>(&self, k: &K, g: &[T], glo: &[f32], bx: &[[T; 2]], lo: isize, perm: Option<&[u32]>, out: SyncPtr<Complex<T>>) {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: the CPU supports the clone's extensions (checked at run time); `out` is
            // valid for the indices of perm (or 0..g.len()), written by this caller alone.
            let done = unsafe {
                if crate::simd::has_avx512() {
                    self.interp1d_avx512(k, g, Some(glo), bx, lo, perm, out)
                } else if crate::simd::has_avx2_fma() {
                    self.interp1d_avx2(k, g, Some(glo), bx, lo, perm, out)
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
            let (l0, t) = window(gv, glo[q], half);
            k.eval(t, &mut kx);
            let mut v = Complex::new(T::zero(), T::zero());
            for (i, &kv) in kx.iter().take(w).enumerate() {
                let [re, im] = bx[(l0 - lo + i as isize).rem_euclid(n) as usize];
                v += Complex::new(re * kv, im * kv);
            }
            // SAFETY: as above.
            unsafe { *out.0.add(perm.map_or(q, |p| p[q] as usize)) = v };
        }
    }
}

/// Adds `kx[i]·v` to the periodic row `bx` at `(l0 + i) mod n`, `i < w`: one point's window,
/// with [`inner_simd::spread1d_f32`] / [`inner_simd::spread1d_f64`] where the window lies
/// inside the row (`FMA`: in the AVX2/FMA clone, `W > 0`), else one value at a time.
#[inline(always)]
fn add_window<T: Real, const W: usize, const FMA: bool>(bx: &mut [[T; 2]], l0: isize, w: usize, kx: &[T; MAX_WIDTH], v: Complex<T>) {
    #[cfg(target_arch = "x86_64")]
    if FMA && W > 0 {
        use std::any::TypeId;
        let (f32, f64) = (TypeId::of::<T>() == TypeId::of::<f32>(), TypeId::of::<T>() == TypeId::of::<f64>());
        if (f32 || f64) && l0 >= 0 && l0 as usize + W <= bx.len() {
            // SAFETY: FMA is set only in the AVX2/FMA clone; T is the type cast to (TypeId),
            // so the casts keep length and layout; the window was checked against the row.
            unsafe {
                if f32 {
                    let bx = &mut *(bx as *mut [[T; 2]] as *mut [[f32; 2]]);
                    let kx = &*(kx as *const [T; MAX_WIDTH] as *const [f32; MAX_WIDTH]);
                    inner_simd::spread1d_f32::<W>(bx, l0 as usize, kx, *(&v as *const Complex<T> as *const Complex<f32>));
                } else {
                    let bx = &mut *(bx as *mut [[T; 2]] as *mut [[f64; 2]]);
                    let kx = &*(kx as *const [T; MAX_WIDTH] as *const [f64; MAX_WIDTH]);
                    inner_simd::spread1d_f64::<W>(bx, l0 as usize, kx, *(&v as *const Complex<T> as *const Complex<f64>));
                }
            }
            return;
        }
    }
    let n = bx.len() as isize;
    for (i, &kv) in kx.iter().take(w).enumerate() {
        let e = &mut bx[(l0 + i as isize).rem_euclid(n) as usize];
        e[0] += kv * v.re;
        e[1] += kv * v.im;
    }
}
