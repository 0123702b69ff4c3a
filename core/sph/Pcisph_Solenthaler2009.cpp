#include "sph/Pcisph_Solenthaler2009.h"

#include "sph/FluidModel.h"
#include "sph/ParallelUtil.h"
#include "sph/TimeStepController.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <tuple>

namespace octo {

namespace {

// Pressure a body's boundary sample stands for, over rho_i^2: the fluid's pressure mirrored into the
// body and continued hydrostatically to the sample, p_b = p_i + rho_i g . (x_b - x_i), clamped at
// 0; the boundary term is (p_i + p_b) / rho_i^2. Akinci 2012 eq. 10 pushes with p_i alone, half of
// what the missing fluid would: a wall-adjacent particle had to be compressed to be held, and a
// body sinking onto the floor squeezed the layer between them into a pump (313 J, 142 m/s); a fixed
// submerged box got 78 % of its buoyancy (mirrored: 103 %; docs/VALIDATION.md, "Buoyancy"). The container
// walls use the neighbourhood's pressure instead (extrapolateWallPressure): p_i alone cannot
// hold a particle at the free surface (p_i = 0) against the layer below it.
inline float boundaryPressureOverRho2(float pOverRho2, float rho, const Vec3f& gravity, const Vec3f& xik) {
    return pOverRho2 + std::max(0.0f, pOverRho2 - gravity.dot(xik) / rho);
}

using parallel::atomicMax;
using parallel::Clock;
using parallel::msSince;

} // namespace

int Pcisph_Solenthaler2009::minimumIterations() const {
    return model_.config().minIterations;
}

Pcisph_Solenthaler2009::Attempt Pcisph_Solenthaler2009::iterate(float dt, int& cur, int& it, float& err) {
    const SphConfig& config = model_.config();
    Attempt result;
    cur = 0;
    it = 0;
    float bestErr = std::numeric_limits<float>::max();
    packBoundary(dt); // dt and the boundary stay put over an attempt's iterations
    for (;;) {
        err = predictDensityAndPressure(dt, cur);
        computePressureForce(dt, cur);
        cur ^= 1;
        ++it;
        bestErr = std::min(bestErr, err);
        // The cached neighbour lists hold only while predicted particles move less than about one
        // rest spacing; a prediction that moves faster (an impact the previous step could not
        // see), a diverging correction (the error grew well above the best of this step) or a
        // large density error restarts the step from the same state with a smaller dt.
        const bool diverging =
            it >= 2 * config.minIterations && err > 2.0f * bestErr + config.densityErrorTolerance;
        if (!finiteCandidate_ || maxSpeedCandidate_ * dt > model_.spacing() || err > 0.5f || diverging) {
            result.restart = true;
            break;
        }
        const bool done = err <= config.densityErrorTolerance && it >= config.minIterations;
        if (done)
            break;
        if (it >= config.maxIterations) {
            result.missed = true;
            break;
        }
    }
    return result;
}

const SphStepResult& Pcisph_Solenthaler2009::step(float maxDt) {
    const auto t0 = Clock::now();
    SphStepResult res;
    if (!model_.prepareStep(res, timeStep_.next(), {}))
        return model_.last;
    const SphConfig& config = model_.config();
    const bool track = model_.boundary().hasForceTrackedObjects();

    const auto t2 = Clock::now();
    float dt = timeStep_.planned(maxDt);
    int cur = 0, it = 0, missedAttempts = 0;
    float err = 0.0f;
    bool startChecked = false, redoneAfterProjection = false;
    for (int attempt = 0;; ++attempt) {
        const auto t1 = Clock::now();
        // The non-pressure pass adds the friction reactions: a restarted step must not add them twice.
        if (track && attempt > 0)
            model_.boundary().clearForces();
        if (attempt > 0)
            model_.moveBoundary(dt);
        model_.computeNonPressure(dt);
        res.msNonPressure += msSince(t1);
        const Attempt a = iterate(dt, cur, it, err);
        // A compression the step started with (a squeezed or overlapped region, a body the rigid
        // solver moved into the fluid, what an unconverged step left) is not the step's own and
        // does not shrink with dt: corrected by pressure it becomes speed ~ e d0 / dt, and every
        // restart at a shorter dt made that faster (a region squeezed by 10 % reached 750 m/s at
        // dt = 10 us). When the first attempt fails its guards and the state is compressed beyond
        // eta, the compression is moved onto the constraint by positions
        // (DensityProjection_Macklin2013) and the attempt is redone at the same dt, with all its
        // guards. Only then: within the guards the pressure corrects it, and pushes the bodies
        // (projecting every start compression above eta took 276 of 1195 steps of test_buoyancy's
        // scene and the light box sank to 47.2 % submerged, below Archimedes' 50 % - 5 %).
        if ((a.restart || a.missed) && !startChecked) {
            startChecked = true;
            if (projectStartCompression(res)) {
                ++res.restarts;
                redoneAfterProjection = true;
                continue;
            }
        }
        // A step that missed eta within maxIterations is redone at dt / 2 before anything is
        // committed (at most 3 times, then the best effort is kept and reported unconverged).
        if (a.missed && !a.restart && ++missedAttempts <= 3 && !timeStep_.atMinimum(dt)) {
            ++res.restarts;
            dt = timeStep_.halved(dt);
            continue;
        }
        if (!a.restart || timeStep_.atMinimum(dt) || attempt >= 8)
            break;
        ++res.restarts;
        dt = timeStep_.quartered(dt);
    }
    res.dt = dt;
    model_.last.dt = dt;
    res.iterations = it;
    res.maxDensityError = err;
    res.converged = err <= config.densityErrorTolerance;
    res.finite = finiteCandidate_ && std::isfinite(err);
    // The redo from the projected state is no sign that dt was too long: the state was the cause.
    const int restartsForDt = res.restarts - (redoneAfterProjection ? 1 : 0);
    timeStep_.adaptToIterations(it, config.minIterations, restartsForDt > 0 || !res.converged);
    if (res.finite)
        commit(dt, cur, res);
    res.msPressure = msSince(t2) - res.msNonPressure;
    res.msTotal = msSince(t0);
    model_.last = res;
    return model_.last;
}

bool Pcisph_Solenthaler2009::projectStartCompression(SphStepResult& res) {
    const SphConfig& config = model_.config();
    return projection_.projectWithRebuilds(model_, config.densityErrorTolerance, config.maxIterations, res,
                                           {});
}

void Pcisph_Solenthaler2009::commit(float dt, int cur, SphStepResult& res) {
    if (model_.boundary().hasForceTrackedObjects())
        accumulateBoundaryPressureReaction(dt, cur ^ 1);
    // Symplectic Euler: the last prediction is the integrated state.
    FluidState& state = model_.state;
    state.positions.swap(model_.predicted[cur]);
    state.velocities.swap(model_.predictedVelocity);
    state.densities.swap(model_.predictedDensity);
    model_.bookSourceWork(dt);
    // The force bound takes the non-pressure accelerations only, with or without bodies. A bound on
    // the total (pressure included) collapsed dt after one unconverged step and each cut raised the
    // pressure further (the eruption from rest at fine radii, issue 9). Two-way coupled bodies used
    // to keep it, over the whole fluid, against the film a heavy box squeezes on the floor; since
    // a compression a step starts with is projected away (DensityProjection_Macklin2013) it no
    // longer holds anything there (docs/ALGORITHMS.md §2.1). The bodies' own bound:
    // SimulationBodies::accelerationLimit.
    const float maxAccel = model_.forces().maxAcceleration();
    model_.time += dt;
    // The velocity filter (FluidModel::filterVelocities). The speed the CFL bound and the
    // statistics see is the larger of the speeds before and after it: the fastest particle
    // either way.
    timeStep_.observe(model_.filterVelocities(dt, maxSpeedCandidate_, res), maxAccel);
    if (!model_.config().containment.empty())
        std::tie(res.contained, res.escaped) = model_.containParticles();
}

void Pcisph_Solenthaler2009::extrapolateWallPressure(float dt, int cur) {
    // Adami, Hu & Adams 2012, "A generalized wall boundary condition for SPH", eq. 27 (static
    // wall): p_k = sum_j (p_j + rho_j g . (x_k - x_j)) W_kj / sum_j W_kj, clamped at 0 like the
    // fluid's pressure. Unlike the mirrored p_i, it carries the pressure of the layer below a
    // particle at the free surface into the wall beside it: with p_i alone that particle (p_i = 0)
    // was pushed into the wall, and its pressure there drove a circulation up the walls and in
    // along the surface (a resting 0.35 m column at r = 12 mm: 0.087 m/s at 0.5 s, 0.051 with this).
    const KernelTable& K = model_.table();
    const FluidModel::NeighborLists& L = model_.lists;
    const auto xb = model_.boundary().sortedPositions();
    const auto vb = model_.boundary().sortedVelocities();
    const Vec3f* X = model_.predicted[cur].data();
    const float* p = model_.state.pressures.data();
    const float* rho = model_.predictedDensity.data();
    const Vec3f g = model_.config().gravity;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, L.wallSamples.size(), 1024),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t s = r.begin(); s < r.end(); ++s) {
                              const uint32_t k = L.wallSamples[s];
                              const Vec3f xk = xb[k] + dt * vb[k];
                              float num = 0.0f, den = 0.0f;
                              for (uint32_t q = L.wallBegin[k]; q < L.wallBegin[k + 1]; ++q) {
                                  const uint32_t j = L.wallFluid[q];
                                  const Vec3f xkj = xk - X[j];
                                  const float w = K.W(xkj.squaredNorm());
                                  num += (p[j] + rho[j] * g.dot(xkj)) * w;
                                  den += w;
                              }
                              wallPressure_[k] = den > 0.0f ? std::max(0.0f, num / den) : 0.0f;
                          }
                      });
}

