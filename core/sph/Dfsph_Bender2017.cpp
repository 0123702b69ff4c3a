// Divergence-free SPH after Bender & Koschier 2015, "Divergence-free smoothed particle
// hydrodynamics" (SCA 2015), and 2017, "Divergence-free SPH for incompressible and viscous fluids"
// (IEEE TVCG 23(3)): the pressure step of SphSolver when SphConfig::pressureSolver is Dfsph.
// The neighbour lists, non-pressure forces, boundary samples, time-step bounds and statistics are
// the ones PCISPH uses (FluidModel, TimeStepController); only the pressure solve differs.
//
// Per step (positions x and velocities v at time t, lists built at x):
//  1. density rho_i = m sum_j W_ij + sum_k Psi_k W_ik and the factor
//     alpha_i = 1 / (|sum_j m grad W_ij + sum_k c Psi_k grad W_ik|^2 + sum_j |m grad W_ij|^2)
//     (c = 1, Akinci's walls; c = 2, the walls mirrored: dfsphMirrorWalls);
//  2. divergence-free solve: pressures (over rho^2) p_i make D rho_i / Dt = 0 for v;
//  3. non-pressure accelerations, v* = v + dt a;
//  4. constant-density solve: pressures make rho_i + dt D rho_i / Dt (v*) = rho0;
//  5. x += dt v*.
// Both solves are Jacobi sweeps on the velocity form of the continuity equation: the predicted
// density needs no repositioning, so the lists built once per step stay exact through every sweep.
// A sweep sets p_i <- max(0, p_i + omega s_i alpha_i / dt^k) from the source s_i (k = 1: the divergence,
// k = 2: the density error), then moves every velocity by the pressure increments,
// dv_i = -dt (sum_j m (dp_i + dp_j) grad W_ij + sum_k c Psi_k dp_i grad W_ik). Accumulating p
// (clamped at 0: no tension at the free surface) lets a later sweep undo an over-correction; the
// residual a solve stops on counts compression, and expansion where a pressure still acts
// (complementarity: p > 0 only where the density is at rest). Both solves start from half the
// previous step's pressures where the water is compressed (the paper's warm start, section 4.3, in
// SPlisHSPlasH's form: see kWarmStart), and the time step follows the density solve's sweeps.
// Walls and bodies mirror the particle beside them (dfsphMirrorWalls, the default): its pressure,
// continued hydrostatically, and its velocity, in the force, the rates and alpha alike; or push with
// the particle's own pressure (Akinci et al. 2012 eq. 10, the option); a tracked body receives the
// opposite of the force. The committed velocities pass the project's velocity filter, as PCISPH's do.
#include "sph/Dfsph_Bender2017.h"

#include "spatial/Lanes.h"
#include "sph/FluidModel.h"
#include "sph/ParallelUtil.h"
#include "sph/TimeStepController.h"

#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

