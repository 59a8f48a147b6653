//! Bin sort of non-uniform points (seed 000 §4, "unfinished bin-sort"; FINUFFT's `bin_sort`).
//!
//! Points, given in grid units `g ∈ [0, nf)` per axis, are assigned to cache-sized bins
//! (16×4×4 grid points in 3D, 32×8 in 2D, 256 in 1D; x fastest) and reordered by a counting
//! sort. The order inside a bin is the input order (stable), so the result is deterministic.

/// Bin sizes per axis for a dimension.
pub fn bin_sizes(dim: usize) -> [usize; 3] {
    match dim {
        1 => [256, 1, 1],
        2 => [32, 8, 1],
        _ => [16, 4, 4],
    }
}

/// Returns the permutation `perm` (sorted position → input index) that orders the points by
/// bin. `g[d]` are the folded grid coordinates of axis `d` (only the first `dim` used).
pub fn bin_sort<T: crate::Real>(dim: usize, nf: [usize; 3], g: [&[T]; 3], m: usize) -> Vec<u32> {
    let bs = bin_sizes(dim);
    let nb: Vec<usize> = (0..3).map(|d| nf[d].div_ceil(bs[d])).collect();
    let nbins = nb[0] * nb[1] * nb[2];
    let bin_of = |i: usize| -> usize {
        let mut b = 0usize;
        for d in (0..dim).rev() {
            let v = g[d][i].to_f64v();
            let bi = ((v / bs[d] as f64) as usize).min(nb[d] - 1);
            b = b * nb[d] + bi;
        }
        b
    };
    let bins: Vec<u32> = (0..m).map(|i| bin_of(i) as u32).collect();
    let mut count = vec![0usize; nbins + 1];
    for &b in &bins {
        count[b as usize + 1] += 1;
    }
    for i in 0..nbins {
        count[i + 1] += count[i];
    }
    let mut perm = vec![0u32; m];
    for (i, &b) in bins.iter().enumerate() {
        let slot = &mut count[b as usize];
        perm[*slot] = i as u32;
        *slot += 1;
    }
    perm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_by_bin_and_stable() {
        let nf = [64, 32, 16];
        let x: Vec<f64> = (0..500).map(|i| ((i * 37) % 640) as f64 / 10.0).collect();
        let y: Vec<f64> = (0..500).map(|i| ((i * 11) % 320) as f64 / 10.0).collect();
        let z: Vec<f64> = (0..500).map(|i| ((i * 7) % 160) as f64 / 10.0).collect();
        let p = bin_sort(3, nf, [&x, &y, &z], 500);
        let key = |i: usize| ((z[i] / 4.0) as usize * 8 + (y[i] / 4.0) as usize) * 4 + (x[i] / 16.0) as usize;
        let mut seen = vec![false; 500];
        for w in p.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            assert!(key(a) < key(b) || (key(a) == key(b) && a < b));
        }
        for &i in &p {
            seen[i as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
