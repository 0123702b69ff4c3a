// Divergence-free SPH after Bender & Koschier 2015, "Divergence-free smoothed particle
// hydrodynamics" (SCA 2015), and 2017, "Divergence-free SPH for incompressible and viscous fluids"
// (IEEE TVCG 23(3)): the pressure step of PcisphSolver when Config::pressureSolver is Dfsph.
// The neighbour lists, non-pressure forces, boundary samples, time-step bounds and statistics are
// the ones PCISPH uses; only the pressure solve differs.
//
// Per step (positions x and velocities v at time t, lists built at x):
//  1. density rho_i = m sum_j W_ij + sum_k Psi_k W_ik and the factor
//     alpha_i = 1 / (|sum_j m grad W_ij + sum_k Psi_k grad W_ik|^2 + sum_j |m grad W_ij|^2);
//  2. divergence-free solve: pressures (over rho^2) p_i make D rho_i / Dt = 0 for v;
//  3. non-pressure accelerations, v* = v + dt a;
//  4. constant-density solve: pressures make rho_i + dt D rho_i / Dt (v*) = rho0;
//  5. x += dt v*.
// Both solves are Jacobi sweeps on the velocity form of the continuity equation: the predicted
// density needs no repositioning, so the lists built once per step stay exact through every sweep.
// A sweep sets p_i <- max(0, p_i + omega s_i alpha_i / dt^k) from the source s_i (k = 1: the divergence,
// k = 2: the density error), then moves every velocity by the pressure increments,
// dv_i = -dt (sum_j m (dp_i + dp_j) grad W_ij + sum_k Psi_k dp_i grad W_ik). Accumulating p
// (clamped at 0: no tension at the free surface) lets a later sweep undo an over-correction; the
// residual a solve stops on counts compression, and expansion where a pressure still acts
// (complementarity: p > 0 only where the density is at rest). The divergence solve starts from half
// the previous step's pressures (the paper's warm start, section 4.3), the density solve from zero
// (its warm start made resting columns bounce: see kWarmStartDivergence).
// Walls and bodies push with the particle's own pressure, Akinci et al. 2012 eq. 10, as alpha
// assumes (measured against the mirrored forms: see below); a tracked body receives the opposite.
#include "sph/ParallelUtil.h"
#include "sph/PcisphSolver.h"

#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
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
// The boundary's term is Psi_k p_i / rho_i^2 grad W_ik, the particle's own pressure
// (Akinci et al. 2012 eq. 10), on walls and bodies alike. Measured against two mirrored forms
// (2 p_i, and p_i continued hydrostatically as PCISPH's bodies use, Adami 2012): on the resting
// 0.24 m tank (r = 10 mm) the mirrored forms kept the water moving at 0.16 and 0.11 m/s mean, Akinci's
// settles to 0.0066 m/s; with the mirror on bodies the sweeps diverged where a sinking box squeezed
// a particle against the floor (its boundary gradients cancel; test_buoyancy's scene non-finite at
// 0.31 s). The cost: a held, submerged box feels 87 % of Archimedes' force (PCISPH's mirror: 103 %),
// while a floating 0.5 rho0 box sits at 46.9 % submerged (PCISPH: 42.5 %); docs/SCENES.md.
//
// Warm start (the paper's section 4.3): the divergence solve starts from half the previous step's
// pressures. The density solve starts from zero. Its warm start made the pressure an integral of
// the density error over the steps, lagging a step behind the water: a resting column bounced on
// it with a growing amplitude. Measured at r = 4.5 mm (0.35 m deep, test_rest_resolutions): the
// full, half, and a Shepard-smoothed previous pressure all blew up within 0.15 s (2.6-3.9 m/s);
// eta = 0.3 % did too, eta = 0.1 % held at 21.5 sweeps per step; a cold start holds at eta = 1 %
// (max 0.094 m/s at 0.5 s) at 24.8 sweeps there, 5.3 in the dam break (2.7 warm).
constexpr float kWarmStartDivergence = 0.5f;
// The paper's minimum sweeps (Bender & Koschier 2017, algorithms 2 and 3): one for the divergence,
// two for the density (PCISPH's minIterations, Solenthaler's "at least three", is not DFSPH's).
constexpr int kDivergenceMinIterations = 1;
constexpr int kDensityMinIterations = PcisphSolver::kDfsphDensityMinIterations;
} // namespace