void Pcisph_Solenthaler2009::packPositions(int cur) {
    const Vec3f* X = model_.predicted[cur].data();
    packed_.resize(model_.state.size());
    Float4* P = packed_.data();
    tbb::parallel_for(tbb::blocked_range<size_t>(0, packed_.size(), 4096),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i < r.end(); ++i)
                              P[i] = Float4{X[i].x(), X[i].y(), X[i].z(), 0.0f};
                      });
}

void Pcisph_Solenthaler2009::packBoundary(float dt) {
    const auto xb = model_.boundary().sortedPositions();
    const auto vb = model_.boundary().sortedVelocities();
    const auto psi = model_.boundary().sortedPsi();
    packedBoundary_.resize(xb.size());
    Float4* B = packedBoundary_.data();
    tbb::parallel_for(tbb::blocked_range<size_t>(0, xb.size(), 4096),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t k = r.begin(); k < r.end(); ++k) {
                              const Vec3f y = xb[k] + dt * vb[k]; // the boundary at its predicted place
                              B[k] = Float4{y.x(), y.y(), y.z(), psi[k]};
                          }
                      });
}

void Pcisph_Solenthaler2009::packPressures() {
    const float* pr = pressureOverRho2_.data();
    Float4* P = packed_.data();
    tbb::parallel_for(tbb::blocked_range<size_t>(0, packed_.size(), 4096),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i < r.end(); ++i)
                              P[i][3] = pr[i];
                      });
}