namespace octo {

namespace {
// SPlisHSPlasH's divergence solve leaves particles with fewer than 20 neighbours (fluid and
// boundary, 3D) alone: in a deficient neighbourhood (the free surface, spray) a positive
// divergence is the fluid closing a gap, not a compression to correct.
constexpr uint32_t kDivergenceMinNeighbours = 20;
// Relaxed, projected Jacobi (Ihmsen et al. 2014, "Implicit incompressible SPH", omega = 0.5): alpha
// is the inverse of the diagonal alone, and the neighbours' increments push the same way, so the
// unrelaxed sweep over-corrects; measured here it oscillated with growing amplitude in the
// divergence solve of the dam break's second step (mean |D rho/Dt| 1.0 -> 313 rho0/s in 50 sweeps).
constexpr float kRelaxation = 0.5f;
// Akinci's boundary term, Psi_k p_i / rho_i^2 grad W_ik, the particle's own pressure (Akinci et al.
// 2012 eq. 10; dfsphMirrorWalls=0), on walls and bodies alike: a held, submerged box feels 85-88 % of
// Archimedes' force with it (PCISPH's mirror: 103 %) and resting columns move at 0.10-0.27 m/s at
// 0.5 s (docs/SCENES.md, "Why no preset runs DFSPH").
// The default (dfsphMirrorWalls): the boundary as the mirror image of the fluid particle beside it (ghost
// particles, Colagrossi & Landrini 2003; the pressure mirroring of Band et al. 2018, "Pressure boundaries for
// implicit incompressible SPH", ACM TOG 37(2), continued hydrostatically as Adami et al. 2012 do): sample k
// stands for fluid at the particle's pressure p_k = p_i + rho_i g . (x_k - x_i) moving with the
// particle's velocity reflected, so the pair pushes with (p_i + p_k) / rho_i^2 and closes at twice
// the normal speed. Its part in p_i comes from one term, the boundary gradient doubled,
// 2 Psi_k grad W_ik, in the force, in D rho_i / Dt and in alpha, so the solve stays symmetric
// (the force is the transpose of the rate it corrects); the hydrostatic part does not depend on
// the solve and is added to v* once, before the density solve (boundarySupport_).
// Measured on the resting 0.35 m columns, filter off, against Akinci's p_i alone (p_k = 0): that
// pushed a wall-adjacent particle into the wall under a constant pressure; the 6.25 mm Wendland
// column's lowest particle sank to 1.6 mm above the floor (PCISPH 5.85; mirrored 5.84), its level
// by 9.3 mm (PCISPH 3.4, mirrored 2.9) and the pressure beside walls and in edges stood at
// 1.6-1.9x hydrostatic (mirrored 0.94). Doubling only the force (the rate single) made the solve
// oblique: 0.65 m/s by 0.5 s there, and at eta = 0.1 % too. Without the hydrostatic part the
// columns in the vertical edges sank at 0.15 m/s; clamped at p_k >= 0 (with the previous step's
// p_i) a held box felt 1.15 rho0 g V against 1.02 unclamped (test_buoyancy).
// Without the velocity filter and at the divergence tolerance 0.4 /s, Martin & Moyce's front RMS was
// 0.123-0.124 with it (test bound 0.12) and a 6.25 mm Wendland column went unstable at eta = 0.3 % or
// dt = 1 ms; with the filter (commit) and 0.1 /s the held box feels 1.02 rho0 g V, the resting
// columns of test_rest_resolutions move at 0.027-0.050 m/s at 0.5 s (Akinci, no filter: 0.11-0.27),
// the front's RMS is 0.093 (2026-12-05). (The mirrored forms measured before, with alpha and
// D rho / Dt left as Akinci's, were the oblique ones: a resting tank kept moving at 0.11-0.16 m/s
// and the sweeps diverged under a box.)
//
// Warm start (the paper's section 4.3) in SPlisHSPlasH's form (TimeStepDFSPH.cpp, USE_WARMSTART and
// USE_WARMSTART_V): a solve starts from half the previous step's pressure, capped, and only for
// particles the solve's source compresses before any pressure acts; the others start from 0.
// Without the restriction and the cap (the whole previous field, or half of it, everywhere) a
// resting column at r = 4.5 mm bounced with a growing amplitude and blew up within 0.15 s; with
// them but at the fixed dt it still did (21 of 30 frames flagged): the step must follow the sweeps
// (below, Dfsph_Bender2017::step). docs/BENCHMARKS.md §2, "DFSPH's warm start".
// The divergence solve's pressure is an impulse (it cancels the D rho / Dt the step starts with),
// kept as p dt and rescaled to the new dt, as SPlisHSPlasH does. The density solve's is not: at
// rest it is the hydrostatic pressure, which holds the water against gravity whatever dt is, so it
// is carried over as is (the paper's kappa of the last step), not as p dt^2 (SPlisHSPlasH) divided
// by the new dt^2. Rescaled, every change of dt kicked the water: the frames are split into equal
// steps, so dt jumps by up to 25 % where a frame takes one step more or fewer (4 -> 5 at 60 fps),
// and the warm start then pushed with 1.56x half the hydrostatic pressure. Measured (mirrored
// walls, the velocity filter; the 0.6 m tank at r = 12 mm of test_rest_resolutions): the whole
// column bounced upward at 0.10-0.14 m/s in the frames where the step count changed (2.5-3x
// hydrostatic pressure at every depth), median of the max speed over 0.5-1 s 0.058 m/s, max 0.145;
// carried as is 0.048 and 0.054.
constexpr float kWarmStart = 0.5f;
// SPlisHSPlasH's caps on the stored impulses, in its units (p / rho^2 scaled by rho0: m^2 / s^2)
// times dt^2 and dt: 0.00025 m^2 for the density, 0.5 m^2 / s for the divergence.
constexpr float kWarmStartDensityCap = 0.00025f, kWarmStartDivergenceCap = 0.5f;
// The paper's minimum sweeps (Bender & Koschier 2017, algorithms 2 and 3): one for the divergence,
// two for the density (Dfsph_Bender2017::kDensityMinIterations; PCISPH's minIterations,
// Solenthaler's "at least three", is not DFSPH's).
constexpr int kDivergenceMinIterations = 1;

// The sweeps' pair terms with x, y, z in the lanes of one register (Lanes.h): a pair costs one
// load of each vector instead of three, and each lane computes the scalar code's operations in its
// order (bit for bit the same sums). The fourth lane is unused.
inline Float4 load4(const Vec3f& v) { // reads the float after v: arrays keep one Vec3f of padding
    Float4 r;
    std::memcpy(&r, v.data(), sizeof r);
    return r;
}
inline Float4 lanes(const Vec3f& v) {
    return Float4{v.x(), v.y(), v.z(), 0.0f};
}
/// (vi - vj) . g in Eigen's order for Vec3f: x + (y + z).
inline float rateTerm(Float4 vi, Float4 vj, Float4 g) {
    const Float4 d = (vi - vj) * g;
    return d[0] + (d[1] + d[2]);
}
} // namespace

void Dfsph_Bender2017::computeDensityAndFactor() {
    const KernelTable& K = model_.table();
    const float m = model_.mass();
    const auto xb = model_.boundary().sortedPositions();
    const auto psi = model_.boundary().sortedPsi();
    const Vec3f* X = model_.state.positions.data();
    const Vec3f gravity = model_.config().gravity;
    const bool mirror = model_.config().dfsphMirrorWalls;
    const float c = mirror ? 2.0f : 1.0f; // the boundary's share in p_i (see dfsphMirrorWalls above)
    boundarySupport_.resize(mirror ? model_.state.size() : 0);
    // A particle with (almost) no neighbours gets alpha = 0: no pressure can compress it.
    const float tiny = 1e-6f * model_.protoDenominator();
    const FluidModel::NeighborLists& L = model_.lists;
    gradients_.resize(L.blocks.size());
    model_.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const FluidModel::NeighborLists::Block& blk = L.blocks[b];
        BlockGradients& stored = gradients_[b];
        stored.fluid.resize(blk.fluidPairs + 1); // + 1: load4's padding
        stored.boundary.resize(blk.boundaryPairs + 1);
        const uint32_t* fn = blk.fluid.data();
        const uint32_t* bn = blk.boundary.data();
        for (uint32_t i = begin; i < end; ++i) {
            const Vec3f xi = X[i];
            float sumW = K.W0();
            Vec3f grad = Vec3f::Zero();
            float gradSq = 0.0f;
            const uint32_t* nb = fn + L.fluidBegin[i];
            Vec3f* gf = stored.fluid.data() + L.fluidBegin[i];
            for (uint32_t q = 0, cnt = L.fluidCount[i]; q < cnt; ++q) {
                const Vec3f xij = xi - X[nb[q]];
                const auto [w, gradFactor] = K.WAndGradFactor(xij.squaredNorm());
                sumW += w;
                const Vec3f g = (m * gradFactor) * xij;
                gf[q] = g;
                grad += g;
                gradSq += g.squaredNorm();
            }
            float rho = m * sumW;
            Vec3f support = Vec3f::Zero();
            const uint32_t* bnb = bn + L.boundaryBegin[i];
            Vec3f* gb = stored.boundary.data() + L.boundaryBegin[i];
            const uint32_t cntB = L.boundaryCount[i];
            for (uint32_t q = 0; q < cntB; ++q) {
                const uint32_t k = bnb[q];
                const Vec3f xik = xi - xb[k];
                const auto [w, gradFactor] = K.WAndGradFactor(xik.squaredNorm());
                rho += psi[k] * w;
                const Vec3f gk = (c * psi[k] * gradFactor) * xik;
                gb[q] = gk;
                grad += gk;
                if (mirror)
                    support += (gradFactor * psi[k] * gravity.dot(xik)) * xik;
            }
            model_.state.densities[i] = rho;
            // -sum_k Psi_k (g . (x_k - x_i) / rho_i) grad W_ik: the mirrored boundary's hydrostatic share.
            if (mirror)
                boundarySupport_[i] = (1.0f / rho) * support;
            const float denominator = grad.squaredNorm() + gradSq;
            factor_[i] = denominator > tiny ? 1.0f / denominator : 0.0f;
        }
    });
}