void PcisphSolver::computeDensityAndFactor() {
    const KernelTable& K = table_;
    const float m = mass_;
    const auto xb = boundary_.sortedPositions();
    const auto psi = boundary_.sortedPsi();
    const Vec3f* X = state_.positions.data();
    // A particle with (almost) no neighbours gets alpha = 0: no pressure can compress it.
    const float tiny = 1e-6f * protoDenominator_;
    forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        NeighborBlock& blk = blocks_[b];
        blk.gradFluid.resize(blk.fluidPairs);
        blk.gradBoundary.resize(blk.boundaryPairs);
        const uint32_t* fn = blk.fluid.data();
        const uint32_t* bn = blk.boundary.data();
        for (uint32_t i = begin; i < end; ++i) {
            const Vec3f xi = X[i];
            float sumW = K.W0();
            Vec3f grad = Vec3f::Zero();
            float gradSq = 0.0f;
            const uint32_t* nb = fn + fluidBegin_[i];
            Vec3f* gf = blk.gradFluid.data() + fluidBegin_[i];
            for (uint32_t q = 0, cnt = fluidCount_[i]; q < cnt; ++q) {
                const Vec3f xij = xi - X[nb[q]];
                const float r2 = xij.squaredNorm();
                sumW += K.W(r2);
                const Vec3f g = (m * K.gradFactor(r2)) * xij;
                gf[q] = g;
                grad += g;
                gradSq += g.squaredNorm();
            }
            float rho = m * sumW;
            const uint32_t* bnb = bn + boundaryBegin_[i];
            Vec3f* gb = blk.gradBoundary.data() + boundaryBegin_[i];
            for (uint32_t q = 0, cnt = boundaryCount_[i]; q < cnt; ++q) {
                const uint32_t k = bnb[q];
                const Vec3f xik = xi - xb[k];
                const float r2 = xik.squaredNorm();
                rho += psi[k] * K.W(r2);
                const Vec3f gk = (psi[k] * K.gradFactor(r2)) * xik;
                gb[q] = gk;
                grad += gk;
            }
            state_.densities[i] = rho;
            const float denominator = grad.squaredNorm() + gradSq;
            dfsphFactor_[i] = denominator > tiny ? 1.0f / denominator : 0.0f;
        }
    });
}

float PcisphSolver::dfsphSource(uint32_t i, const NeighborBlock& blk, float dt, bool divergence) const {
    // D rho_i / Dt = sum_j m v_ij . grad W_ij + sum_k Psi_k v_ik . grad W_ik at the current velocities.
    const Vec3f* V = predictedVelocity_.data();
    const auto vb = boundary_.sortedVelocities();
    const Vec3f vi = V[i];
    float rate = 0.0f;
    const uint32_t* nb = blk.fluid.data() + fluidBegin_[i];
    const Vec3f* gf = blk.gradFluid.data() + fluidBegin_[i];
    for (uint32_t q = 0, cnt = fluidCount_[i]; q < cnt; ++q)
        rate += (vi - V[nb[q]]).dot(gf[q]);
    const uint32_t* bnb = blk.boundary.data() + boundaryBegin_[i];
    const Vec3f* gb = blk.gradBoundary.data() + boundaryBegin_[i];
    for (uint32_t q = 0, cnt = boundaryCount_[i]; q < cnt; ++q)
        rate += (vi - vb[bnb[q]]).dot(gb[q]);
    if (divergence)
        return fluidCount_[i] + boundaryCount_[i] < kDivergenceMinNeighbours ? 0.0f : rate;
    return state_.densities[i] + dt * rate - config_.restDensity;
}

