//! Process-wide memo tables for pure functions that plan set-up evaluates many times with the
//! same arguments: the NUFFT's parameter search (`nufft::params`) asks for the same fine-grid
//! sizes ([`crate::fft::next_fft_size`]) and the same kernels' deconvolution amplification
//! (`nufft::params::amplification`) for every σ and width it considers, and again for every plan
//! and every `setpts` of a program that plans repeatedly (mri-nufft plans per operator call).
//! The spreader's piecewise-polynomial fit of an ES kernel (`kernel::es::EsHorner`) is the
//! same for every plan of the same kernel and tolerance. A hit returns the value the function
//! computed, bit for bit, so results never depend on what was cached; a table holding
//! [`Memo`]'s capacity is emptied before the next insert, which bounds its memory.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock, PoisonError};

/// A memo table of at most `cap` entries, shared by every thread (a `static`).
pub struct Memo<K, V> {
    map: OnceLock<Mutex<HashMap<K, V>>>,
    cap: usize,
}

impl<K: Hash + Eq, V: Clone> Memo<K, V> {
    /// An empty table of at most `cap` entries.
    pub const fn new(cap: usize) -> Self {
        Memo { map: OnceLock::new(), cap }
    }

    /// The value stored for `key`, else `f()`, stored. `f` runs outside the lock (two threads
    /// may both compute a missing value; both store the same one).
    pub fn get_or(&self, key: K, f: impl FnOnce() -> V) -> V {
        let map = self.map.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(v) = map.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return v.clone();
        }
        let v = f();
        let mut m = map.lock().unwrap_or_else(PoisonError::into_inner);
        if m.len() >= self.cap {
            m.clear();
        }
        m.insert(key, v.clone());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;

    #[test]
    fn computes_once_and_bounds_its_size() {
        static M: Memo<u32, u64> = Memo::new(3);
        let calls = std::cell::Cell::new(0);
        let f = |k: u32| M.get_or(k, || { calls.set(calls.get() + 1); u64::from(k) * 10 });
        assert_eq!((f(1), f(1), f(2)), (10, 10, 20));
        assert_eq!(calls.get(), 2);
        assert_eq!((f(3), f(4), f(1)), (30, 40, 10)); // the 4th insert emptied the table
        assert_eq!(calls.get(), 5);
        assert!(M.map.get().unwrap().lock().unwrap().len() <= 3);
    }
}