float Dfsph_Bender2017::source(uint32_t i, size_t b, float dt, bool divergence) const {
    // D rho_i / Dt = sum_j m v_ij . grad W_ij + sum_k Psi_k v_ik . grad W_ik at the current velocities.
    const Float4* V = velocity4_.data();
    const Float4* vb = boundaryVelocity4_.data();
    const FluidModel::NeighborLists& L = model_.lists;
    const FluidModel::NeighborLists::Block& blk = L.blocks[b];
    const Float4 vi = V[i];
    float rate = 0.0f;
    const uint32_t* nb = blk.fluid.data() + L.fluidBegin[i];
    const Vec3f* gf = gradients_[b].fluid.data() + L.fluidBegin[i];
    for (uint32_t q = 0, cnt = L.fluidCount[i]; q < cnt; ++q)
        rate += rateTerm(vi, V[nb[q]], load4(gf[q]));
    const uint32_t* bnb = blk.boundary.data() + L.boundaryBegin[i];
    const Vec3f* gb = gradients_[b].boundary.data() + L.boundaryBegin[i];
    for (uint32_t q = 0, cnt = L.boundaryCount[i]; q < cnt; ++q)
        rate += rateTerm(vi, vb[bnb[q]], load4(gb[q]));
    return sourceFromRate(i, rate, dt, divergence);
}

