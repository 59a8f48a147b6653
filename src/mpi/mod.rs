//! The distributed layer (cargo feature `mpi`): a communicator the library owns ([`Comm`]),
//! the few collectives the distributed solvers use, and FFTW's own MPI transforms
//! ([`fft`]). Nothing here is a communication layer of its own: every exchange is one MPI
//! collective (`MPI_Allreduce`, `MPI_Allgather`, `MPI_Alltoallv`) and every distributed
//! transform is FFTW-MPI's (Frigo & Johnson, "The Design and Implementation of FFTW3",
//! Proc. IEEE 93(2) (2005) 216; FFTW manual §6, "Distributed-memory FFTW with MPI").
//!
//! # Communicators
//! Plans take the caller's communicator and work on a duplicate of it (`MPI_Comm_dup`), so
//! the library's messages never match the caller's; the duplicate's error handler is
//! `MPI_ERRORS_RETURN`, so a failing MPI call inside the library becomes
//! [`Error::Internal`] with MPI's error string instead of an abort. Through the C ABI the
//! communicator arrives as its Fortran handle (`MPI_Fint`, a C `int` in Open MPI and MPICH):
//! the ABI then does not depend on the MPI implementation's `MPI_Comm` type; C callers pass
//! `MPI_Comm_c2f(comm)`, Fortran callers their `integer :: comm` (`comm%MPI_VAL` with
//! `mpi_f08`). [`Comm::from_fint`] rejects an invalid handle with [`Error::InvalidArg`] where
//! MPI allows it to be detected (Open MPI and MPICH return `MPI_COMM_NULL` or a null handle
//! for a Fortran index that names no communicator), and MPI not initialised (or already
//! finalised) with [`Error::NotSupported`].
//!
//! # Threads
//! All calls on one plan must come from one thread at a time, and from the thread that called
//! `MPI_Init` unless MPI was initialised with `MPI_THREAD_SERIALIZED` or higher. Every rank
//! must call a plan's collective functions (make, execute, destroy) in the same order.

pub mod fft;

use crate::error::{Error, Result};
use ::mpi::ffi;
use std::os::raw::{c_char, c_int, c_void};

/// A duplicate of the caller's communicator, owned by a plan (freed when dropped, unless MPI
/// has been finalised by then).
pub struct Comm {
    raw: ffi::MPI_Comm,
    rank: usize,
    size: usize,
}

// SAFETY: an MPI communicator handle is a process-wide object; moving it to another thread
// is allowed by MPI (what matters is which thread calls, see the module's "Threads").
unsafe impl Send for Comm {}

/// Reduction used by [`Comm::allreduce_f64`] and [`Comm::allreduce_u64`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `MPI_SUM`.
    Sum,
    /// `MPI_MAX`.
    Max,
    /// `MPI_MIN`.
    Min,
}

impl Op {
    fn raw(self) -> ffi::MPI_Op {
        // SAFETY: rsmpi's predefined handles, valid after MPI_Init.
        unsafe {
            match self {
                Op::Sum => ffi::RSMPI_SUM,
                Op::Max => ffi::RSMPI_MAX,
                Op::Min => ffi::RSMPI_MIN,
            }
        }
    }
}

/// `true` when the handle's bytes are all zero (a null pointer where handles are pointers, as in
/// Open MPI; never a valid handle in MPICH either, whose handles are tagged integers).
fn all_zero<T>(v: &T) -> bool {
    // SAFETY: reads the bytes of a plain handle value.
    let b = unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) };
    b.iter().all(|&x| x == 0)
}

fn same_handle<T>(a: &T, b: &T) -> bool {
    // SAFETY: as `all_zero`.
    let (x, y) = unsafe {
        (
            std::slice::from_raw_parts(a as *const T as *const u8, std::mem::size_of::<T>()),
            std::slice::from_raw_parts(b as *const T as *const u8, std::mem::size_of::<T>()),
        )
    };
    x == y
}

