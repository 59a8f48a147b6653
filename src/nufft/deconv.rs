//! Deconvolution (Barnett et al. 2019 eq. 2.4 / step 3 of type 1, step 1 of type 2): moving
//! the modes `|k| ≤ N/2` between the upsampled FFT grid and the user's mode array, scaling by
//! the separable factor `1/(ψ̂(k1) ψ̂(k2) ψ̂(k3))`.

use super::options::ModeOrder;
use super::params::NufftParams;
use crate::real::Real;
use crate::threads::{SyncPtr, Threads};
use num_complex::Complex;

/// Mode bookkeeping of one plan.
pub struct ModeMap<T: Real> {
    /// Modes per axis (1 for unused axes).
    pub n: [usize; 3],
    /// Fine grid per axis (1 for unused axes).
    pub nf: [usize; 3],
    /// For each axis and output index `i`: the fine-grid index of its mode `k`.
    fine: [Vec<usize>; 3],
    /// For each axis and output index `i`: `1/ψ̂(k)`.
    inv: [Vec<T>; 3],
}

/// The mode `k` of output index `i` of an axis with `n` modes in order `modeord`.
pub fn mode_of(i: usize, n: usize, modeord: ModeOrder) -> i64 {
    let (i, n) = (i as i64, n as i64);
    if modeord == ModeOrder::Fft {
        if i <= (n - 1) / 2 {
            i
        } else {
            i - n
        }
    } else {
        i - n / 2
    }
}

impl<T: Real> ModeMap<T> {
    /// The mode map of a plan with parameters `p` ([`NufftParams::fine_index`],
    /// [`NufftParams::deconv_factor`]), computed on the plan's `threads`. Memory `(8 + sizeof T)·ΣN_d` bytes.
    /// Errors: [`crate::Error::Alloc`].
    pub fn new(p: &NufftParams, threads: &Threads) -> crate::Result<Self> {
        const CHUNK: usize = 1 << 14;
        let (n, nf) = (p.n, p.nf);
        let mut fine: [Vec<usize>; 3] = Default::default();
        let mut inv: [Vec<T>; 3] = Default::default();
        for d in 0..3 {
            fine[d] = crate::error::try_zeroed_vec(n[d], "NUFFT mode map (fine-grid indices)")?;
            inv[d] = crate::error::try_filled_vec(n[d], T::one(), "NUFFT mode map (deconvolution factors)")?;
            if d >= p.dim {
                continue;
            }
            let phihat = p.kernel.try_fourier_series_on(nf[d], n[d] / 2, threads)?;
            threads.chunks(&mut fine[d], CHUNK, |c, piece| {
                piece.iter_mut().enumerate().for_each(|(j, x)| *x = p.fine_index(d, c * CHUNK + j))
            });
            threads.chunks(&mut inv[d], CHUNK, |c, piece| {
                piece.iter_mut().enumerate().for_each(|(j, x)| *x = T::of(p.deconv_factor(d, c * CHUNK + j, &phihat)))
            });
        }
        Ok(ModeMap { n, nf, fine, inv })
    }

    /// Calls `f(k2, k3, k1_start, k1_end)` for pieces of rows of the mode array (x fastest)
    /// that together cover every mode once, in parallel on `threads`: about 8 pieces per
    /// thread of at least 2¹⁴ modes, so 1D and 2D plans (one row, or one plane) are split too.
    fn for_each_piece<F: Fn(usize, usize, usize, usize) + Sync + Send>(&self, threads: &Threads, f: F) {
        let n = self.n;
        let total = n[0] * n[1] * n[2];
        let piece = (total / (8 * threads.count())).max(1 << 14);
        threads.for_each(total.div_ceil(piece), |t| {
            let (mut i, end) = (t * piece, ((t + 1) * piece).min(total));
            while i < end {
                let (row, k1a) = (i / n[0], i % n[0]);
                let k1b = n[0].min(k1a + (end - i));
                f(row % n[1], row / n[1], k1a, k1b);
                i += k1b - k1a;
            }
        });
    }

    /// Type 1: `f[i] = fw[fine(i)] / ψ̂` for every mode (overwrites `f`, length Πn).
    pub fn fine_to_modes(&self, fw: &[Complex<T>], f: &mut [Complex<T>], threads: &Threads) {
        let (n, nf) = (self.n, self.nf);
        let fp = SyncPtr(f.as_mut_ptr());
        self.for_each_piece(threads, |k2, k3, k1a, k1b| {
            let fp = fp;
            let s23 = self.inv[1][k2] * self.inv[2][k3];
            let src = nf[0] * (self.fine[1][k2] + nf[1] * self.fine[2][k3]);
            let dst = n[0] * (k2 + n[1] * k3);
            for k1 in k1a..k1b {
                // SAFETY: each mode (k1,k2,k3) belongs to one piece.
                unsafe { *fp.0.add(dst + k1) = fw[src + self.fine[0][k1]] * (s23 * self.inv[0][k1]) };
            }
        });
    }

    /// Type 2: `fw[fine(i)] = f[i] / ψ̂` for every mode; the other entries of `fw` must already
    /// be zero.
    pub fn modes_to_fine(&self, f: &[Complex<T>], fw: &mut [Complex<T>], threads: &Threads) {
        let (n, nf) = (self.n, self.nf);
        let wp = SyncPtr(fw.as_mut_ptr());
        self.for_each_piece(threads, |k2, k3, k1a, k1b| {
            let wp = wp;
            let s23 = self.inv[1][k2] * self.inv[2][k3];
            let dst = nf[0] * (self.fine[1][k2] + nf[1] * self.fine[2][k3]);
            let src = n[0] * (k2 + n[1] * k3);
            for k1 in k1a..k1b {
                // SAFETY: distinct modes map to distinct fine indices (n ≤ nf per axis), and
                // each mode belongs to one piece.
                unsafe { *wp.0.add(dst + self.fine[0][k1]) = f[src + k1] * (s23 * self.inv[0][k1]) };
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_orders() {
        let cmcl: Vec<i64> = (0..5).map(|i| mode_of(i, 5, ModeOrder::Cmcl)).collect();
        assert_eq!(cmcl, vec![-2, -1, 0, 1, 2]);
        let cmcl: Vec<i64> = (0..4).map(|i| mode_of(i, 4, ModeOrder::Cmcl)).collect();
        assert_eq!(cmcl, vec![-2, -1, 0, 1]);
        let fft: Vec<i64> = (0..4).map(|i| mode_of(i, 4, ModeOrder::Fft)).collect();
        assert_eq!(fft, vec![0, 1, -2, -1]);
        let fft: Vec<i64> = (0..5).map(|i| mode_of(i, 5, ModeOrder::Fft)).collect();
        assert_eq!(fft, vec![0, 1, 2, -2, -1]);
    }
}