float Dfsph_Bender2017::sourceFromRate(uint32_t i, float rate, float dt, bool divergence) const {
    const FluidModel::NeighborLists& L = model_.lists;
    if (divergence)
        return L.fluidCount[i] + L.boundaryCount[i] < kDivergenceMinNeighbours ? 0.0f : rate;
    return model_.state.densities[i] + dt * rate - model_.config().restDensity;
}

std::pair<float, float> Dfsph_Bender2017::sourcePair(uint32_t i, size_t b, float dt, bool divergence) const {
    const Float4* V = velocity4_.data();
    const Float4* vb = boundaryVelocity4_.data();
    const FluidModel::NeighborLists& L = model_.lists;
    const FluidModel::NeighborLists::Block& blk = L.blocks[b];
    const uint32_t k = i + 1;
    const Float4 vi = V[i], vk = V[k];
    float rateI = 0.0f, rateK = 0.0f;
    // Both particles' sums side by side while both have pairs, then each one's rest, in list order.
    auto addRates = [&](const std::vector<uint32_t>& neighbours, const std::vector<uint32_t>& begin,
                        const std::vector<uint32_t>& count, const std::vector<Vec3f>& gradients,
                        const Float4* velocity) {
        const uint32_t *nbI = neighbours.data() + begin[i], *nbK = neighbours.data() + begin[k];
        const Vec3f *gI = gradients.data() + begin[i], *gK = gradients.data() + begin[k];
        const uint32_t cntI = count[i], cntK = count[k], both = std::min(cntI, cntK);
        uint32_t q = 0;
        for (; q < both; ++q) {
            rateI += rateTerm(vi, velocity[nbI[q]], load4(gI[q]));
            rateK += rateTerm(vk, velocity[nbK[q]], load4(gK[q]));
        }
        for (uint32_t r = q; r < cntI; ++r)
            rateI += rateTerm(vi, velocity[nbI[r]], load4(gI[r]));
        for (uint32_t r = q; r < cntK; ++r)
            rateK += rateTerm(vk, velocity[nbK[r]], load4(gK[r]));
    };
    addRates(blk.fluid, L.fluidBegin, L.fluidCount, gradients_[b].fluid, V);
    addRates(blk.boundary, L.boundaryBegin, L.boundaryCount, gradients_[b].boundary, vb);
    return {sourceFromRate(i, rateI, dt, divergence), sourceFromRate(k, rateK, dt, divergence)};
}