/// `Ok(())` when MPI is initialised and not finalised, else [`Error::NotSupported`].
fn check_initialised() -> Result<()> {
    let (mut init, mut fin) = (0 as c_int, 0 as c_int);
    // SAFETY: both may be called at any time, before MPI_Init and after MPI_Finalize.
    unsafe {
        ffi::MPI_Initialized(&mut init);
        ffi::MPI_Finalized(&mut fin);
    }
    if init == 0 || fin != 0 {
        return Err(Error::NotSupported(format!(
            "MPI is {}: call MPI_Init before making a distributed plan",
            if fin != 0 { "already finalised" } else { "not initialised" }
        )));
    }
    Ok(())
}

/// MPI's error string for `code`.
fn error_string(code: c_int) -> String {
    let mut buf = vec![0 as c_char; 1024];
    let mut len: c_int = 0;
    // SAFETY: buffer of MPI_MAX_ERROR_STRING (≤ 1024 in Open MPI and MPICH) characters.
    unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr(), &mut len) };
    let bytes: Vec<u8> = buf[..len.clamp(0, 1024) as usize].iter().map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `Ok(())` for `MPI_SUCCESS`, else [`Error::Internal`] naming the call and MPI's message.
fn check(code: c_int, what: &str) -> Result<()> {
    if code == ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(Error::Internal(format!("{what} failed: MPI error {code} ({})", error_string(code))))
    }
}

impl Comm {
    /// Duplicates the communicator whose Fortran handle is `fint` (`MPI_Comm_c2f(comm)` in C).
    ///
    /// Errors: [`Error::NotSupported`] (MPI not initialised, or finalised),
    /// [`Error::InvalidArg`] (the handle names no communicator, or is `MPI_COMM_NULL`),
    /// [`Error::Internal`] (`MPI_Comm_dup` failed).
    pub fn from_fint(fint: c_int) -> Result<Comm> {
        check_initialised()?;
        // SAFETY: MPI is initialised; f2c does not invoke an error handler on a bad index
        // (MPI-4.0 §19.3.4) but returns an invalid handle, checked below.
        let raw = unsafe { ffi::MPI_Comm_f2c(fint) };
        if all_zero(&raw) || same_handle(&raw, unsafe { &ffi::RSMPI_COMM_NULL }) {
            return Err(Error::InvalidArg(format!(
                "communicator handle {fint} (MPI_Fint) names no communicator (or is MPI_COMM_NULL); \
                 pass MPI_Comm_c2f(comm) from C, the integer handle from Fortran"
            )));
        }
        Self::duplicate_raw(raw)
    }

    /// Duplicates an rsmpi communicator (the Rust API's entry point).
    ///
    /// Errors: [`Error::NotSupported`] (MPI not initialised or finalised), [`Error::Internal`].
    pub fn duplicate<C: ::mpi::traits::AsRaw<Raw = ffi::MPI_Comm>>(comm: &C) -> Result<Comm> {
        check_initialised()?;
        let raw = comm.as_raw();
        if same_handle(&raw, unsafe { &ffi::RSMPI_COMM_NULL }) {
            return Err(Error::InvalidArg("the communicator is MPI_COMM_NULL".into()));
        }
        Self::duplicate_raw(raw)
    }

    fn duplicate_raw(raw: ffi::MPI_Comm) -> Result<Comm> {
        let mut dup = std::mem::MaybeUninit::<ffi::MPI_Comm>::uninit();
        // SAFETY: raw is a valid communicator (checked by the callers); dup is written by MPI.
        check(unsafe { ffi::MPI_Comm_dup(raw, dup.as_mut_ptr()) }, "MPI_Comm_dup")?;
        let dup = unsafe { dup.assume_init() };
        // SAFETY: dup is valid; ERRORS_RETURN is a predefined handle.
        check(unsafe { ffi::MPI_Comm_set_errhandler(dup, ffi::RSMPI_ERRORS_RETURN) }, "MPI_Comm_set_errhandler")?;
        let (mut r, mut s) = (0 as c_int, 0 as c_int);
        // SAFETY: valid communicator.
        unsafe {
            check(ffi::MPI_Comm_rank(dup, &mut r), "MPI_Comm_rank")?;
            check(ffi::MPI_Comm_size(dup, &mut s), "MPI_Comm_size")?;
        }
        Ok(Comm { raw: dup, rank: r as usize, size: s as usize })
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }
    /// The raw handle (for FFTW-MPI).
    pub(crate) fn raw(&self) -> ffi::MPI_Comm {
        self.raw
    }

