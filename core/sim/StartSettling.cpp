#include "sim/StartSettling.h"

#include "sph/SphSolver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>

namespace octo {

namespace {
// Damping time of the settling's velocities, v <- v exp(-dt / tau): shorter than the column's
// gravity waves, long enough that the particles still find their places (0.05 s left the
// 8.5 mm column moving faster afterwards, 0.098 against 0.073 m/s at 0.5 s).
constexpr float kDampingTime = 0.1f;
// Gravity is ramped in over this share of the settling (Adami et al. 2012, section 4.1).
constexpr float kRampShare = 0.5f;

/// Puts x back into its block's box, open against gravity g; the outward velocity goes.
void confine(Vec3f& x, Vec3f& v, const Aabb& b, const Vec3f& g) {
    for (int a = 0; a < 3; ++a) {
        if (x[a] < b.min[a] && !(g[a] > 0.0f)) {
            x[a] = b.min[a];
            v[a] = std::max(v[a], 0.0f);
        } else if (x[a] > b.max[a] && !(g[a] < 0.0f)) {
            x[a] = b.max[a];
            v[a] = std::min(v[a], 0.0f);
        }
    }
}
} // namespace

SettleReport settleStart(SphSolver& solver, const std::vector<Aabb>& box, float seconds) {
    SettleReport report;
    const auto t0 = std::chrono::steady_clock::now();
    const size_t n = solver.particleCount();
    if (!(seconds > 0.0f) || n == 0 || box.size() != n)
        return report;
    for (const Aabb& b : box)
        report.settled += b.empty() ? 0 : 1;
    if (report.settled == 0)
        return report;
    // By id (setParticles numbered the particles in the order given; the steps sort them).
    const std::vector<Vec3f> start(solver.state().positions);
    const SphSolver::Config config = solver.config();
    const Vec3f g = config.gravity;
    const float ramp = kRampShare * seconds;
    while (solver.time() < seconds) {
        // Adami et al. 2012: g(t) = g (sin(pi (t / t_ramp - 1/2)) + 1) / 2 for t < t_ramp.
        const float t = float(solver.time());
        SphSolver::Config c = config;
        if (t < ramp)
            c.gravity = g * (0.5f * (std::sin(std::numbers::pi_v<float> * (t / ramp - 0.5f)) + 1.0f));
        solver.setConfig(c);
        const float keep = std::exp(-solver.step().dt / kDampingTime);
        ++report.steps;
        FluidState& st = solver.state();
        for (size_t i = 0; i < st.size(); ++i) {
            const Aabb& b = box[st.ids[i]];
            if (b.empty()) { // held where the scene put it
                st.positions[i] = start[st.ids[i]];
                st.velocities[i] = Vec3f::Zero();
                continue;
            }
            confine(st.positions[i], st.velocities[i], b, g);
            st.velocities[i] *= keep;
        }
    }
    solver.setConfig(config);
    for (Vec3f& v : solver.state().velocities) {
        report.finalMaxSpeed = std::max(report.finalMaxSpeed, v.norm());
        v = Vec3f::Zero();
    }
    solver.restartClock(); // the time step and the solvers' warm starts carry on
    report.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return report;
}

} // namespace octo