std::pair<float, float> Dfsph_Bender2017::sweep(float dt, bool divergence) {
    const float rho0 = model_.config().restDensity;
    std::vector<float>& stiffness = divergence ? divergenceStiffness_ : densityStiffness_;
    const float gain = kRelaxation * (divergence ? 1.0f / dt : 1.0f / (dt * dt));
    struct Sums {
        double source = 0.0;
        float max = 0.0f;
    };
    const size_t nBlocks = model_.lists.blocks.size();
    const Sums total = tbb::parallel_deterministic_reduce( // fixed order: the mean decides the iterations
        tbb::blocked_range<size_t>(0, nBlocks, 1), Sums{},
        [&](const tbb::blocked_range<size_t>& r, Sums acc) {
            for (size_t b = r.begin(); b < r.end(); ++b) {
                const uint32_t begin = uint32_t(b * FluidModel::kBlock),
                               end = uint32_t(std::min(model_.state.size(), (b + 1) * FluidModel::kBlock));
                float sources[2];
                for (uint32_t i = begin; i < end; ++i) {
                    // Two particles' sources at once (sourcePair): velocities change only after the
                    // sweep, so the order of the updates below is the scalar one.
                    if ((i - begin) % 2 == 0) {
                        if (i + 1 < end)
                            std::tie(sources[0], sources[1]) = sourcePair(i, b, dt, divergence);
                        else
                            sources[0] = source(i, b, dt, divergence);
                    }
                    // Projected Jacobi on the complementarity problem p >= 0, s <= 0, p s = 0: a
                    // particle the fluid compresses gains pressure, one with pressure that separates
                    // loses it (never below 0: no tension). The residual counts both, so a warm
                    // start or a sweep that pushed too hard is undone before the solve stops.
                    const float s = sources[(i - begin) % 2];
                    const float p = std::max(0.0f, stiffness[i] + gain * s * factor_[i]);
                    const float residual = stiffness[i] > 0.0f ? std::abs(s) : std::max(0.0f, s);
                    stiffnessIncrement_[i] = p - stiffness[i];
                    stiffness[i] = p;
                    acc.source += double(residual);
                    acc.max = std::max(acc.max, residual);
                }
            }
            return acc;
        },
        [](Sums a, const Sums& b) {
            a.source += b.source;
            a.max = std::max(a.max, b.max);
            return a;
        });
    applyPressureIncrement(dt);
    const float n = float(std::max<size_t>(1, model_.state.size()));
    return {float(total.source) / n / rho0, total.max / rho0};
}

namespace {
// The walls' and bodies' share of dv_i / dt: - Psi_k dp_i grad W_ik (none without an increment).
inline void applyBoundaryIncrement(Float4& a, float dpi, const Vec3f* gb, uint32_t count) {
    if (dpi != 0.0f)
        for (uint32_t q = 0; q < count; ++q)
            a -= broadcast4(dpi) * load4(gb[q]);
}
} // namespace

void Dfsph_Bender2017::applyPressureIncrement(float dt) {
    const float* dp = stiffnessIncrement_.data();
    Vec3f* V = model_.predictedVelocity.data();
    const FluidModel::NeighborLists& L = model_.lists;
    model_.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const uint32_t* fn = L.blocks[b].fluid.data();
        const BlockGradients& grad = gradients_[b];
        // Two particles side by side: each sum is a chain of dependent additions (in the scalar
        // order, for identical results), so the core overlaps two of them.
        for (uint32_t i = begin; i < end; i += 2) {
            const uint32_t k = std::min(i + 1, end - 1); // i itself again at an odd end
            const float dpi = dp[i], dpk = dp[k];
            Float4 ai = broadcast4(0.0f), ak = broadcast4(0.0f);
            const uint32_t *nbI = fn + L.fluidBegin[i], *nbK = fn + L.fluidBegin[k];
            const Vec3f *gI = grad.fluid.data() + L.fluidBegin[i], *gK = grad.fluid.data() + L.fluidBegin[k];
            const uint32_t cntI = L.fluidCount[i], cntK = L.fluidCount[k];
            uint32_t q = 0;
            for (const uint32_t both = std::min(cntI, cntK); q < both; ++q) {
                ai -= broadcast4(dpi + dp[nbI[q]]) * load4(gI[q]);
                ak -= broadcast4(dpk + dp[nbK[q]]) * load4(gK[q]);
            }
            for (uint32_t r = q; r < cntI; ++r)
                ai -= broadcast4(dpi + dp[nbI[r]]) * load4(gI[r]);
            for (uint32_t r = q; r < cntK; ++r)
                ak -= broadcast4(dpk + dp[nbK[r]]) * load4(gK[r]);
            applyBoundaryIncrement(ai, dpi, grad.boundary.data() + L.boundaryBegin[i], L.boundaryCount[i]);
            V[i] += dt * Vec3f(ai[0], ai[1], ai[2]);
            velocity4_[i] = lanes(V[i]);
            if (k != i) {
                applyBoundaryIncrement(ak, dpk, grad.boundary.data() + L.boundaryBegin[k],
                                       L.boundaryCount[k]);
                V[k] += dt * Vec3f(ak[0], ak[1], ak[2]);
                velocity4_[k] = lanes(V[k]);
            }
        }
    });
}

void Dfsph_Bender2017::keepVelocityLanes() {
    const std::vector<Vec3f>& V = model_.predictedVelocity;
    const auto vb = model_.boundary().sortedVelocities();
    velocity4_.resize(V.size());
    boundaryVelocity4_.resize(vb.size());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, std::max(V.size(), vb.size()), 4096),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i < r.end(); ++i) {
                              if (i < V.size())
                                  velocity4_[i] = lanes(V[i]);
                              if (i < vb.size())
                                  boundaryVelocity4_[i] = lanes(vb[i]);
                          }
                      });
}