namespace {

/// Four neighbours' packed (x, y, z, w) as lanes of x, y, z and w, and their offsets from xi.
struct NeighborLanes {
    Float4 d[3], w;
    NeighborLanes(const Float4* packed, const uint32_t* j, const Vec3f& xi) {
        Float4 r[4] = {packed[j[0]], packed[j[1]], packed[j[2]], packed[j[3]]};
        transpose4(r[0], r[1], r[2], r[3]);
        for (int c = 0; c < 3; ++c)
            d[c] = broadcast4(xi[c]) - r[c];
        w = r[3];
    }
    Float4 squaredNorm() const { return sum3(d[0] * d[0], d[1] * d[1], d[2] * d[2]); }
};

} // namespace

float Pcisph_Solenthaler2009::predictDensityAndPressure(float dt, int cur) {
    const KernelTable& K = model_.table();
    const FluidModel::NeighborLists& L = model_.lists;
    const float rho0 = model_.config().restDensity;
    const float m = model_.mass();
    const float delta = model_.deltaUnit() / (dt * dt); // Solenthaler & Pajarola eq. 8
    const Vec3f* X = model_.predicted[cur].data();
    float* p = model_.state.pressures.data();
    // p / rho^2 per particle, so the force pass reads one float per neighbour.
    pressureOverRho2_.resize(model_.state.size());
    float* pr = pressureOverRho2_.data();
    packPositions(cur);
    const Float4* P = packed_.data();
    const Float4* B = packedBoundary_.data();
    std::atomic<float> maxErr{0.0f};
    model_.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const uint32_t* fn = L.blocks[b].fluid.data();
        const uint32_t* bn = L.blocks[b].boundary.data();
        float localMax = 0.0f;
        for (uint32_t i = begin; i < end; ++i) {
            const Vec3f xi = X[i];
            float sum = K.W0(); // the particle itself
            const uint32_t* nb = fn + L.fluidBegin[i];
            const uint32_t cnt = L.fluidCount[i];
            uint32_t q = 0;
            // Four pairs at a time (Lanes.h): each lane is the scalar loop's W, summed in list order.
            for (; q + 4 <= cnt; q += 4) {
                const Float4 w = K.W(NeighborLanes(P, nb + q, xi).squaredNorm());
                sum += w[0];
                sum += w[1];
                sum += w[2];
                sum += w[3];
            }
            for (; q < cnt; ++q)
                sum += K.W((xi - X[nb[q]]).squaredNorm());
            float rho = m * sum;
            const uint32_t* bnb = bn + L.boundaryBegin[i];
            const uint32_t bcnt = L.boundaryCount[i];
            uint32_t qb = 0;
            for (; qb + 4 <= bcnt; qb += 4) {
                const NeighborLanes smp(B, bnb + qb, xi);
                const Float4 w = smp.w * K.W(smp.squaredNorm()); // Psi_k W_ik
                rho += w[0];
                rho += w[1];
                rho += w[2];
                rho += w[3];
            }
            for (; qb < bcnt; ++qb) { // the rest one by one, from the same packed samples
                const Float4& smp = B[bnb[qb]];
                rho += smp[3] * K.W((xi - Vec3f(smp[0], smp[1], smp[2])).squaredNorm());
            }
            const float err = rho - rho0;
            p[i] = std::max(0.0f, p[i] + delta * model_.deltaScale[i] *
                                             err); // clamp: no tension at the free surface
            model_.predictedDensity[i] = rho;
            pr[i] = p[i] / (rho * rho);
            localMax = std::max(localMax, err);
        }
        atomicMax(maxErr, localMax);
    });
    return maxErr.load() / rho0;
}