    /// In-place `MPI_Allreduce` of `v` (every rank passes the same length).
    pub fn allreduce_f64(&self, v: &mut [f64], op: Op) -> Result<()> {
        // SAFETY: f64 is MPI_DOUBLE.
        unsafe { self.allreduce_raw(v, ffi::RSMPI_DOUBLE, op) }
    }

    /// In-place `MPI_Allreduce` of `v` as `uint64_t`.
    pub fn allreduce_u64(&self, v: &mut [u64], op: Op) -> Result<()> {
        // SAFETY: u64 is MPI_UINT64_T.
        unsafe { self.allreduce_raw(v, ffi::RSMPI_UINT64_T, op) }
    }

    /// # Safety
    /// `ty` must be the MPI datatype of `T`.
    unsafe fn allreduce_raw<T: Copy>(&self, v: &mut [T], ty: ffi::MPI_Datatype, op: Op) -> Result<()> {
        let src = v.to_vec();
        // SAFETY: buffers of v.len() elements of type ty; valid communicator.
        check(
            ffi::MPI_Allreduce(src.as_ptr() as *const c_void, v.as_mut_ptr() as *mut c_void, v.len() as c_int, ty,
                               op.raw(), self.raw),
            "MPI_Allreduce",
        )
    }

    /// `MPI_Allgather` of `v` (same length on every rank): rank `r`'s values at `r·v.len()`.
    pub fn allgather_i64(&self, v: &[i64]) -> Result<Vec<i64>> {
        let mut out = vec![0i64; v.len() * self.size];
        // SAFETY: send v.len(), receive v.len() per rank into a buffer of size·v.len().
        check(
            unsafe {
                ffi::MPI_Allgather(v.as_ptr() as *const c_void, v.len() as c_int, ffi::RSMPI_INT64_T,
                                   out.as_mut_ptr() as *mut c_void, v.len() as c_int, ffi::RSMPI_INT64_T, self.raw)
            },
            "MPI_Allgather",
        )?;
        Ok(out)
    }

    /// `MPI_Alltoall` of one `uint64_t` per rank: `send[r]` goes to rank `r`; entry `r` of the
    /// result came from rank `r` (the counts before an [`Comm::alltoallv_planes`]).
    pub fn alltoall_u64(&self, send: &[u64]) -> Result<Vec<u64>> {
        if send.len() != self.size {
            return Err(Error::InvalidArg(format!("alltoall: {} values for {} ranks", send.len(), self.size)));
        }
        let mut out = vec![0u64; self.size];
        // SAFETY: one value to and from each rank, buffers of size() values.
        check(
            unsafe {
                ffi::MPI_Alltoall(send.as_ptr() as *const c_void, 1, ffi::RSMPI_UINT64_T, out.as_mut_ptr() as *mut c_void, 1,
                                  ffi::RSMPI_UINT64_T, self.raw)
            },
            "MPI_Alltoall",
        )?;
        Ok(out)
    }