void Dfsph_Bender2017::warmStart(float dt, bool divergence) {
    keepVelocityLanes();
    // Half the previous step's pressure (the divergence solve's as an impulse, rescaled to this dt)
    // and capped (kWarmStart), where the source compresses the particle before any pressure acts (D rho / Dt
    // > 0 in a full neighbourhood, or a predicted density above rho0); 0 elsewhere: a stale pressure on a
    // particle that is already separating pushes it further apart.
    std::vector<float>& stiffness = divergence ? divergenceStiffness_ : densityStiffness_;
    const float rho0 = model_.config().restDensity;
    const float ratio = solvedDt_ > 0.0f ? solvedDt_ / dt : 0.0f;
    const float scale = divergence ? kWarmStart * ratio : (solvedDt_ > 0.0f ? kWarmStart : 0.0f);
    const float cap = solvedDt_ > 0.0f ? (divergence ? kWarmStartDivergenceCap / (rho0 * solvedDt_)
                                                     : kWarmStartDensityCap / (rho0 * solvedDt_ * solvedDt_))
                                       : 0.0f;
    model_.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        for (uint32_t i = begin; i < end; ++i) {
            float& p = stiffness[i];
            p = p > 0.0f && source(i, b, dt, divergence) > 0.0f ? scale * std::min(p, cap) : 0.0f;
            stiffnessIncrement_[i] = p;
        }
    });
    applyPressureIncrement(dt);
}

void Dfsph_Bender2017::accumulateBodyForces() {
    // F_k<-i = m Psi_k (p_i / rho_i^2) grad W_ik over both solves (Akinci), or with (p_i + p_k) / rho_i^2
    // (mirrored walls, the stored gradient doubled): the opposite of the boundary's push on i over the
    // step, from the gradients stored for the sweeps.
    const bool mirror = model_.config().dfsphMirrorWalls;
    const auto tracked = model_.boundary().sortedTracked();
    const auto xb = model_.boundary().sortedPositions();
    const Vec3f g = model_.config().gravity;
    const Vec3f* X = model_.state.positions.data();
    const float m = model_.mass();
    const FluidModel::NeighborLists& L = model_.lists;
    model_.bodyForces.reset(L.blocks.size());
    model_.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const FluidModel::NeighborLists::Block& blk = L.blocks[b];
        for (uint32_t i = begin; i < end; ++i) {
            const float p = divergenceStiffness_[i] + densityStiffness_[i];
            if (!mirror && p <= 0.0f)
                continue;
            const float hydrostatic = mirror ? 1.0f / (2.0f * model_.state.densities[i]) : 0.0f;
            const uint32_t* bnb = blk.boundary.data() + L.boundaryBegin[i];
            const Vec3f* gb = gradients_[b].boundary.data() + L.boundaryBegin[i];
            for (uint32_t q = 0, cnt = L.boundaryCount[i]; q < cnt; ++q) {
                const uint32_t k = bnb[q];
                if (tracked[k])
                    model_.bodyForces.add(b, k,
                                          mirror ? (m * (p + hydrostatic * g.dot(xb[k] - X[i]))) * gb[q]
                                                 : (m * p) * gb[q]);
            }
        }
    });
    model_.bodyForces.flush(model_.boundary());
}

void Dfsph_Bender2017::resize(size_t n) {
    factor_.resize(n);
    stiffnessIncrement_.resize(n);
    divergenceStiffness_.assign(n, 0.0f);
    densityStiffness_.assign(n, 0.0f);
}

void Dfsph_Bender2017::clearWarmStart() {
    std::fill(divergenceStiffness_.begin(), divergenceStiffness_.end(), 0.0f);
    std::fill(densityStiffness_.begin(), densityStiffness_.end(), 0.0f);
    solvedDt_ = 0.0f;
}