std::pair<float, float> PcisphSolver::dfsphSweep(float dt, bool divergence) {
    const float rho0 = config_.restDensity;
    std::vector<float>& stiffness = divergence ? divergenceStiffness_ : densityStiffness_;
    const float gain = kRelaxation * (divergence ? 1.0f / dt : 1.0f / (dt * dt));
    struct Sums {
        double source = 0.0;
        float max = 0.0f;
    };
    const size_t nBlocks = blocks_.size();
    const Sums total = tbb::parallel_deterministic_reduce( // fixed order: the mean decides the iterations
        tbb::blocked_range<size_t>(0, nBlocks, 1), Sums{},
        [&](const tbb::blocked_range<size_t>& r, Sums acc) {
            for (size_t b = r.begin(); b < r.end(); ++b) {
                const uint32_t begin = uint32_t(b * kBlock),
                               end = uint32_t(std::min(state_.size(), (b + 1) * kBlock));
                for (uint32_t i = begin; i < end; ++i) {
                    // Projected Jacobi on the complementarity problem p >= 0, s <= 0, p s = 0: a
                    // particle the fluid compresses gains pressure, one with pressure that separates
                    // loses it (never below 0: no tension). The residual counts both, so a warm
                    // start or a sweep that pushed too hard is undone before the solve stops.
                    const float source = dfsphSource(i, blocks_[b], dt, divergence);
                    const float p = std::max(0.0f, stiffness[i] + gain * source * dfsphFactor_[i]);
                    const float residual = stiffness[i] > 0.0f ? std::abs(source) : std::max(0.0f, source);
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
    const float n = float(std::max<size_t>(1, state_.size()));
    return {float(total.source) / n / rho0, total.max / rho0};
}

void PcisphSolver::applyPressureIncrement(float dt) {
    const float* dp = stiffnessIncrement_.data();
    Vec3f* V = predictedVelocity_.data();
    forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const NeighborBlock& blk = blocks_[b];
        const uint32_t* fn = blk.fluid.data();
        for (uint32_t i = begin; i < end; ++i) {
            const float dpi = dp[i];
            Vec3f a = Vec3f::Zero();
            const uint32_t* nb = fn + fluidBegin_[i];
            const Vec3f* gf = blk.gradFluid.data() + fluidBegin_[i];
            for (uint32_t q = 0, cnt = fluidCount_[i]; q < cnt; ++q)
                a -= (dpi + dp[nb[q]]) * gf[q];
            if (dpi != 0.0f) {
                const Vec3f* gb = blk.gradBoundary.data() + boundaryBegin_[i];
                for (uint32_t q = 0, cnt = boundaryCount_[i]; q < cnt; ++q)
                    a -= dpi * gb[q];
            }
            V[i] += dt * a;
        }
    });
}

void PcisphSolver::warmStartDivergence(float dt) {
    // Half the previous step's pressures as the first increment (Bender & Koschier 2017, section
    // 4.3), for the particles the current velocities compress; the others start from 0 (a stale
    // pressure on a particle that is already separating pushes it further apart).
    forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        for (uint32_t i = begin; i < end; ++i) {
            float& p = divergenceStiffness_[i];
            p = p > 0.0f && dfsphSource(i, blocks_[b], dt, true) > 0.0f ? kWarmStartDivergence * p : 0.0f;
            stiffnessIncrement_[i] = p;
        }
    });
    applyPressureIncrement(dt);
}

void PcisphSolver::accumulateDfsphBodyForces() {
    // F_k<-i = Psi_k (p_i^div + p_i^rho) m grad W_ik: the opposite of the boundary's push on i over
    // the step (both solves act for dt), from the gradients stored for the sweeps.
    const auto tracked = boundary_.sortedTracked();
    const float m = mass_;
    bodyForces_.reset(blocks_.size());
    forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const NeighborBlock& blk = blocks_[b];
        for (uint32_t i = begin; i < end; ++i) {
            const float p = divergenceStiffness_[i] + densityStiffness_[i];
            if (p <= 0.0f)
                continue;
            const uint32_t* bnb = blk.boundary.data() + boundaryBegin_[i];
            const Vec3f* gb = blk.gradBoundary.data() + boundaryBegin_[i];
            for (uint32_t q = 0, cnt = boundaryCount_[i]; q < cnt; ++q)
                if (tracked[bnb[q]])
                    bodyForces_.add(b, bnb[q], (m * p) * gb[q]);
        }
    });
    bodyForces_.flush(boundary_);
}

