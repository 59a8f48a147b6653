// Downstream C++ program: the Madelung constant of rock salt through the installed library's
// Ewald API (SPME), checked against its known value; std::vector and std::complex only, no C.
// Built against the install prefix by a C++-only CMake project (consumer/cxx).
// SPDX-License-Identifier: MIT OR Apache-2.0
#include <farfield.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    const double madelung = 1.747564594633;  // NaCl, per ion pair, nearest-neighbour distance 1
    // conventional cubic cell of side 2: Na+ on the fcc sites, Cl- shifted by half a side along x
    const double fcc[4][3] = {{0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}};
    std::vector<double> xyz, q;
    for (const auto &s : fcc) {
        xyz.insert(xyz.end(), {s[0], s[1], s[2]});
        q.push_back(+1);
        xyz.insert(xyz.end(), {std::fmod(s[0] + 1, 2.0), s[1], s[2]});
        q.push_back(-1);
    }
    const double box[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
    const int64_t n = static_cast<int64_t>(q.size());

    farfield_ewald_opts opts;
    int ier = farfield_ewald_default_opts(&opts, sizeof opts);
    opts.nthreads = 1;
    farfield_ewald_plan plan = nullptr;
    if (!ier) ier = farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, n, 1e-10, &plan, &opts);
    double energy = 0;
    std::vector<double> phi(n), field(3 * n);
    if (!ier) ier = farfield_ewald_execute(plan, n, xyz.data(), q.data(), phi.data(), field.data(), &energy, nullptr);
    farfield_ewald_destroy(plan);
    if (ier) {
        std::fprintf(stderr, "farfield error %d: %s (%s)\n", ier, farfield_status_string(ier),
                     farfield_last_error_message());
        return 1;
    }
    // 4 ion pairs in the cell: U = -4 M / r0
    const double m = -energy / 4;
    const double err = std::fabs(m - madelung) / madelung;
    double max_field = 0;
    for (double e : field) max_field = std::fmax(max_field, std::fabs(e));
    std::printf("consumer (C++, farfield %s): Madelung %.12f, rel err %.2e, max |E| %.1e\n", farfield_version(), m,
                err, max_field);
    return err <= 1e-8 && max_field <= 1e-6 ? 0 : 1;
}