float Dfsph_Bender2017::attempt(float dt, SphStepResult& res, int& it, int& itDiv, float& meanErr,
                                float& maxErr) {
    const SphConfig& config = model_.config();
    FluidState& state = model_.state;
    std::vector<Vec3f>& predictedVelocity = model_.predictedVelocity;
    // 2. Divergence-free velocities at t (the paper's step at the end of the previous step).
    std::copy(state.velocities.begin(), state.velocities.end(), predictedVelocity.begin());
    warmStart(dt, true);
    itDiv = 0;
    for (;;) {
        const float meanDiv = sweep(dt, true).first;
        ++itDiv;
        if ((meanDiv <= config.divergenceErrorTolerance && itDiv >= kDivergenceMinIterations) ||
            itDiv >= config.maxIterations)
            break;
    }
    std::copy(predictedVelocity.begin(), predictedVelocity.end(), state.velocities.begin());
    // 3. Non-pressure accelerations at the divergence-free velocities: v* = v + dt a.
    const auto t1 = parallel::Clock::now();
    model_.computeNonPressure(dt);
    res.msNonPressure += parallel::msSince(t1);
    // 4. Constant density, from v* (with the mirrored boundary's hydrostatic share).
    if (config.dfsphMirrorWalls)
        tbb::parallel_for(tbb::blocked_range<size_t>(0, state.size(), 4096),
                          [&](const tbb::blocked_range<size_t>& r) {
                              for (size_t i = r.begin(); i < r.end(); ++i)
                                  predictedVelocity[i] += dt * boundarySupport_[i];
                          });
    warmStart(dt, false);
    it = 0;
    for (;;) {
        std::tie(meanErr, maxErr) = sweep(dt, false);
        ++it;
        if ((maxErr <= config.densityErrorTolerance && it >= kDensityMinIterations) ||
            it >= config.maxIterations)
            break;
    }
    return tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, state.size(), 4096), 0.0f,
        [&](const tbb::blocked_range<size_t>& r, float acc) {
            for (size_t i = r.begin(); i < r.end(); ++i) {
                const float v2 = predictedVelocity[i].squaredNorm();
                acc = std::isfinite(v2) ? std::max(acc, v2) : std::numeric_limits<float>::infinity();
            }
            return acc;
        },
        [](float a, float b) { return std::max(a, b); });
}

const SphStepResult& Dfsph_Bender2017::step(float maxDt) {
    using parallel::Clock;
    const auto t0 = Clock::now();
    SphStepResult res;
    if (!model_.prepareStep(res, timeStep_.next(),
                            {&divergenceStiffness_, &densityStiffness_})) // warm starts follow the sort
        return model_.last;
    const SphConfig& config = model_.config();
    const bool track = model_.boundary().hasForceTrackedObjects();
    const auto t2 = Clock::now();
    computeDensityAndFactor();
    keepStart();

    float dt = timeStep_.planned(maxDt);
    int it = 0, itDiv = 0;
    float meanErr = 0.0f, maxErr = 0.0f, maxV2 = 0.0f;
    bool finite = true, startChecked = false, redoneAfterProjection = false;
    for (int attemptNo = 0;; ++attemptNo) {
        if (attemptNo > 0) {
            restoreStart();
            if (track)
                model_.boundary().clearForces();
            model_.moveBoundary(dt);
        }
        maxV2 = attempt(dt, res, it, itDiv, meanErr, maxErr);
        // The same guards as PCISPH: a step that would carry a particle farther than d0 or
        // produced a non-finite velocity is redone from the same state at dt / 4.
        finite = std::isfinite(maxV2);
        const bool tooFar = !finite || std::sqrt(maxV2) * dt > model_.spacing();
        // A compression the step started with is not the step's own and does not shrink with dt:
        // the density solve corrects it through velocity, ~ e d0 / dt (a cube of a resting column
        // squeezed by +95 % missed eta in every step after and reached 3 000 m/s at dt = 10 us).
        // As in PCISPH: when the first attempt fails a guard (too far, non-finite, or eta missed
        // within maxIterations) and the state is compressed beyond eta, the compression is moved
        // onto the constraint by positions (DensityProjection_Macklin2013) and the attempt is
        // redone at the same dt with every guard. Not before every step: DFSPH meets eta on the
        // prediction rho + dt D rho / Dt, so a committed state is often a little above eta
        // (projecting those fired in 305 of 646 dam-break steps).
        const bool missed = maxErr > config.densityErrorTolerance;
        if ((tooFar || missed) && !startChecked) {
            startChecked = true;
            if (projectStartCompression(res)) {
                ++res.restarts;
                redoneAfterProjection = true;
                continue;
            }
        }
        if (!tooFar || timeStep_.atMinimum(dt) || attemptNo >= 8)
            break;
        ++res.restarts;
        dt = timeStep_.quartered(dt);
    }
    res.dt = dt;
    model_.last.dt = dt;
    res.iterations = it;
    res.divergenceIterations = itDiv;
    res.meanDensityError = meanErr;
    res.maxDensityError = maxErr;
    res.converged = maxErr <= config.densityErrorTolerance;
    res.finite = finite;
    // The step follows the density solve's sweeps (Ihmsen et al. 2010, the rule PCISPH uses): more
    // than kDensityMinIterations + 4 shrink it by 5 %, at most + 2 let it grow by 5 %, a restart or
    // a missed tolerance halves it. Warm-started, the pressure carried from step to step must not
    // outrun a partly converged solve (a deep column's slowest mode gains a few % per sweep): at
    // the largest dt the fine column bounced (above). The cost: more, cheaper steps.
    // The redo from the projected state is no sign that dt was too long: the state was the cause.
    const int restartsForDt = res.restarts - (redoneAfterProjection ? 1 : 0);
    timeStep_.adaptToIterations(it, kDensityMinIterations, restartsForDt > 0 || !res.converged);
    if (res.finite) {
        solvedDt_ = dt;
        commit(dt, maxV2, res);
    }
    res.msPressure = parallel::msSince(t2) - res.msNonPressure;
    res.msTotal = parallel::msSince(t0);
    model_.last = res;
    return model_.last;
}

