//! Exact power-of-two rescaling between a caller's units and a solver's internal units, and the
//! range check of results on the way back. The Ewald and Poisson plans compute in units of a
//! power of two near the cell size or grid spacing (and of the charges or source), so every
//! scale whose results are representable in double precision gives the unit-scale answer, and
//! a result that would overflow or underflow is an [`Error::Range`] instead of a wrong number
//! with success (docs/design.md §2).

use crate::error::{Error, Result};

/// `v·2^e`, exactly rounded (as `scalbn`): one multiplication when `2^e` is a normal double.
#[inline(always)]
pub(crate) fn pow2(v: f64, e: i32) -> f64 {
    if (-1022..=1023).contains(&e) {
        v * f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        libm::scalbn(v, e)
    }
}

/// Binary exponent `e` with `2^(e−1) ≤ m < 2^e` for `m > 0` (0 for `m = 0`).
pub(crate) fn exponent_of(m: f64) -> i32 {
    if m == 0.0 {
        0
    } else {
        libm::frexp(m).1
    }
}

/// `max(m, max_i |v_i|)`, NaN if any is NaN.
pub(crate) fn max_abs(m: f64, v: &[f64]) -> f64 {
    let mut r = m;
    let mut nan = m.is_nan();
    for &x in v {
        r = r.max(x.abs());
        nan |= x.is_nan();
    }
    if nan { f64::NAN } else { r }
}

/// Checks that values of largest magnitude `max` (≥ 0 or NaN, in internal units) stay finite
/// and do not all underflow when multiplied by `2^exp`; [`Error::Range`] naming `what` otherwise.
pub(crate) fn check_scaled(what: &str, max: f64, exp: i32) -> Result<()> {
    if !max.is_finite() {
        return Err(Error::Range(format!(
            "{what} is not finite (largest magnitude {max:e} in internal units): the input contains NaN/Inf \
             or the computation overflowed"
        )));
    }
    let big = libm::scalbn(max, exp);
    if !big.is_finite() {
        return Err(Error::Range(format!(
            "{what} overflows: its largest magnitude {max:e}·2^{exp} exceeds the largest double {:e}; \
             rescale the input or the length unit",
            f64::MAX
        )));
    }
    if max > 0.0 && big < f64::MIN_POSITIVE {
        return Err(Error::Range(format!(
            "{what} underflows: its largest magnitude {max:e}·2^{exp} = {big:e} is below the smallest normal \
             double {:e}; rescale the input or the length unit",
            f64::MIN_POSITIVE
        )));
    }
    Ok(())
}

/// Multiplies every value of `v` by `2^e` after [`check_scaled`] (`v` is unchanged on error).
pub(crate) fn rescale(v: &mut [f64], e: i32, what: &str) -> Result<()> {
    check_scaled(what, max_abs(0.0, v), e)?;
    for x in v.iter_mut() {
        *x = pow2(*x, e);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_checked() {
        assert_eq!(pow2(3.0, 4), 48.0);
        assert_eq!(pow2(1.0, -1074), f64::from_bits(1));
        assert_eq!(pow2(0.75, 1025), 0.75 * 2f64.powi(1000) * 2f64.powi(25));
        assert_eq!(exponent_of(0.0), 0);
        assert_eq!(exponent_of(1.0), 1);
        assert_eq!(exponent_of(0.75), 0);
        assert!(max_abs(0.0, &[1.0, f64::NAN]).is_nan());
        let mut v = [1.0, -2.0];
        rescale(&mut v, 3, "v").unwrap();
        assert_eq!(v, [8.0, -16.0]);
        assert!(matches!(rescale(&mut v, 1030, "v"), Err(Error::Range(_))));
        assert!(matches!(rescale(&mut v, -1100, "v"), Err(Error::Range(_))));
        assert_eq!(v, [8.0, -16.0]);
        assert!(matches!(rescale(&mut [f64::INFINITY], 0, "v"), Err(Error::Range(_))));
    }
}
