// LAMMPS with farfield's distributed SPME for all of its Coulomb interaction, on 1 … K MPI ranks.
//
// Debian's LAMMPS (29 Sep 2021, built with Open MPI) has no plugin loader, so this program
// drives LAMMPS through its library interface (library.h), on MPI_COMM_WORLD:
//   * LAMMPS keeps the bonded terms (the CHARMM dihedrals' weighted 1-4 pairs included) and the
//     Lennard-Jones pairs; its pair style's Coulomb cutoff is set to 1e-4 Å, so that its pair
//     loop computes no Coulomb term and no special-bond correction (coul/long needs a k-space
//     style: `kspace_style ewald 1e-5` with `kspace_modify gewald 0.3 compute no`);
//   * farfield computes the whole Coulomb interaction: a distributed SPME plan
//     (`farfield_ewald_makeplan_mpi`, `opts.terms` ALL: real space, k space, self term) takes
//     each rank's atoms with their global ids (`farfield_ewald_execute_ids`) — LAMMPS's domain
//     decomposition decides which atoms a rank holds, and they migrate — and the excluded and
//     scaled pairs of the LAMMPS topology (`farfield_ewald_set_exclusions_scaled`): the 1-2,
//     1-3 and 1-4 neighbours that LAMMPS's special-bond lists hold, derived from the bond list
//     (`lammps_gather_bonds`) as LAMMPS derives them (1-3 = partners of 1-2 partners, 1-4 =
//     partners of 1-3 partners, each pair at its lowest level), with the input's
//     `special_bonds coul` factors;
//   * `fix ext all external pf/callback 1 1` calls back every step on every rank: forces
//     q_i E_i, the energy and the virial (the whole system's, on every rank) times
//     force->qqrd2e (the library works without a Coulomb constant).
//
// Accuracy: farfield's `tol` is relative to the RMS Coulomb force of all pairs (F_all); a force
// field's own Coulomb forces (special pairs excluded or scaled, and after SHAKE, whose
// constraint forces take out the forces along the rigid bonds: F_ff) are 10–15× smaller. With
// `--scale ff` (default) the plan is made for `tol · F_ff / F_all`: F_all by farfield's
// single-process SPME at 1e-9 at step 0, F_ff measured as the checks measure it, LAMMPS's
// forces at step 0 with farfield's Coulomb forces minus those without (a probe run, with a
// plan made for farfield's estimate of F_ff without constraints). `--scale all` asks for tol
// as given (the library's scale).
//
// Runs (each from the same state, every one on all the ranks of the mpirun):
//   the reference `kspace_style ewald 1e-8`, farfield, LAMMPS's `kspace_style pppm 1e-5`, and
//   the reference without charges (step 0: F_ff = the reference's forces minus these).
// It reports the force error at step 0 against the reference on both scales, the largest
// potential-energy and pressure differences over the steps, the largest position deviation
// after `steps` steps, and the time per step of farfield and pppm.
//
// `--record FILE` writes the farfield run's potential energy and pressure each step, its forces each 10
// steps and the reference's step-0 data; `--compare FILE` then runs farfield alone (on any
// number of ranks) and checks it against the recorded run: energies and pressures each step and
// forces each 10 steps within 1e-10 relative, and the recorded reference within the accuracy
// asked.
//
// Build (with an installed farfield built with MPI, and Debian's liblammps-dev):
//   cmake -S examples -B build-examples -DCMAKE_PREFIX_PATH=<farfield prefix>
//   cmake --build build-examples --target lammps_farfield
// Run:
//   mpirun -np 1 build-examples/lammps_farfield peptide /usr/share/lammps/examples 100 1e-5 1 --record p.rec
//   mpirun -np 4 build-examples/lammps_farfield peptide /usr/share/lammps/examples 100 1e-5 1 --compare p.rec
//   arguments: system (peptide | water), LAMMPS's examples folder, [steps=100] [tol=1e-5]
//   [threads=1 per rank], options --scale ff|all, --record FILE, --compare FILE.
// Exit status 0 when every check passes, 1 when one fails, 2 on a setup error (on every rank).
#include <farfield.h>
#include <mpi.h>
#define LAMMPS_LIB_MPI 1  // library.h declares lammps_open(…, MPI_Comm, …) only with it
#include <library.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace {

int rank = 0, nranks = 1;

