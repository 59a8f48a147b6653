//! Excluded and scaled pairs: the index pairs whose Coulomb interaction (nearest image) is
//! removed, or multiplied by a factor, as MD force fields need for bonded atoms (1-2 and 1-3
//! pairs excluded; 1-4 pairs scaled: AMBER 1/1.2, OPLS and GROMOS 0.5, CHARMM 1).
//!
//! A pair `(i, j)` with scale `s` contributes `s q_i q_j / r` instead of `q_i q_j / r` (`r` the
//! nearest-image distance), so a Coulomb solver's sum is corrected by `−(1 − s) q_i q_j / r`:
//! the Ewald plans split the correction as the sum itself is split ([`crate::ewald`], "Exclusions
//! and scaled pairs"), the FMM plans subtract it whole ([`crate::fmm::exclusions`]). One list
//! description and one set of checks for both.

use crate::error::{try_vec, Error, Result};

/// The pairs of a plan: sorted keys `min << 32 | max` without duplicates, and their scales.
#[derive(Debug, Clone, Default)]
pub(crate) struct Exclusions {
    /// Sorted keys `min << 32 | max`, each pair once.
    pub keys: Vec<u64>,
    /// The scale `s` of each key (same order), or empty when every pair is fully excluded
    /// (`s = 0`).
    pub scale: Vec<f64>,
}

impl Exclusions {
    /// The pairs `pairs` with scales `scales` (`None`: all 0, fully excluded), every index
    /// checked against `0 … n_max − 1`. A pair is unordered; one listed several times with the
    /// same scale counts once; pairs with scale 1 are not exclusions and are dropped.
    /// Errors: [`Error::InvalidArg`] (an index out of range, a pair `(i, i)`, a scales array of
    /// another length, a pair listed with two different scales: each naming the pair),
    /// [`Error::NonFinite`] (a scale, naming it), [`Error::Alloc`].
    pub fn new(pairs: &[[i64; 2]], scales: Option<&[f64]>, n_max: usize) -> Result<Self> {
        Self::checked(pairs, scales, n_max, false)
    }