void Dfsph_Bender2017::keepStart() {
    const FluidState& state = model_.state;
    startVelocity_.assign(state.velocities.begin(), state.velocities.end());
    startDivergence_.assign(divergenceStiffness_.begin(), divergenceStiffness_.end());
    startDensity_.assign(densityStiffness_.begin(), densityStiffness_.end());
}

void Dfsph_Bender2017::restoreStart() {
    std::copy(startVelocity_.begin(), startVelocity_.end(), model_.state.velocities.begin());
    std::copy(startDivergence_.begin(), startDivergence_.end(), divergenceStiffness_.begin());
    std::copy(startDensity_.begin(), startDensity_.end(), densityStiffness_.begin());
}

bool Dfsph_Bender2017::projectStartCompression(SphStepResult& res) {
    const SphConfig& config = model_.config();
    // The state's own compression, from the densities at the step's start: within eta, nothing to
    // do and the failed attempt's velocities stay for the guards that follow.
    const std::vector<float>& rho = model_.state.densities;
    res.startDensityError = *std::max_element(rho.begin(), rho.end()) / config.restDensity - 1.0f;
    if (res.startDensityError <= config.densityErrorTolerance)
        return false;
    // The attempt replaced the velocities and warm starts: a rebuild sorts the start's along.
    restoreStart();
    const float startError = res.startDensityError;
    projection_.projectWithRebuilds(model_, config.densityErrorTolerance, config.maxIterations, res,
                                    {&divergenceStiffness_, &densityStiffness_});
    res.startDensityError = startError; // measured above, before the restore
    computeDensityAndFactor();          // the attempt is redone from here
    keepStart();
    return true;
}

void Dfsph_Bender2017::commit(float dt, float maxV2, SphStepResult& res) {
    if (model_.boundary().hasForceTrackedObjects())
        accumulateBodyForces();
    // 5. x(t + dt) = x + dt v*; the solves' pressures, p = (p / rho^2) rho^2, for display.
    FluidState& state = model_.state;
    const std::vector<Vec3f>& predictedVelocity = model_.predictedVelocity;
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, state.size(), 4096), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i < r.end(); ++i) {
                const float rho = state.densities[i];
                state.positions[i] += dt * predictedVelocity[i];
                state.pressures[i] = (divergenceStiffness_[i] + densityStiffness_[i]) * rho * rho;
            }
        });
    // predictedVelocity now holds the divergence-free v(t) the forces acted on (bookSourceWork).
    state.velocities.swap(model_.predictedVelocity);
    model_.bookSourceWork(dt);
    model_.time += dt;
    // The velocity filter, as PCISPH applies it (FluidModel::filterVelocities; the project's
    // parameter, 0 = off). The resting columns rely on its drag at the walls and under the free
    // surface with either solver: with DFSPH they moved at 0.10-0.19 m/s at 0.5 s without it
    // (mirrored walls), 0.027-0.050 with it (docs/SCENES.md, "Rest without the filter"). The speed
    // the CFL bound sees is the larger of the speeds before and after it, as in PCISPH.
    timeStep_.observe(model_.filterVelocities(dt, std::sqrt(maxV2), res), model_.forces().maxAcceleration());
    if (!model_.config().containment.empty())
        std::tie(res.contained, res.escaped) = model_.containParticles();
}

} // namespace octo