void Pcisph_Solenthaler2009::computePressureForce(float dt, int cur) {
    const KernelTable& K = model_.table();
    const FluidModel::NeighborLists& L = model_.lists;
    const float m = model_.mass();
    const auto xb = model_.boundary().sortedPositions();
    const auto vb = model_.boundary().sortedVelocities();
    const auto psi = model_.boundary().sortedPsi();
    const Vec3f* X = model_.predicted[cur].data();
    Vec3f* Xn = model_.predicted[cur ^ 1].data();
    const float* pr = pressureOverRho2_.data();
    const float* rhoPred = model_.predictedDensity.data();
    const auto wall = model_.boundary().sortedWall();
    wallPressure_.resize(wall.size()); // written at the samples near fluid before it is read
    const float* pWall = wallPressure_.data();
    const bool walls = !L.wallSamples.empty();
    const Vec3f g = model_.config().gravity;
    if (walls)
        extrapolateWallPressure(dt, cur);
    packPressures();
    const Float4* P = packed_.data();
    std::atomic<float> maxV2{0.0f};
    std::atomic<bool> finite{true};
    const Vec3f* xs = model_.state.positions.data();
    const Vec3f* vs = model_.state.velocities.data();
    model_.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const uint32_t* fn = L.blocks[b].fluid.data();
        const uint32_t* bn = L.blocks[b].boundary.data();
        float lv = 0.0f;
        bool ok = true;
        const Float4 m4 = broadcast4(m);
        for (uint32_t i = begin; i < end; ++i) {
            const Vec3f xi = X[i];
            const float pri = pr[i];
            const uint32_t* nb = fn + L.fluidBegin[i];
            const uint32_t cnt = L.fluidCount[i];
            uint32_t q = 0;
            // Four pairs at a time (Lanes.h): each lane computes the scalar loop's term with its
            // operations in its order; the terms are then subtracted pair by pair in list order.
            Float4 acc = {};
            const Float4 pri4 = broadcast4(pri);
            for (; q + 4 <= cnt; q += 4) {
                const NeighborLanes nbr(P, nb + q, xi);
                const Float4 s = (m4 * (pri4 + nbr.w)) * K.gradFactor(nbr.squaredNorm());
                Float4 t[4] = {s * nbr.d[0], s * nbr.d[1], s * nbr.d[2], Float4{}};
                transpose4(t[0], t[1], t[2], t[3]);
                acc -= t[0];
                acc -= t[1];
                acc -= t[2];
                acc -= t[3];
            }
            Vec3f a(acc[0], acc[1], acc[2]);
            for (; q < cnt; ++q) {
                const uint32_t j = nb[q];
                const Vec3f xij = xi - X[j];
                a -= (m * (pri + pr[j]) * K.gradFactor(xij.squaredNorm())) * xij;
            }
            if (pri > 0.0f || walls) {
                const float invRho2 = 1.0f / (rhoPred[i] * rhoPred[i]);
                const uint32_t* bnb = bn + L.boundaryBegin[i];
                for (uint32_t q = 0, cnt = L.boundaryCount[i]; q < cnt; ++q) {
                    const uint32_t k = bnb[q];
                    if (!wall[k] && pri <= 0.0f)
                        continue;
                    const Vec3f xik = xi - (xb[k] + dt * vb[k]);
                    // Akinci 2012 eq. 10 with the wall's extrapolated pressure (see
                    // extrapolateWallPressure) or the body's mirrored one (boundaryPressureOverRho2).
                    const float pk = wall[k] ? pri + pWall[k] * invRho2
                                             : boundaryPressureOverRho2(pri, rhoPred[i], g, xik);
                    a -= (psi[k] * pk * K.gradFactor(xik.squaredNorm())) * xik;
                }
            }
            model_.accelPressure[i] = a;
            const Vec3f at = model_.accelNonPressure[i] + a;
            const Vec3f v = vs[i] + dt * at;
            model_.predictedVelocity[i] = v;
            Xn[i] = xs[i] + dt * v;
            const float v2 = v.squaredNorm(); // a non-finite acceleration makes v non-finite too
            if (!std::isfinite(v2))
                ok = false;
            lv = std::max(lv, v2);
        }
        atomicMax(maxV2, lv);
        if (!ok)
            finite.store(false, std::memory_order_relaxed);
    });
    maxSpeedCandidate_ = std::sqrt(maxV2.load());
    finiteCandidate_ = finite.load();
}

