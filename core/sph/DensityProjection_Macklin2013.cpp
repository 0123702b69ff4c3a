// Position-based density correction (Macklin & Müller 2013) of a step's starting state; see the
// header for why and when. Per iteration, on the lists FluidModel built at the step's start:
//  1. rho_i = m sum_j W_ij + sum_k Psi_k W_ik and, where C_i = rho_i / rho0 - 1 > 0, the multiplier
//     lambda_i = -C_i / sum_k |grad_k C_i|^2 (eq. 11; the denominator is DFSPH's 1 / alpha_i / rho0^2);
//  2. dx_i = (1 / rho0) (sum_j m (lambda_i + lambda_j) grad W_ij + lambda_i sum_k Psi_k grad W_ik)
//     (eq. 12, the boundary term as in Akinci et al. 2012's samples: they do not move).
// The constraint is one-sided (an expanded particle is free surface, not a violation), as
// SPlisHSPlasH's PBF clamps it; the update is relaxed Jacobi (omega = 0.5, Ihmsen et al. 2014, as
// DFSPH's sweeps), since the neighbours' multipliers push the same way as a particle's own.
#include "sph/DensityProjection_Macklin2013.h"

#include "sph/FluidModel.h"
#include "sph/ParallelUtil.h"
#include "sph/SphConfig.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace octo {

namespace {
constexpr float kRelaxation = 0.5f;
} // namespace

DensityProjection_Macklin2013::Result
DensityProjection_Macklin2013::project(FluidModel& model, float tolerance, int maxIterations) {
    Result res;
    const Vec3f* X0 = model.state.positions.data();
    res.startError = res.endError = measure(model, X0, false);
    if (res.startError <= tolerance)
        return res;
    multiplier_.resize(model.state.size());
    // The iterates alternate between the prediction buffers: the attempt that follows refills them.
    const Vec3f* X = X0;
    int out = 0;
    for (;;) {
        res.endError = measure(model, X, true);
        if (res.endError <= tolerance || res.iterations >= maxIterations)
            break;
        Vec3f* Xn = model.predicted[out].data();
        res.boundReached = displace(model, X, X0, Xn);
        X = Xn;
        out ^= 1;
        ++res.iterations;
        if (res.boundReached) { // the lists must be rebuilt before it can go on (the caller's choice)
            res.endError = measure(model, X, false);
            break;
        }
    }
    if (res.iterations > 0)
        model.state.positions.swap(model.predicted[out ^ 1]);
    return res;
}

bool DensityProjection_Macklin2013::projectWithRebuilds(
    FluidModel& model, float tolerance, int maxIterations, SphStepResult& res,
    std::initializer_list<std::vector<float>*> sortedAlong) {
    for (int round = 0;; ++round) {
        const Result r = project(model, tolerance, maxIterations);
        if (round == 0)
            res.startDensityError = r.startError;
        res.projectionIterations += r.iterations;
        if (!r.boundReached || round + 1 >= kRounds)
            return res.projectionIterations > 0;
        // The shift bound kept it from the constraint: the lists are rebuilt at the shifted
        // positions (the boundary is unchanged) and it goes on from there.
        SphStepResult lists;
        model.prepareStep(lists, 0.0f, sortedAlong);
        res.msNeighbors += lists.msNeighbors;
    }
}