[[noreturn]] void fail_setup(const std::string &what) {
    std::fprintf(stderr, "[rank %d] %s\n", rank, what.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
    std::exit(2);
}

struct System {
    std::string name, pair_style, setup, data, after, fixes;
    double coul_cut;
    double special_coul[3];  // the Coulomb factors of 1-2, 1-3 and 1-4 pairs
};

// The inputs: the peptide as in LAMMPS's peptide example, in.peptide (CHARMM force field,
// SHAKE, NVT; LAMMPS's default special bonds, its CHARMM dihedrals adding the weighted 1-4
// pairs), and the SPC/E box of LAMMPS's HEAT example (rigid water by SHAKE, NVT), each with a
// 10 Angstrom Coulomb cutoff and `pair_modify table 0` in the LAMMPS runs (LAMMPS's default
// 12-bit Coulomb table has errors of its own). The k-space line is inserted before read_data;
// farfield's fix before the integrator and SHAKE (`fixes`), so that SHAKE's constraint forces
// see farfield's forces.
System make_system(const std::string &which, const std::string &ex) {
    // LAMMPS's default, stated: 1-2, 1-3 and 1-4 pairs excluded (dihedral style charmm requires it)
    const char *special = "special_bonds lj/coul 0.0 0.0 0.0\n";
    if (which == "peptide")
        return {"peptide",
                "lj/charmm/coul/long 8.0 10.0",
                std::string("units real\natom_style full\n") +
                    "bond_style harmonic\nangle_style charmm\ndihedral_style charmm\nimproper_style harmonic\n" + special,
                ex + "/peptide/data.peptide",
                "pair_modify table 0\nneighbor 2.0 bin\nneigh_modify delay 0 every 1 check yes\ntimestep 2.0\n",
                "fix 1 all nvt temp 275.0 275.0 100.0 tchain 1\n"
                "fix 2 all shake 0.0001 10 0 b 4 6 8 10 12 14 18 a 31\n",
                10.0,
                {0.0, 0.0, 0.0}};
    return {"water",
            "lj/cut/coul/long 10.0",
            std::string("units real\natom_style full\nbond_style harmonic\nangle_style harmonic\n") + special,
            ex + "/HEAT/data.spce",
            "pair_coeff 2 2 0.15535 3.166\npair_coeff 1 2 0 0\npair_coeff 1 1 0 0\n"
            "bond_coeff 1 1000.0 1.0\nangle_coeff 1 100.0 109.47\n"
            "pair_modify table 0\nneighbor 2.0 bin\nneigh_modify delay 0 every 1 check yes\ntimestep 2.0\n"
            "velocity all create 300.0 4928459 dist gaussian\n",
            "fix 1 all nvt temp 300.0 300.0 100.0 tchain 1\nfix 2 all shake 0.0001 10 0 b 1 a 1\n",
            10.0,
            {0.0, 0.0, 0.0}};
}

// The excluded and scaled pairs of the topology: LAMMPS's special lists built from the bonds.
struct Pairs {
    std::vector<int64_t> ij;  // 0-based ids (LAMMPS tag − 1), i < j
    std::vector<double> scale;
};

Pairs special_pairs(void *lmp, int natoms, const double special_coul[3]) {
    const int64_t nbonds = *static_cast<int64_t *>(lammps_extract_global(lmp, "nbonds"));
    const int tagsize = lammps_extract_setting(lmp, "tagint");
    std::vector<std::vector<int>> partners(static_cast<size_t>(natoms));
    std::vector<int64_t> bond(3 * static_cast<size_t>(nbonds));
    if (tagsize == 4) {
        std::vector<int32_t> b(3 * static_cast<size_t>(nbonds));
        lammps_gather_bonds(lmp, b.data());  // (type, tag1, tag2) per bond, on every rank
        std::copy(b.begin(), b.end(), bond.begin());
    } else {
        lammps_gather_bonds(lmp, bond.data());
    }
    for (int64_t k = 0; k < nbonds; k++) {
        const int64_t a = bond[3 * k + 1] - 1, b = bond[3 * k + 2] - 1;
        if (a < 0 || b < 0 || a >= natoms || b >= natoms) fail_setup("bond with an atom id out of range");
        partners[a].push_back(static_cast<int>(b));
        partners[b].push_back(static_cast<int>(a));
    }
    Pairs p;
    for (int i = 0; i < natoms; i++) {
        // level of each atom reached from i: 1 (1-2), 2 (1-3), 3 (1-4); the lowest one counts
        std::vector<std::pair<int, int>> found;  // (atom, level)
        std::set<int> seen{i};
        std::vector<int> frontier{i};
        for (int level = 1; level <= 3; level++) {
            std::vector<int> next;
            for (int a : frontier)
                for (int b : partners[a])
                    if (seen.insert(b).second) {
                        next.push_back(b);
                        found.emplace_back(b, level);
                    }
            frontier = std::move(next);
        }
        for (auto [j, level] : found)
            if (j > i && special_coul[level - 1] != 1.0) {
                p.ij.push_back(i);
                p.ij.push_back(j);
                p.scale.push_back(special_coul[level - 1]);
            }
    }
    return p;
}

void box_of(void *lmp, double cell[9]) {
    const double *lo = static_cast<double *>(lammps_extract_global(lmp, "boxlo"));
    const double *hi = static_cast<double *>(lammps_extract_global(lmp, "boxhi"));
    const double xy = *static_cast<double *>(lammps_extract_global(lmp, "xy"));
    const double xz = *static_cast<double *>(lammps_extract_global(lmp, "xz"));
    const double yz = *static_cast<double *>(lammps_extract_global(lmp, "yz"));
    // rows a, b, c of LAMMPS's (lower-triangular) cell
    const double c[9] = {hi[0] - lo[0], 0, 0, xy, hi[1] - lo[1], 0, xz, yz, hi[2] - lo[2]};
    std::copy(c, c + 9, cell);
}

// The state of farfield's Coulomb solver inside the callback (one per rank).
struct Coulomb {
    void *lmp = nullptr;
    farfield_ewald_plan plan = nullptr;
    double qqrd2e = 0.0;
    std::vector<double> xyz, field;
    std::vector<int64_t> ids;
    double seconds = 0.0;
    int calls = 0;
    int status = 0;
};

// fix external callback (every rank, collective): farfield's forces, energy and virial for
// this rank's nlocal atoms.
void coulomb_callback(void *ptr, int64_t, int nlocal, int *tag, double **x, double **fext) {
    auto *k = static_cast<Coulomb *>(ptr);
    auto t0 = std::chrono::steady_clock::now();
    const double *q = static_cast<double *>(lammps_extract_atom(k->lmp, "q"));
    k->qqrd2e = *static_cast<double *>(lammps_extract_global(k->lmp, "qqrd2e"));  // set by LAMMPS's init
    const size_t n = static_cast<size_t>(nlocal);
    k->xyz.resize(3 * n);
    k->field.resize(3 * n);
    k->ids.resize(n);
    // (the callback's tag array is LAMMPS's tagint: int with Debian's default LAMMPS_SMALLBIG)
    for (size_t i = 0; i < n; i++) {
        k->ids[i] = static_cast<int64_t>(tag[i]) - 1;
        for (int d = 0; d < 3; d++) k->xyz[3 * i + d] = x[i][d];
    }
    double cell[9], u = 0.0, w[9];
    box_of(k->lmp, cell);
    int s = farfield_ewald_set_box(k->plan, cell);
    if (s == FARFIELD_OK)
        s = farfield_ewald_execute_ids(k->plan, nlocal, k->ids.data(), k->xyz.data(), q, nullptr, k->field.data(), &u, w);
    if (s != FARFIELD_OK) {
        std::fprintf(stderr, "[rank %d] farfield: %s\n", rank, farfield_last_error_message());
        k->status = s;
        return;
    }
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) fext[i][d] = k->qqrd2e * q[i] * k->field[3 * i + d];
    // LAMMPS takes a fix's global energy and virial as given on each rank (the whole system's,
    // not summed over the ranks: checked by --compare, whose pressures differ by the factor of
    // the rank count otherwise)
    lammps_fix_external_set_energy_global(k->lmp, "ext", k->qqrd2e * u);
    // LAMMPS's order xx, yy, zz, xy, xz, yz; farfield's W = sum r_ij (x) F_ij is LAMMPS's virial
    double v[6] = {w[0], w[4], w[8], w[1], w[2], w[5]};
    for (double &c : v) c *= k->qqrd2e;
    lammps_fix_external_set_virial_global(k->lmp, "ext", v);
    k->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    k->calls++;
}