    /// [`Exclusions::new`] keeping the scale-1 pairs (`keep_unit`) after the checks: a list to
    /// be merged with others (the distributed plan's routing) whose duplicate check must still
    /// see them.
    pub(crate) fn checked(pairs: &[[i64; 2]], scales: Option<&[f64]>, n_max: usize, keep_unit: bool) -> Result<Self> {
        let Some(sc) = scales else {
            return Ok(Exclusions { keys: exclusion_keys(pairs, n_max)?, scale: Vec::new() });
        };
        if sc.len() != pairs.len() {
            return Err(Error::InvalidArg(format!("{} scales for {} pairs", sc.len(), pairs.len())));
        }
        if let Some(k) = sc.iter().position(|s| !s.is_finite()) {
            return Err(Error::NonFinite(format!("scale {k} (of pair ({}, {})) is {}", pairs[k][0], pairs[k][1], sc[k])));
        }
        let mut v = try_vec::<(u64, f64)>(pairs.len(), "exclusion list")?;
        for (k, p) in pairs.iter().enumerate() {
            // scale-1 pairs take part in the duplicate check and are dropped after it
            v.push((pair_key(k, p, n_max)?, sc[k]));
        }
        v.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        if let Some(w) = v.windows(2).find(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1) {
            let (key, a, b) = (w[0].0, w[0].1, w[1].1);
            return Err(Error::InvalidArg(format!("pair ({}, {}) is listed with two scales, {a:e} and {b:e}", key >> 32, key & 0xffff_ffff)));
        }
        v.dedup_by_key(|e| e.0);
        if !keep_unit {
            v.retain(|e| e.1 != 1.0);
        }
        let mut keys = try_vec::<u64>(v.len(), "exclusion list")?;
        let mut scale = try_vec::<f64>(v.len(), "exclusion scales")?;
        keys.extend(v.iter().map(|e| e.0));
        scale.extend(v.iter().map(|e| e.1));
        if scale.iter().all(|&s| s == 0.0) {
            scale = Vec::new();
        }
        Ok(Exclusions { keys, scale })
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// No pairs.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether every pair is fully excluded (scale 0).
    pub fn all_full(&self) -> bool {
        self.scale.is_empty()
    }

    /// The scale of pair `k`.
    #[inline]
    pub fn scale_of(&self, k: usize) -> f64 {
        if self.scale.is_empty() {
            0.0
        } else {
            self.scale[k]
        }
    }

    /// Whether the charges `lo < hi` may coincide: they are a fully excluded pair (any other
    /// pair's interaction is infinite at `r = 0`).
    pub fn allows_coincident(&self, lo: u32, hi: u32) -> bool {
        self.keys.binary_search(&(((lo as u64) << 32) | hi as u64)).is_ok_and(|k| self.scale_of(k) == 0.0)
    }
}

/// The excluded pairs `pairs` as sorted, deduplicated keys `min << 32 | max` (a pair is
/// unordered, one listed several times is excluded once), every index checked against
/// `0 … n_max − 1`. Shared by [`Exclusions::new`] and the GPU real-space pass
/// (`crate::gpu::ewald::real_space`). Errors: [`Error::InvalidArg`] (an index out of range or
/// a pair `(i, i)`, naming the pair and the index), [`Error::Alloc`].
pub(crate) fn exclusion_keys(pairs: &[[i64; 2]], n_max: usize) -> Result<Vec<u64>> {
    let mut v = try_vec::<u64>(pairs.len(), "exclusion list")?;
    for (k, p) in pairs.iter().enumerate() {
        v.push(pair_key(k, p, n_max)?);
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// The key `min << 32 | max` of pair `k` = `p`, its indices checked against `0 … n_max − 1`.
/// Error: [`Error::InvalidArg`] (an index out of range or a pair `(i, i)`, naming the pair and
/// the index).
fn pair_key(k: usize, p: &[i64; 2], n_max: usize) -> Result<u64> {
    for &i in p {
        if i < 0 || i as u64 >= n_max as u64 {
            return Err(Error::InvalidArg(format!(
                "exclusion pair {k} = ({}, {}): index {i} outside 0 … n_max − 1 = {}",
                p[0],
                p[1],
                n_max - 1
            )));
        }
    }
    if p[0] == p[1] {
        return Err(Error::InvalidArg(format!("exclusion pair {k} = ({}, {}) pairs charge {} with itself", p[0], p[1], p[0])));
    }
    Ok(((p[0].min(p[1]) as u64) << 32) | p[0].max(p[1]) as u64)
}

/// Checks the sorted exclusion keys `excl` (see [`exclusion_keys`]) against the number of
/// charges `n` of a call. Error: [`Error::InvalidArg`] naming the first pair with an index ≥ n.
pub(crate) fn check_exclusions(excl: &[u64], n: usize) -> Result<()> {
    if let Some((k, p)) = excl.iter().enumerate().find(|(_, &p)| (p >> 32) as usize >= n || (p & 0xffff_ffff) as usize >= n) {
        return Err(Error::InvalidArg(format!(
            "exclusion pair {k} (sorted) = ({}, {}) refers to a charge ≥ n = {n}",
            p >> 32,
            p & 0xffff_ffff
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_pairs_are_sorted_deduplicated_and_checked() {
        let e = Exclusions::new(&[[3, 1], [0, 2], [1, 3], [2, 4]], Some(&[0.5, 0.0, 0.5, 1.0]), 5).unwrap();
        assert_eq!(e.keys, vec![2, (1 << 32) | 3]);
        assert_eq!(e.scale, vec![0.0, 0.5]);
        assert!(e.allows_coincident(0, 2));
        assert!(!e.allows_coincident(1, 3), "a scaled pair still interacts");
        assert!(!e.all_full());
        let full = Exclusions::new(&[[1, 0], [0, 1]], Some(&[0.0, 0.0]), 2).unwrap();
        assert!(full.all_full() && full.len() == 1 && full.allows_coincident(0, 1));
        let msg = |r: Result<Exclusions>| match r {
            Err(Error::InvalidArg(m)) | Err(Error::NonFinite(m)) => m,
            other => panic!("expected an error, got {other:?}"),
        };
        assert!(msg(Exclusions::new(&[[0, 1], [1, 0]], Some(&[0.5, 0.25]), 2)).contains("two scales"));
        // a scale of 1 is a scale too: the same pair with 0.5 and 1 is contradictory
        assert!(msg(Exclusions::new(&[[0, 1], [1, 0]], Some(&[0.5, 1.0]), 2)).contains("two scales"));
        assert!(msg(Exclusions::new(&[[1, 0], [0, 1]], Some(&[1.0, 0.0]), 2)).contains("two scales"));
        let ones = Exclusions::new(&[[0, 1], [1, 0], [1, 2]], Some(&[1.0, 1.0, 0.5]), 3).unwrap();
        assert_eq!((ones.keys, ones.scale), (vec![(1 << 32) | 2], vec![0.5]), "repeated scale-1 pairs are dropped");
        assert!(msg(Exclusions::new(&[[0, 1], [1, 7]], Some(&[0.5, 0.25]), 2)).contains("pair 1"));
        assert!(msg(Exclusions::new(&[[0, 1]], Some(&[f64::NAN]), 2)).contains("scale 0"));
        assert!(msg(Exclusions::new(&[[0, 1]], Some(&[]), 2)).contains("0 scales for 1 pairs"));
    }
}