    /// `MPI_Alltoallv` of whole planes of `plane_len` doubles: `send_counts[r]` planes from
    /// `send[send_displs[r]·plane_len..]` go to rank `r`; `recv_counts[r]` planes from rank `r`
    /// land at `recv[recv_displs[r]·plane_len..]`. Counts and displacements are in planes (a
    /// contiguous MPI datatype of one plane), so grids past 2³¹ values per rank are fine.
    ///
    /// Errors: [`Error::InvalidArg`] (a plane range outside its buffer, or a count past
    /// `i32::MAX` planes), [`Error::Internal`] (MPI).
    pub fn alltoallv_planes(&self, plane_len: usize, send: &[f64], send_counts: &[usize], send_displs: &[usize],
                            recv: &mut [f64], recv_counts: &[usize], recv_displs: &[usize]) -> Result<()> {
        let k = self.size;
        let fits = |c: &[usize], d: &[usize], len: usize| {
            c.len() == k && d.len() == k && c.iter().zip(d).all(|(&c, &d)| c == 0 || (d + c) * plane_len <= len)
        };
        if !fits(send_counts, send_displs, send.len()) || !fits(recv_counts, recv_displs, recv.len()) {
            return Err(Error::InvalidArg("plane exchange: a plane range lies outside its buffer".into()));
        }
        let to_int = |v: &[usize]| -> Result<Vec<c_int>> {
            v.iter()
                .map(|&x| c_int::try_from(x).map_err(|_| Error::Range(format!("plane exchange: {x} planes exceed MPI's int"))))
                .collect()
        };
        let (sc, sd, rc, rd) = (to_int(send_counts)?, to_int(send_displs)?, to_int(recv_counts)?, to_int(recv_displs)?);
        let plane_len_c = c_int::try_from(plane_len.max(1))
            .map_err(|_| Error::Range(format!("plane exchange: a plane of {plane_len} values exceeds MPI's int")))?;
        let mut ty = std::mem::MaybeUninit::<ffi::MPI_Datatype>::uninit();
        // SAFETY: standard datatype construction; freed below.
        unsafe {
            check(ffi::MPI_Type_contiguous(plane_len_c, ffi::RSMPI_DOUBLE, ty.as_mut_ptr()), "MPI_Type_contiguous")?;
        }
        let mut ty = unsafe { ty.assume_init() };
        // SAFETY: committed type; buffers checked above to hold every plane range.
        let rc_all = unsafe {
            let c = ffi::MPI_Type_commit(&mut ty);
            if c != ffi::MPI_SUCCESS as c_int {
                c
            } else {
                ffi::MPI_Alltoallv(send.as_ptr() as *const c_void, sc.as_ptr(), sd.as_ptr(), ty,
                                   recv.as_mut_ptr() as *mut c_void, rc.as_ptr(), rd.as_ptr(), ty, self.raw)
            }
        };
        // SAFETY: ty was created above.
        unsafe { ffi::MPI_Type_free(&mut ty) };
        check(rc_all, "MPI_Alltoallv")
    }

    /// Collective check that every rank passed the same `values` (e.g. grid sizes and spacings
    /// as bits): [`Error::InvalidArg`] on **every** rank, naming `what`, when they differ.
    pub fn check_same(&self, values: &[u64], what: &str) -> Result<()> {
        let mut lo = values.to_vec();
        let mut hi = values.to_vec();
        self.allreduce_u64(&mut lo, Op::Min)?;
        self.allreduce_u64(&mut hi, Op::Max)?;
        if lo != hi {
            return Err(Error::InvalidArg(format!(
                "{what} differ between the ranks of the communicator (every rank must pass the same values)"
            )));
        }
        Ok(())
    }