void Pcisph_Solenthaler2009::accumulateBoundaryPressureReaction(float dt, int cur) {
    const KernelTable& K = model_.table();
    const FluidModel::NeighborLists& L = model_.lists;
    const float m = model_.mass();
    const auto xb = model_.boundary().sortedPositions();
    const auto vb = model_.boundary().sortedVelocities();
    const auto psi = model_.boundary().sortedPsi();
    const auto tracked = model_.boundary().sortedTracked();
    const Vec3f* X = model_.predicted[cur].data();
    const float* pr = pressureOverRho2_.data(); // p / rho^2 of the last force pass
    const float* rhoPred = model_.predictedDensity.data();
    const Vec3f g = model_.config().gravity;
    model_.bodyForces.reset(L.blocks.size());
    model_.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const uint32_t* bn = L.blocks[b].boundary.data();
        for (uint32_t i = begin; i < end; ++i) {
            if (pr[i] <= 0.0f)
                continue;
            const uint32_t* bnb = bn + L.boundaryBegin[i];
            for (uint32_t q = 0, cnt = L.boundaryCount[i]; q < cnt; ++q) {
                const uint32_t k = bnb[q];
                if (!tracked[k])
                    continue;
                const Vec3f xik = X[i] - (xb[k] + dt * vb[k]);
                // F_k<-i = -F_i<-k = m Psi_k ((p_i + p_k) / rho_i^2) grad W_ik.
                const float pk = boundaryPressureOverRho2(pr[i], rhoPred[i], g, xik);
                model_.bodyForces.add(b, k, (m * psi[k] * pk * K.gradFactor(xik.squaredNorm())) * xik);
            }
        }
    });
    model_.bodyForces.flush(model_.boundary());
}

} // namespace octo
