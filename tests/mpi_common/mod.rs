//! The launcher of the MPI tests (feature `mpi`, `harness = false`): started without an MPI
//! launcher, a test binary launches itself under `mpirun -np K` for K = 1, 2, 3, 4
//! (`--oversubscribe`, so 4 ranks run on a 2-core machine) and fails if any run fails; under
//! the launcher ([`is_child`]) each rank runs the checks.

use std::process::Command;

/// True in a rank started by [`launch`].
pub fn is_child() -> bool {
    std::env::var_os("FARFIELD_MPI_CHILD").is_some()
}

/// Initialises MPI in a rank and makes a failing rank abort the job: unwinding would reach
/// `MPI_Finalize` and wait there for ranks that wait in a collective for it.
pub fn init() -> mpi::environment::Universe {
    let universe = mpi::initialize().expect("MPI initialises once");
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        // SAFETY: MPI is initialised; MPI_Abort does not return.
        unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 101) };
    }));
    universe
}

/// Launches this binary (the test `name`) under `mpirun -np K` for K = 1…4; panics if a run
/// fails or takes more than 900 s.
pub fn launch(name: &str) {
    let exe = std::env::current_exe().expect("test binary path");
    let version = Command::new("mpirun").arg("--version").output();
    let Ok(version) = version else {
        panic!("mpirun not found: the `mpi` feature needs an MPI launcher (scripts/install-deps.sh installs Open MPI)");
    };
    let open_mpi = String::from_utf8_lossy(&version.stdout).contains("Open MPI");
    for np in 1..=4 {
        let mut cmd = Command::new("mpirun");
        cmd.arg("-np").arg(np.to_string());
        if open_mpi {
            cmd.arg("--oversubscribe");
            // Open MPI refuses root without these (containers and CI run as root)
            cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        cmd.arg(&exe).env("FARFIELD_MPI_CHILD", "1");
        let t = std::time::Instant::now();
        // a hang (a rank left behind in a collective) fails the test instead of blocking CI
        let mut child = cmd.spawn().expect("mpirun starts");
        let status = loop {
            if let Some(st) = child.try_wait().expect("wait for mpirun") {
                break st;
            }
            if t.elapsed().as_secs() > 900 {
                let _ = child.kill();
                panic!("mpirun -np {np} did not finish in 900 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        eprintln!("{name}: mpirun -np {np}: {status} ({:.1} s)", t.elapsed().as_secs_f64());
        assert!(status.success(), "mpirun -np {np} failed: {status}");
    }
}