struct Run {
    std::vector<double> f0, x_end, pe, press;  // forces at step 0 (by atom id), positions at the end, pe and pressure per step
    std::vector<std::vector<double>> f10;      // forces every 10 steps (by atom id)
    std::vector<double> x0, q;                 // positions and charges at step 0 (by atom id)
    double qqrd2e = 0.0, cell[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    double ms_per_step = 0.0, coulomb_ms = 0.0, xi = 0.0, rc = 0.0, plan_tol = 0.0, len[3] = {0, 0, 0};
    double f_all = 0.0;  // RMS Coulomb force of all pairs at step 0, without LAMMPS's constant (farfield run)
    std::vector<int64_t> grid{0, 0, 0};
    int natoms = 0, order = 0;
};

double rms(const std::vector<double> &a) {
    double s = 0.0;
    for (double v : a) s += v * v;
    return std::sqrt(s / a.size());
}

double rms_diff(const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0.0;
    for (size_t i = 0; i < a.size(); i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return std::sqrt(s / a.size());
}

// The RMS Coulomb force at step 0 (LAMMPS's units) by farfield's single-process SPME at 1e-9,
// of all pairs, or with the pairs of the topology excluded or scaled (the force field's):
// computed on rank 0, the same value on every rank.
double rms_coulomb_force(const Run &r, const Pairs *pairs) {
    double rms = 0.0;
    if (rank == 0) {
        farfield_ewald_plan p = nullptr;
        std::vector<double> e(r.x0.size());
        if (farfield_ewald_makeplan(FARFIELD_EWALD_SPME, r.cell, r.natoms, 1e-9, &p, nullptr) != FARFIELD_OK ||
            (pairs && farfield_ewald_set_exclusions_scaled(p, static_cast<int64_t>(pairs->scale.size()), pairs->ij.data(),
                                                           pairs->scale.data()) != FARFIELD_OK) ||
            farfield_ewald_execute(p, r.natoms, r.x0.data(), r.q.data(), nullptr, e.data(), nullptr, nullptr) != FARFIELD_OK)
            fail_setup(std::string("farfield: ") + farfield_last_error_message());
        farfield_ewald_destroy(p);
        double s = 0.0;
        for (size_t k = 0; k < e.size(); k++) {
            const double f = e[k] * r.qqrd2e * r.q[k / 3];
            s += f * f;
        }
        rms = std::sqrt(s / e.size());
    }
    MPI_Bcast(&rms, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return rms;
}

enum Mode { REFERENCE, FARFIELD, PPPM, NO_CHARGES };

struct Settings {
    int steps = 100, threads = 1;
    double tol = 1e-5;
    bool scale_ff = true;
};

// A LAMMPS instance on MPI_COMM_WORLD with the system read, for `mode`.
void *open_lammps(const System &sys, Mode mode) {
    // LAMMPS's own output only with FARFIELD_LAMMPS_SCREEN set
    const char *argv[] = {"lammps_farfield", "-log", "none", "-nocite", "-screen", "none"};
    void *lmp = lammps_open(std::getenv("FARFIELD_LAMMPS_SCREEN") ? 4 : 6, const_cast<char **>(argv), MPI_COMM_WORLD, nullptr);
    char pair[160];
    std::snprintf(pair, sizeof pair, "pair_style %s %.17g\n", sys.pair_style.c_str(), mode == FARFIELD ? 1e-4 : sys.coul_cut);
    const char *kspace = mode == REFERENCE ? "kspace_style ewald 1e-8\n" : mode == PPPM ? "kspace_style pppm 1e-5\n" : "kspace_style ewald 1e-5\n";
    lammps_commands_string(lmp, (sys.setup + pair + kspace + "read_data " + sys.data + "\n" + sys.after).c_str());
    if (lammps_has_error(lmp)) {
        char msg[512];
        lammps_get_last_error_message(lmp, msg, sizeof msg);
        fail_setup(std::string("LAMMPS: ") + msg);
    }
    return lmp;
}

// farfield's distributed plan for all of the Coulomb interaction at `tol`, with the pairs of
// the topology: the parameters chosen once by the single-process plan for all atoms (the same
// on any number of ranks), then fixed in the distributed plan's options.
farfield_ewald_plan coulomb_plan(Run &r, const Pairs &pairs, double tol, int threads) {
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = threads;
    farfield_ewald_plan serial = nullptr, plan = nullptr;
    farfield_ewald_params p;
    p.struct_size = sizeof p;
    if (rank == 0) {
        if (farfield_ewald_makeplan(FARFIELD_EWALD_SPME, r.cell, r.natoms, tol, &serial, &o) != FARFIELD_OK)
            fail_setup(std::string("farfield makeplan: ") + farfield_last_error_message());
        farfield_ewald_get_params(serial, &p);
        farfield_ewald_destroy(serial);
    }
    MPI_Bcast(&p, sizeof p, MPI_BYTE, 0, MPI_COMM_WORLD);
    r.xi = p.xi, r.rc = p.rc, r.order = p.order_or_support;
    r.grid.assign(p.grid, p.grid + 3);
    o.xi = p.xi, o.rc = p.rc, o.order_or_support = p.order_or_support;
    std::copy(p.grid, p.grid + 3, o.grid);
    // every rank may hold every atom at some step: n_max = natoms
    int s = farfield_ewald_makeplan_mpi(MPI_Comm_c2f(MPI_COMM_WORLD), FARFIELD_EWALD_SPME, r.cell, r.natoms, tol, &plan, &o);
    if (s != FARFIELD_OK) fail_setup(std::string("farfield makeplan_mpi: ") + farfield_last_error_message());
    // each rank passes every nranks-th pair: the plan takes the union
    std::vector<int64_t> ij;
    std::vector<double> sc;
    for (size_t m = static_cast<size_t>(rank); m < pairs.scale.size(); m += static_cast<size_t>(nranks)) {
        ij.push_back(pairs.ij[2 * m]);
        ij.push_back(pairs.ij[2 * m + 1]);
        sc.push_back(pairs.scale[m]);
    }
    s = farfield_ewald_set_exclusions_scaled(plan, static_cast<int64_t>(sc.size()), ij.data(), sc.data());
    if (s != FARFIELD_OK) fail_setup(std::string("farfield set_exclusions_scaled: ") + farfield_last_error_message());
    return plan;
}

// Hands LAMMPS's Coulomb interaction to `k` (before the integrator and SHAKE are defined).
void install_coulomb(void *lmp, Coulomb &k) {
    lammps_command(lmp, "kspace_modify gewald 0.3 compute no");  // (coul/long needs a k-space style)
    lammps_command(lmp, "fix ext all external pf/callback 1 1");
    lammps_command(lmp, "fix_modify ext energy yes virial yes");
    lammps_set_fix_external_callback(lmp, "ext", coulomb_callback, &k);
}

std::vector<double> gather(void *lmp, const char *name, int count, int natoms) {
    std::vector<double> v(static_cast<size_t>(count) * natoms);
    lammps_gather_atoms(lmp, const_cast<char *>(name), 1, count, v.data());
    return v;
}

// LAMMPS's own RMS Coulomb force at step 0, as the checks measure it (forces with farfield's
// Coulomb forces minus forces without them, both after SHAKE, whose constraint forces take
// out the Coulomb forces along the rigid bonds), with a plan at `tol`.
double lammps_coulomb_scale(const System &sys, Run &r, const Pairs &pairs, double tol, int threads) {
    void *lmp = open_lammps(sys, FARFIELD);
    Coulomb k;
    k.lmp = lmp;
    k.plan = coulomb_plan(r, pairs, tol, threads);
    install_coulomb(lmp, k);
    lammps_commands_string(lmp, sys.fixes.c_str());
    lammps_command(lmp, "run 0");
    const std::vector<double> with = gather(lmp, "f", 3, r.natoms);
    lammps_command(lmp, "unfix ext");
    lammps_command(lmp, "run 0");
    const std::vector<double> without = gather(lmp, "f", 3, r.natoms);
    if (lammps_has_error(lmp) || k.status) fail_setup("the probe run of the force scale failed");
    const double qqrd2e = *static_cast<double *>(lammps_extract_global(lmp, "qqrd2e"));
    lammps_close(lmp);
    farfield_ewald_destroy(k.plan);
    double scale = rms_diff(with, without) / qqrd2e;
    MPI_Bcast(&scale, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);  // (the gathered forces are alike on every rank to rounding)
    return scale;
}

Run run(const System &sys, Mode mode, const Settings &set) {
    void *lmp = open_lammps(sys, mode);
    Run r;
    Coulomb k;
    k.lmp = lmp;
    int steps = set.steps;
    if (mode == NO_CHARGES) {
        lammps_command(lmp, "set group all charge 0.0");
        lammps_command(lmp, "kspace_modify gewald 0.3");  // any value: there are no charges
        steps = 0;
    }
    r.natoms = static_cast<int>(lammps_get_natoms(lmp));
    box_of(lmp, r.cell);
    r.len[0] = r.cell[0], r.len[1] = r.cell[4], r.len[2] = r.cell[8];
    r.x0 = gather(lmp, "x", 3, r.natoms);
    r.q = gather(lmp, "q", 1, r.natoms);
    r.qqrd2e = 1.0;  // LAMMPS's constant is set by its init (run 0, below); the scales need none

    if (mode == FARFIELD) {
        const Pairs pairs = special_pairs(lmp, r.natoms, sys.special_coul);
        r.f_all = rms_coulomb_force(r, nullptr);
        const double f_all = r.f_all;
        r.plan_tol = set.tol;
        if (set.scale_ff) {
            // the force field's scale: first from farfield's forces with the exclusions (no
            // constraints), then LAMMPS's own, measured with a plan made for the first
            r.plan_tol = set.tol * rms_coulomb_force(r, &pairs) / f_all;
            r.plan_tol = set.tol * lammps_coulomb_scale(sys, r, pairs, r.plan_tol, set.threads) / f_all;
        }
        k.plan = coulomb_plan(r, pairs, r.plan_tol, set.threads);
        install_coulomb(lmp, k);
    }
    lammps_commands_string(lmp, sys.fixes.c_str());
    lammps_command(lmp, "thermo_style custom step pe press");
    lammps_command(lmp, "run 0");
    r.qqrd2e = *static_cast<double *>(lammps_extract_global(lmp, "qqrd2e"));
    r.f0 = gather(lmp, "f", 3, r.natoms);
    r.f10.push_back(r.f0);
    r.pe.push_back(lammps_get_thermo(lmp, "pe"));
    r.press.push_back(lammps_get_thermo(lmp, "press"));
    for (int s = 1; s <= steps; s++) {
        lammps_command(lmp, "run 1 pre no post no");
        r.pe.push_back(lammps_get_thermo(lmp, "pe"));
        r.press.push_back(lammps_get_thermo(lmp, "press"));
        if (s % 10 == 0) r.f10.push_back(gather(lmp, "f", 3, r.natoms));
    }
    r.x_end = gather(lmp, "x", 3, r.natoms);
    if (mode == FARFIELD || mode == PPPM) {  // the time per step, of a continued run
        k.seconds = 0.0;
        k.calls = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        auto t0 = std::chrono::steady_clock::now();
        lammps_command(lmp, ("run " + std::to_string(steps) + " pre no post no").c_str());
        r.ms_per_step = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
        r.coulomb_ms = k.calls ? 1e3 * k.seconds / k.calls : 0.0;
    }
    if (lammps_has_error(lmp)) {
        char msg[512];
        lammps_get_last_error_message(lmp, msg, sizeof msg);
        fail_setup(std::string("LAMMPS: ") + msg);
    }
    int bad = k.status != 0, any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_bad) fail_setup("farfield failed during the run (the message above)");
    lammps_close(lmp);
    if (k.plan) farfield_ewald_destroy(k.plan);
    return r;
}

// largest distance between the same atom in two runs (minimum image in the orthorhombic box)
double max_deviation(const std::vector<double> &a, const std::vector<double> &b, const double len[3]) {
    double m = 0.0;
    for (size_t i = 0; i < a.size() / 3; i++) {
        double r2 = 0.0;
        for (int d = 0; d < 3; d++) {
            double v = a[3 * i + d] - b[3 * i + d];
            v -= len[d] * std::round(v / len[d]);
            r2 += v * v;
        }
        m = std::max(m, std::sqrt(r2));
    }
    return m;
}

double max_abs_diff(const std::vector<double> &a, const std::vector<double> &b) {
    double m = 0.0;
    for (size_t i = 0; i < a.size(); i++) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

// What --record keeps and --compare reads: the farfield run (pe and pressure each step, forces
// each 10 steps) and the reference's step-0 data with both force scales.
struct Record {
    int natoms = 0, steps = 0;
    double tol = 0, ref_pe0 = 0, fc_rms = 0, fa_rms = 0;
    std::vector<double> pe, press, ref_f0, ref_pe;
    std::vector<std::vector<double>> f10;
};

void write_vec(std::ofstream &o, const std::vector<double> &v) {
    char b[32];
    o << v.size();
    for (double x : v) {
        std::snprintf(b, sizeof b, " %.17g", x);
        o << b;
    }
    o << "\n";
}

bool read_vec(std::ifstream &in, std::vector<double> &v) {
    size_t n = 0;
    if (!(in >> n) || n > (size_t(1) << 30)) return false;
    v.resize(n);
    for (double &x : v)
        if (!(in >> x)) return false;
    return true;
}

void write_record(const std::string &path, const Record &r) {
    std::ofstream o(path);
    char b[160];
    std::snprintf(b, sizeof b, "farfield-lammps-record 2 %d %d %.17g %.17g %.17g %.17g %zu\n", r.natoms, r.steps, r.tol, r.ref_pe0,
                  r.fc_rms, r.fa_rms, r.f10.size());
    o << b;
    write_vec(o, r.pe);
    write_vec(o, r.press);
    write_vec(o, r.ref_f0);
    write_vec(o, r.ref_pe);
    for (const auto &f : r.f10) write_vec(o, f);
    if (!o) fail_setup("cannot write " + path);
}

Record read_record(const std::string &path) {
    std::ifstream in(path);
    Record r;
    std::string magic;
    int version = 0;
    size_t nf = 0;
    if (!(in >> magic >> version >> r.natoms >> r.steps >> r.tol >> r.ref_pe0 >> r.fc_rms >> r.fa_rms >> nf) ||
        magic != "farfield-lammps-record" || version != 2 || nf > 100000)
        fail_setup("cannot read the record " + path + " (made by --record)");
    r.f10.resize(nf);
    bool ok = read_vec(in, r.pe) && read_vec(in, r.press) && read_vec(in, r.ref_f0) && read_vec(in, r.ref_pe);
    for (auto &f : r.f10) ok = ok && read_vec(in, f);
    if (!ok) fail_setup("the record " + path + " is truncated");
    return r;
}

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    std::vector<std::string> pos;
    std::string record, compare;
    Settings set;
    bool bad_args = false;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--record" && has_value) record = argv[++i];
        else if (a == "--compare" && has_value) compare = argv[++i];
        else if (a == "--scale" && has_value) {
            const std::string v = argv[++i];
            bad_args |= v != "ff" && v != "all";
            set.scale_ff = v == "ff";
        } else if (a.rfind("--", 0) == 0) bad_args = true;
        else pos.push_back(a);
    }
    if (pos.size() < 2 || pos.size() > 5) bad_args = true;
    if (!bad_args) {
        if (pos.size() > 2) set.steps = std::atoi(pos[2].c_str());
        if (pos.size() > 3) set.tol = std::atof(pos[3].c_str());
        if (pos.size() > 4) set.threads = std::atoi(pos[4].c_str());
        bad_args = (pos[0] != "peptide" && pos[0] != "water") || set.steps < 10 || !(set.tol > 0 && set.tol < 1) ||
                   set.threads < 0;
    }
    if (bad_args) {
        if (rank == 0)
            std::fprintf(stderr,
                         "usage: [mpirun -np K] %s peptide|water <lammps examples dir> [steps=100 (>= 10)] [tol=1e-5] "
                         "[threads=1] [--scale ff|all] [--record FILE | --compare FILE]\n",
                         argv[0]);
        MPI_Finalize();
        return 2;
    }
    const System sys = make_system(pos[0], pos[1]);
    const bool comparing = !compare.empty();
    const Run ff = run(sys, FARFIELD, set);
    bool ok = true;
    if (rank == 0)
        std::printf("%s: %d atoms, %d steps of 2 fs on %d MPI rank(s), %d thread(s) each; farfield's distributed SPME for all of "
                    "the Coulomb interaction (tol %.0e on the %s scale: plan tol %.3e; xi %.6f 1/A, r_c %.3f A, grid %lld x %lld x "
                    "%lld, order %d)\n",
                    sys.name.c_str(), ff.natoms, set.steps, nranks, set.threads, set.tol, set.scale_ff ? "force-field" : "all-pairs",
                    ff.plan_tol, ff.xi, ff.rc, (long long)ff.grid[0], (long long)ff.grid[1], (long long)ff.grid[2], ff.order);
    Record rec;
    if (comparing) {
        // the recorded run of the same input (any number of ranks): energies each step, forces
        // each 10 steps to 1e-10 relative, and the recorded reference within the accuracy asked
        rec = read_record(compare);
        if (rec.natoms != ff.natoms || rec.steps != set.steps || rec.tol != set.tol || rec.f10.size() != ff.f10.size())
            fail_setup("the record " + compare + " is of another run (atoms, steps or tol differ)");
        double de = 0.0, df = 0.0;
        for (size_t s = 0; s < ff.pe.size(); s++) de = std::max(de, std::fabs(ff.pe[s] - rec.pe[s]) / std::fabs(rec.pe[s]));
        for (size_t s = 0; s < ff.f10.size(); s++) df = std::max(df, rms_diff(ff.f10[s], rec.f10[s]) / rms(rec.f10[s]));
        // the pressure (the virial: rank 0's share of the global one) relative to its largest |value|
        double pmax = 0.0;
        for (double v : rec.press) pmax = std::max(pmax, std::fabs(v));
        const double dp = max_abs_diff(ff.press, rec.press) / pmax;
        const double ef = rms_diff(ff.f0, rec.ref_f0), dpe = max_abs_diff(ff.pe, rec.ref_pe);
        const bool same = de <= 1e-10 && df <= 1e-10 && dp <= 1e-10;
        const bool accurate = ef <= set.tol * (set.scale_ff ? rec.fc_rms : rec.fa_rms) && dpe <= set.tol * std::fabs(rec.ref_pe0);
        if (rank == 0) {
            std::printf("  against the recorded run (%s): largest relative difference of the potential energy over the %d steps "
                        "%.2e, of the forces (RMS) at steps 0, 10, ... %.2e, of the pressure %.2e of its largest |value| (bounds 1e-10)\n",
                        compare.c_str(), set.steps, de, df, dp);
            std::printf("  against the recorded reference (LAMMPS ewald 1e-8): RMS dF at step 0 %.3e kcal/mol/A = %.2e F_ff = "
                        "%.2e F_all; max |dPE| %.3e kcal/mol (bound tol |PE| = %.3e)\n",
                        ef, ef / rec.fc_rms, ef / rec.fa_rms, dpe, set.tol * std::fabs(rec.ref_pe0));
            std::printf("  time per step %.3f ms (farfield's callback %.3f ms)\n", ff.ms_per_step, ff.coulomb_ms);
        }
        ok = same && accurate;
    } else {
        const Run ref = run(sys, REFERENCE, set);
        const Run pm = run(sys, PPPM, set);
        const Run q0 = run(sys, NO_CHARGES, set);
        // the scales of the force errors: the RMS Coulomb force of the reference (its forces minus
        // those of the same input without charges: special pairs excluded or scaled), and the RMS
        // Coulomb force of all pairs (no exclusions), the scale of farfield's tol
        const double fc_rms = rms_diff(ref.f0, q0.f0);
        const double fa_rms = ff.f_all * ff.qqrd2e;  // (the same step-0 state as the reference's)
        const double ef = rms_diff(ff.f0, ref.f0), ep = rms_diff(pm.f0, ref.f0);
        const double *len = ref.len;
        const double dx_ff = max_deviation(ff.x_end, ref.x_end, len), dx_pm = max_deviation(pm.x_end, ref.x_end, len);
        const double de_ff = max_abs_diff(ff.pe, ref.pe), de_pm = max_abs_diff(pm.pe, ref.pe);
        const double dp_ff = max_abs_diff(ff.press, ref.press), dp_pm = max_abs_diff(pm.press, ref.press);
        if (rank == 0) {
            std::printf("  reference: LAMMPS kspace_style ewald 1e-8; pe(0) %.6f kcal/mol; RMS Coulomb force %.4f kcal/mol/A with the\n"
                        "  special pairs excluded or scaled as the force field does (F_ff), %.4f kcal/mol/A of all pairs (F_all)\n",
                        ref.pe[0], fc_rms, fa_rms);
            std::printf("  %-17s %12s %10s %10s %12s %12s %12s %9s\n", "Coulomb", "RMS dF", "/ F_ff", "/ F_all", "max |dPE|",
                        "max |dP|", "max |dx|", "ms/step");
            std::printf("  %-17s %12.3e %10.2e %10.2e %12.3e %12.3e %12.3e %9.3f  (farfield's callback %.3f ms)\n", "farfield SPME",
                        ef, ef / fc_rms, ef / fa_rms, de_ff, dp_ff, dx_ff, ff.ms_per_step, ff.coulomb_ms);
            std::printf("  %-17s %12.3e %10.2e %10.2e %12.3e %12.3e %12.3e %9.3f\n", "LAMMPS pppm 1e-5", ep, ep / fc_rms, ep / fa_rms,
                        de_pm, dp_pm, dx_pm, pm.ms_per_step);
            std::printf("  (RMS dF at step 0 in kcal/mol/A; max |dPE| over the steps in kcal/mol; max |dP| in atm; max |dx| after "
                        "the last step in A)\n");
        }
        // Acceptance: the force error at step 0 within tol of the RMS force on the scale asked;
        // the potential energy within tol of |pe| at every step (the energy error of molecular
        // systems is below the force error, the contract of farfield_ewald_makeplan); the
        // trajectories together to 1e-2 A after the steps (a deviation from force errors of
        // order tol grows exponentially, by ~e per 100 fs in liquids: 1e-5 relative force
        // errors stay well below 1e-2 A in 200 fs).
        ok = ef <= set.tol * (set.scale_ff ? fc_rms : fa_rms) && de_ff <= set.tol * std::fabs(ref.pe[0]) && dx_ff <= 1e-2;
        if (!record.empty() && rank == 0) {
            rec.natoms = ff.natoms, rec.steps = set.steps, rec.tol = set.tol, rec.ref_pe0 = ref.pe[0];
            rec.fc_rms = fc_rms, rec.fa_rms = fa_rms;
            rec.pe = ff.pe, rec.press = ff.press, rec.ref_f0 = ref.f0, rec.ref_pe = ref.pe, rec.f10 = ff.f10;
            write_record(record, rec);
        }
    }
    if (rank == 0) std::printf("%s: %s\n", sys.name.c_str(), ok ? "farfield agrees with the reference" : "FAILED");
    int status = ok ? 0 : 1;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