const PcisphSolver::StepResult& PcisphSolver::stepDfsph(float maxDt) {
    using parallel::Clock;
    const auto t0 = Clock::now();
    StepResult res;
    if (!prepareStep(res))
        return last_;
    const bool track = boundary_.hasForceTrackedObjects();
    const auto t2 = Clock::now();
    computeDensityAndFactor();
    const size_t n = state_.size();
    startVelocity_.assign(state_.velocities.begin(), state_.velocities.end());
    startDivergence_.assign(divergenceStiffness_.begin(), divergenceStiffness_.end());

    float dt = std::max(config_.timeStepMin, std::min(nextTimeStep(), maxDt));
    int it = 0, itDiv = 0;
    float meanErr = 0.0f, maxErr = 0.0f, maxV2 = 0.0f;
    bool finite = true;
    for (int attempt = 0;; ++attempt) {
        if (attempt > 0) {
            std::copy(startVelocity_.begin(), startVelocity_.end(), state_.velocities.begin());
            std::copy(startDivergence_.begin(), startDivergence_.end(), divergenceStiffness_.begin());
            if (track)
                boundary_.clearForces();
            if (boundaryMotion_)
                boundaryMotion_(dt);
        }
        // 2. Divergence-free velocities at t (the paper's step at the end of the previous step).
        std::copy(state_.velocities.begin(), state_.velocities.end(), predictedVelocity_.begin());
        warmStartDivergence(dt);
        itDiv = 0;
        for (;;) {
            const float meanDiv = dfsphSweep(dt, true).first;
            ++itDiv;
            if ((meanDiv <= config_.divergenceErrorTolerance && itDiv >= kDivergenceMinIterations) ||
                itDiv >= config_.maxIterations)
                break;
        }
        std::copy(predictedVelocity_.begin(), predictedVelocity_.end(), state_.velocities.begin());
        // 3. Non-pressure accelerations at the divergence-free velocities: v* = v + dt a.
        const auto t1 = Clock::now();
        computeNonPressure(dt);
        res.msNonPressure += parallel::msSince(t1);
        // 4. Constant density.
        std::fill(densityStiffness_.begin(), densityStiffness_.end(), 0.0f); // cold start (above)
        it = 0;
        for (;;) {
            std::tie(meanErr, maxErr) = dfsphSweep(dt, false);
            ++it;
            if ((maxErr <= config_.densityErrorTolerance && it >= kDensityMinIterations) ||
                it >= config_.maxIterations)
                break;
        }
        // The same guards as PCISPH: a step that would carry a particle farther than d0 or
        // produced a non-finite velocity is redone from the same state at dt / 4.
        maxV2 = tbb::parallel_reduce(
            tbb::blocked_range<size_t>(0, n, 4096), 0.0f,
            [&](const tbb::blocked_range<size_t>& r, float acc) {
                for (size_t i = r.begin(); i < r.end(); ++i) {
                    const float v2 = predictedVelocity_[i].squaredNorm();
                    acc = std::isfinite(v2) ? std::max(acc, v2) : std::numeric_limits<float>::infinity();
                }
                return acc;
            },
            [](float a, float b) { return std::max(a, b); });
        finite = std::isfinite(maxV2);
        const bool tooFar = !finite || std::sqrt(maxV2) * dt > d0_;
        if (!tooFar || dt <= config_.timeStepMin || attempt >= 8)
            break;
        ++res.restarts;
        dt = std::max(config_.timeStepMin, 0.25f * dt);
    }
    res.dt = dt;
    last_.dt = dt;
    res.iterations = it;
    res.divergenceIterations = itDiv;
    res.meanDensityError = meanErr;
    res.maxDensityError = maxErr;
    res.converged = maxErr <= config_.densityErrorTolerance;
    res.finite = finite;
    // A restart or a missed tolerance halves the next step; good steps let it grow back by 5 %.
    if (res.restarts > 0 || !res.converged)
        dtScale_ = std::max(0.02f, 0.5f * dtScale_);
    else
        dtScale_ = std::min(1.0f, 1.05f * dtScale_);
    if (res.finite) {
        if (track)
            accumulateDfsphBodyForces();
        // 5. x(t + dt) = x + dt v*; the solves' pressures, p = (p / rho^2) rho^2, for display.
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i < r.end(); ++i) {
                const float rho = state_.densities[i];
                state_.positions[i] += dt * predictedVelocity_[i];
                state_.pressures[i] = (divergenceStiffness_[i] + densityStiffness_[i]) * rho * rho;
            }
        });
        // predictedVelocity_ now holds the divergence-free v(t) the forces acted on (sourceWorkOfStep).
        state_.velocities.swap(predictedVelocity_);
        sourceWork_ = sourcesActive_ ? sourceWorkOfStep(dt) : 0.0;
        maxSpeed_ = std::sqrt(maxV2);
        maxAccel_ = maxAccelNonPressure_;
        time_ += dt;
        if (!config_.containment.empty())
            std::tie(res.contained, res.escaped) = containParticles();
    }
    res.msPressure = parallel::msSince(t2) - res.msNonPressure;
    res.msTotal = parallel::msSince(t0);
    last_ = res;
    return last_;
}

} // namespace octo