    /// Collective error agreement: if any rank has an error, every rank returns **the same**
    /// error: the one of the lowest status code (then the lowest rank) among the failing ranks,
    /// on its own rank as it is, on every other rank as the same [`Error`] variant (so the same
    /// C status) with the message `rank r of the communicator failed: <its message>` (the
    /// message travels by one `MPI_Bcast`, only on failure). Call it wherever a local step can
    /// fail before the next collective, so that no rank is left waiting in that collective.
    /// Costs one `MPI_Allreduce` of one integer when every rank succeeds.
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        let mut flag = [match &local {
            Err(e) => ((e.code().max(0) as u64) << 32) | self.rank as u64,
            Ok(_) => u64::MAX,
        }];
        self.allreduce_u64(&mut flag, Op::Min)?;
        if flag[0] == u64::MAX {
            return local;
        }
        let (code, from) = ((flag[0] >> 32) as i32, (flag[0] & 0xffff_ffff) as usize);
        let mine = match &local {
            Err(e) if from == self.rank => e.message().to_string(),
            _ => String::new(),
        };
        let msg = self.bcast_string(from, &mine)?;
        if from == self.rank {
            return local;
        }
        Err(error_of_code(code, format!("rank {from} of the communicator failed: {msg}")))
    }

    /// `MPI_Bcast` of the string `s` of rank `root` (at most 4096 bytes of it, cut at a
    /// character boundary); the other ranks' `s` is ignored. Collective.
    fn bcast_string(&self, root: usize, s: &str) -> Result<String> {
        let mut cut = s.len().min(4096);
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut len = [cut as u64];
        // SAFETY: one uint64_t from root to every rank, then len bytes; valid communicator.
        unsafe {
            check(ffi::MPI_Bcast(len.as_mut_ptr() as *mut c_void, 1, ffi::RSMPI_UINT64_T, root as c_int, self.raw), "MPI_Bcast")?;
        }
        let n = (len[0] as usize).min(4096);
        let mut buf = vec![0u8; n];
        if self.rank == root {
            buf.copy_from_slice(&s.as_bytes()[..n]);
        }
        // SAFETY: n bytes from root to every rank.
        unsafe {
            check(ffi::MPI_Bcast(buf.as_mut_ptr() as *mut c_void, n as c_int, ffi::RSMPI_UINT8_T, root as c_int, self.raw),
                  "MPI_Bcast")?;
        }
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

/// The [`Error`] variant of the status `code` (as [`Error::code`] gives it), with `msg`.
fn error_of_code(code: i32, msg: String) -> Error {
    use crate::error::*;
    match code {
        FARFIELD_ERR_NULL_POINTER => Error::NullPointer(msg),
        FARFIELD_ERR_INVALID_ARG => Error::InvalidArg(msg),
        FARFIELD_ERR_DIM => Error::Dim(msg),
        FARFIELD_ERR_TYPE => Error::Type(msg),
        FARFIELD_ERR_NOT_SUPPORTED => Error::NotSupported(msg),
        FARFIELD_ERR_MODES => Error::Modes(msg),
        FARFIELD_ERR_TOL => Error::Tol(msg),
        FARFIELD_ERR_NPOINTS => Error::NPoints(msg),
        FARFIELD_ERR_NONFINITE => Error::NonFinite(msg),
        FARFIELD_ERR_ALLOC => Error::Alloc(msg),
        FARFIELD_ERR_NO_POINTS => Error::NoPoints(msg),
        FARFIELD_ERR_NO_DEVICE => Error::NoDevice(msg),
        FARFIELD_ERR_FFT => Error::Fft(msg),
        FARFIELD_ERR_RANGE => Error::Range(msg),
        _ => Error::Internal(msg),
    }
}

/// The failure injection point set by [`inject_failure`] (none: `None`).
static FAIL_AT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Test hook (hidden, Rust only, not in the C ABI): from now on, in **this process** (one
/// rank), the named step of a distributed plan fails with [`Error::Alloc`] as if an allocation
/// had failed there, until called again (`None`: no injected failure). The steps are the
/// [`fail_point`] calls of `ewald::dist` and `poisson::dist` (their names are listed in
/// `tests/mpi_ewald.rs` and `tests/mpi_poisson.rs`). It exists to test that a failure on one
/// rank ends every rank's call with the same status instead of leaving ranks waiting in a
/// collective.
#[doc(hidden)]
pub fn inject_failure(point: Option<&str>) {
    *FAIL_AT.lock().unwrap_or_else(|e| e.into_inner()) = point.map(str::to_string);
}

/// `Err(Error::Alloc)` when [`inject_failure`] named `point` in this process, else `Ok(())`.
/// Placed inside the local steps that are agreed before the next collective.
pub(crate) fn fail_point(point: &str) -> Result<()> {
    match FAIL_AT.lock().unwrap_or_else(|e| e.into_inner()).as_deref() {
        Some(p) if p == point => Err(Error::Alloc(format!("injected failure at `{point}` (test hook)"))),
        _ => Ok(()),
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        let mut fin: c_int = 0;
        // SAFETY: MPI_Finalized may always be called; the dup is ours to free.
        unsafe {
            ffi::MPI_Finalized(&mut fin);
            if fin == 0 {
                ffi::MPI_Comm_free(&mut self.raw);
            }
        }
    }
}
