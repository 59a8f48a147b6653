//! Excluded and scaled pairs on the device ([`crate::pairs::Exclusions`]), shared by the Ewald
//! real-space pass and the FMM: CSR per particle (row `i`: the partners of particle `i` in the
//! caller's numbering, sorted, and, unless every pair is fully excluded, the scale of each
//! entry), so that a kernel thread corrects its own particle from its row, without atomics.
//! Kernel arguments, in this order: `const unsigned* xptr` (`nxa + 1` row starts),
//! `const unsigned* xlist` (partners), `int nxa` (rows: largest index + 1), `const double*
//! xscale` (null: every scale 0).

use crate::error::{try_vec, Result};
use crate::gpu::device::{upload_new, Arg, Device};
use crate::pairs::Exclusions;

/// The pairs of a plan, on the host (for the checks) and as CSR on the device.
pub struct DevicePairs<D: Device> {
    /// The pairs (sorted keys and scales).
    pub(crate) host: Exclusions,
    xptr: D::Buf,
    xlist: D::Buf,
    xscale: Option<D::Buf>,
    nxa: usize,
}

impl<D: Device> DevicePairs<D> {
    /// No pairs. Errors: device allocation.
    pub fn new(dev: &D) -> Result<Self> {
        Ok(DevicePairs { host: Exclusions::default(), xptr: upload_new(dev, &[0u32])?, xlist: upload_new(dev, &[0u32])?, xscale: None, nxa: 0 })
    }

    /// Replaces the pairs by `ex` (uploaded). Errors: [`crate::Error::Alloc`] and device errors;
    /// on error the earlier pairs are kept.
    pub(crate) fn set(&mut self, dev: &D, ex: Exclusions) -> Result<()> {
        let (ptr, list, scales, nxa) = exclusion_csr(&ex)?;
        let xptr = upload_new(dev, &ptr)?;
        let xlist = upload_new(dev, &list)?;
        let xscale = scales.map(|s| upload_new(dev, &s)).transpose()?;
        *self = DevicePairs { host: ex, xptr, xlist, xscale, nxa };
        Ok(())
    }

    /// No pairs.
    pub fn is_empty(&self) -> bool {
        self.host.is_empty()
    }

    /// The four kernel arguments (module docs).
    pub fn args(&self) -> [Arg<'_, D::Buf>; 4] {
        [Arg::Buf(&self.xptr), Arg::Buf(&self.xlist), Arg::I32(self.nxa as i32), self.xscale.as_ref().map_or(Arg::Null, Arg::Buf)]
    }
}

/// The exclusion CSR of the pairs `ex`: row starts (`nxa + 1`, `nxa` = largest index + 1), the
/// partners of each atom in increasing order and, unless every pair is fully excluded, the
/// scale of each partner entry. Error: [`Error::Alloc`].
fn exclusion_csr(ex: &Exclusions) -> Result<(Vec<u32>, Vec<u32>, Option<Vec<f64>>, usize)> {
    let keys = &ex.keys;
    let nxa = keys.iter().map(|&k| (k & 0xffff_ffff) as usize + 1).max().unwrap_or(0);
    let mut ptr = try_vec::<u32>(nxa + 1, "exclusion rows")?;
    ptr.resize(nxa + 1, 0);
    for &k in keys {
        ptr[(k >> 32) as usize + 1] += 1;
        ptr[(k & 0xffff_ffff) as usize + 1] += 1;
    }
    for i in 0..nxa {
        ptr[i + 1] += ptr[i];
    }
    // (partner, scale) entries, sorted by partner within each row
    let mut list = try_vec::<(u32, f64)>(2 * keys.len(), "exclusion partners")?;
    list.resize(2 * keys.len(), (0, 0.0));
    let mut fill = ptr.clone();
    for (m, &k) in keys.iter().enumerate() {
        let (a, b) = ((k >> 32) as usize, (k & 0xffff_ffff) as usize);
        let s = ex.scale_of(m);
        list[fill[a] as usize] = (b as u32, s);
        fill[a] += 1;
        list[fill[b] as usize] = (a as u32, s);
        fill[b] += 1;
    }
    for i in 0..nxa {
        list[ptr[i] as usize..ptr[i + 1] as usize].sort_unstable_by_key(|e| e.0);
    }
    let mut partners = try_vec::<u32>(list.len(), "exclusion partners")?;
    partners.extend(list.iter().map(|e| e.0));
    let scales = if ex.all_full() {
        None
    } else {
        let mut v = try_vec::<f64>(list.len(), "exclusion scales")?;
        v.extend(list.iter().map(|e| e.1));
        Some(v)
    };
    Ok((ptr, partners, scales, nxa))
}
