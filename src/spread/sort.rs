//! Bins for sorting non-uniform points (Boström's gridding report §4, "unfinished bin-sort";
//! FINUFFT's `bin_sort`): points, in grid units `g ∈ [0, nf)` per axis, are assigned to
//! cache-sized bins (16×4×4 grid points in 3D, 32×8 in 2D, 256 in 1D; x fastest). The parallel
//! counting sort itself is in [`super::Spreader::setpts`]; [`counting_sort`] is its serial
//! reference.

/// Bin sizes per axis for a dimension.
pub fn bin_sizes(dim: usize) -> [usize; 3] {
    match dim {
        1 => [256, 1, 1],
        2 => [32, 8, 1],
        _ => [16, 4, 4],
    }
}

/// Bin sizes and bin counts per axis for a grid of sizes `nf`.
pub fn bin_grid(dim: usize, nf: [usize; 3]) -> ([usize; 3], [usize; 3]) {
    let bs = bin_sizes(dim);
    (bs, [nf[0].div_ceil(bs[0]), nf[1].div_ceil(bs[1]), nf[2].div_ceil(bs[2])])
}

/// Serial stable counting sort (the test reference of the parallel sort): returns the permutation `perm` (sorted position → input index) that
/// orders the points by their bin index `bins[i] < nbins`.
/// Errors: [`crate::Error::Alloc`].
#[cfg(test)]
pub fn counting_sort(bins: &[u32], nbins: usize) -> crate::Result<Vec<u32>> {
    let mut count = crate::error::try_zeroed_vec::<usize>(nbins + 1, "bin counts")?;
    for &b in bins {
        count[b as usize + 1] += 1;
    }
    for i in 0..nbins {
        count[i + 1] += count[i];
    }
    let mut perm = crate::error::try_zeroed_vec::<u32>(bins.len(), "sort permutation")?;
    for (i, &b) in bins.iter().enumerate() {
        let slot = &mut count[b as usize];
        perm[*slot] = i as u32;
        *slot += 1;
    }
    Ok(perm)
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
        let (bs, nb) = bin_grid(3, nf);
        let bins: Vec<u32> = (0..500)
            .map(|i| (((z[i] / bs[2] as f64) as usize * nb[1] + (y[i] / bs[1] as f64) as usize) * nb[0] + (x[i] / bs[0] as f64) as usize) as u32)
            .collect();
        let p = counting_sort(&bins, nb[0] * nb[1] * nb[2]).unwrap();
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