float DensityProjection_Macklin2013::measure(const FluidModel& model, const Vec3f* X, bool multipliers) {
    const KernelTable& K = model.table();
    const FluidModel::NeighborLists& L = model.lists;
    const float rho0 = model.config().restDensity;
    const float m = model.mass();
    const auto xb = model.boundary().sortedPositions();
    const auto psi = model.boundary().sortedPsi();
    // A particle with (almost) no neighbours gets no multiplier: nothing can decompress it.
    const float tiny = 1e-6f * model.protoDenominator();
    float* mu = multiplier_.data();
    std::atomic<float> maxErr{0.0f};
    model.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const uint32_t* fn = L.blocks[b].fluid.data();
        const uint32_t* bn = L.blocks[b].boundary.data();
        float localMax = 0.0f;
        for (uint32_t i = begin; i < end; ++i) {
            const Vec3f xi = X[i];
            const uint32_t* nb = fn + L.fluidBegin[i];
            const uint32_t* bnb = bn + L.boundaryBegin[i];
            float sum = K.W0();
            for (uint32_t q = 0, cnt = L.fluidCount[i]; q < cnt; ++q)
                sum += K.W((xi - X[nb[q]]).squaredNorm());
            float rho = m * sum;
            for (uint32_t q = 0, cnt = L.boundaryCount[i]; q < cnt; ++q)
                rho += psi[bnb[q]] * K.W((xi - xb[bnb[q]]).squaredNorm());
            const float C = rho / rho0 - 1.0f;
            localMax = std::max(localMax, C);
            if (!multipliers)
                continue;
            mu[i] = 0.0f;
            if (C <= 0.0f)
                continue;
            Vec3f grad = Vec3f::Zero();
            float gradSq = 0.0f;
            for (uint32_t q = 0, cnt = L.fluidCount[i]; q < cnt; ++q) {
                const Vec3f xij = xi - X[nb[q]];
                const Vec3f g = (m * K.gradFactor(xij.squaredNorm())) * xij;
                grad += g;
                gradSq += g.squaredNorm();
            }
            for (uint32_t q = 0, cnt = L.boundaryCount[i]; q < cnt; ++q) {
                const Vec3f xik = xi - xb[bnb[q]];
                grad += (psi[bnb[q]] * K.gradFactor(xik.squaredNorm())) * xik;
            }
            const float denominator = grad.squaredNorm() + gradSq;
            mu[i] = denominator > tiny ? -C * rho0 / denominator : 0.0f; // lambda_i / rho0
        }
        parallel::atomicMax(maxErr, localMax);
    });
    return maxErr.load();
}

bool DensityProjection_Macklin2013::displace(const FluidModel& model, const Vec3f* X, const Vec3f* X0,
                                             Vec3f* Xn) const {
    const KernelTable& K = model.table();
    const FluidModel::NeighborLists& L = model.lists;
    const float m = model.mass();
    const auto xb = model.boundary().sortedPositions();
    const auto psi = model.boundary().sortedPsi();
    const float maxShift = kMaxShift * model.spacing();
    const float* mu = multiplier_.data();
    std::atomic<bool> bounded{false};
    model.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
        const uint32_t* fn = L.blocks[b].fluid.data();
        const uint32_t* bn = L.blocks[b].boundary.data();
        bool local = false;
        for (uint32_t i = begin; i < end; ++i) {
            const Vec3f xi = X[i];
            const float mui = mu[i];
            Vec3f dx = Vec3f::Zero();
            const uint32_t* nb = fn + L.fluidBegin[i];
            for (uint32_t q = 0, cnt = L.fluidCount[i]; q < cnt; ++q) {
                const uint32_t j = nb[q];
                const float mij = mui + mu[j];
                if (mij == 0.0f)
                    continue;
                const Vec3f xij = xi - X[j];
                dx += (m * mij * K.gradFactor(xij.squaredNorm())) * xij;
            }
            if (mui != 0.0f) {
                const uint32_t* bnb = bn + L.boundaryBegin[i];
                for (uint32_t q = 0, cnt = L.boundaryCount[i]; q < cnt; ++q) {
                    const Vec3f xik = xi - xb[bnb[q]];
                    dx += (psi[bnb[q]] * mui * K.gradFactor(xik.squaredNorm())) * xik;
                }
            }
            // Bounded: within kMaxShift d0 of where the step's lists were built.
            const Vec3f shift = xi + kRelaxation * dx - X0[i];
            const float len = shift.norm();
            local = local || len > maxShift;
            Xn[i] = X0[i] + (len > maxShift ? (maxShift / len) * shift : shift);
        }
        if (local)
            bounded.store(true, std::memory_order_relaxed);
    });
    return bounded.load();
}

} // namespace octo
