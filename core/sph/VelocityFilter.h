#pragma once
// Bi-Laplacian velocity filter (in-house): damps particle-scale velocity noise, and resolved flow
// with it where the flow is curved at the kernel scale (docs/SCENES.md). A rate: the strength is
// given per reference step and scaled by the step actually taken.
//
//   L(v)_i = sum_j a_ij (v_j - v_i - (G_i + G_j) / 2 (x_j - x_i))      (linear-exact Laplacian)
//   G_i    = argmin_G sum_j a_ij |v_j - v_i - G (x_j - x_i)|^2         (weighted least squares)
//   v     <- v - eps dt / dt_ref L(L(v))                    (once per step, committed velocities)
//
// XSPH's smoothing operator (Monaghan 1989) is the first term alone, sum_j a_ij (v_j - v_i). It is
// zero for a linear field only where a particle's neighbourhood is symmetric: in the two layers at
// a wall (the filter sums no boundary) or under the free surface it changed a linear shear by
// 1.8 % per step (issue 26). Subtracting the first-order part with a corrected gradient makes L
// vanish for every linear field in any neighbourhood: the same construction as the diffusive term
// of delta-SPH (Antuono, Colagrossi, Marrone & Molteni 2010, "Free-surface flows solved by means of
// SPH schemes with numerical diffusive terms", Comput. Phys. Commun. 181, eq. 8: differences minus
// the mean of the two renormalised gradients along x_ij), and of the corrected second derivative of
// Fatehi & Manzari 2011 (Comput. Math. Appl. 61). The gradient is renormalised as Bonet & Lok 1999
// do (a moment matrix makes it exact for linear fields), here with the filter's own weights a_ij
// instead of grad W: then G_i minimises that particle's residual, and L is exactly -grad E of
//
//   E(v) = 1/4 sum_i min_G sum_j a_ij |v_j - v_i - G (x_j - x_i)|^2 <= 1/4 sum_ij a_ij |v_j - v_i|^2
//
// (envelope theorem: G_i held fixed when differentiating its own minimum). So -L is symmetric,
// positive semi-definite and below XSPH's -L, whose spectrum Gershgorin bounds by [0, 2c] (every
// row of a sums to at most c): for eps_step <= 1 / (2 c^2) ~ 1.02 the filter is stable and never
// raises the kinetic energy, however the particles are arranged. Uniform flows, rigid rotations and
// every other linear field are in L's null space, and -L is symmetric, so linear and angular
// momentum are conserved. Where a neighbourhood is flat (a sheet, a line) the moment matrix is
// singular: G is the minimiser over the directions it resolves (pseudo-inverse), and all of the
// above still holds.
//
// A Laplacian alone (XSPH, v <- v + eps L(v)) damps a velocity wave of length lambda at a rate
// ~ (h / lambda)^2, so the strength that quiets particle-scale noise also slows a dam break
// (measured: eps = 0.5 made a resting column quiet but moved the Martin & Moyce front RMS from 0.10
// to 0.15). Applying it twice damps ~ (h / lambda)^4: the same at the particle scale, 16x less at
// 2h and negligible at the scale of the flow (docs/BENCHMARKS.md, issue 9).
//
// Per step, a wave's energy falls by 2 eps_step mu^2 (mu its eigenvalue of -L), so a fixed eps
// damped more the shorter the steps (a swirl at 1 ms steps kept 0.8 % of its energy after 1 s, at
// the default's steps 1.4 %). eps_step = eps dt / dt_ref makes it a rate, eps / dt_ref per second:
// a resolved flow loses the same energy per second at any dt. dt_ref = 2.5 ms is the step of the
// default dam break (r = 12.6 mm, 1.5-2.4 ms in its first 0.5 s, up to the 5 ms cap at rest), so the
// default eps = 0.8 acts as before there. Steps beyond eps_step = 1.02 (dt > 3.2 ms at eps = 0.8)
// are capped at the stability bound and damp less per second.
//
// Why it is needed: fluid sampled on a simple cubic lattice is unstable under pressure in SPH. The
// symmetric pressure force at a uniform pressure p0 is the force of the pair potential
// 2 p0 m / rho^2 W(r); with the cubic spline at h = 2 d0 its stiffness has a negative eigenvalue for
// the mode k = (pi, 0, pi) / d0 polarised along y, which changes no density (PCISPH cannot hold it;
// docs/validation/lattice_stability.py). A resting column at r = 6.25 mm rearranges at its floor and
// keeps moving at 0.1 m/s; the artificial viscosity only balances it.
//
// Weights a_ij = V0 W_ij min(kappa_i, kappa_j), V0 = m / rho0, kappa_i = s_i min(1, c / sigma_i) with
// sigma_i = sum_j V0 W_ij and c = 0.7 (a particle inside the fluid at rest has sigma ~ 0.68 and keeps
// its weights). s_i ramps from 0 at rho_i = 0.7 rho0 to 1 at 0.85 rho0: spray, sheet edges and
// drops' rims are left alone, where surface tension moves particles at the particle scale. The
// layer under a flat free surface (0.86-0.88 rho0 from its one-sided kernel) is filtered: with the
// ramp at 0.9-0.98 it was not, and at r = 12 mm the particles where the surface meets a wall kept
// bobbing at 0.04-0.07 m/s for as long as a resting column was run. Five passes over the fluid
// neighbours (sigma; a_ij, moments and G(v); L(v); G(L(v)); L(L(v))), no boundary; a_ij is kept
// beside the lists (4 bytes per pair), each particle's moments and G beside the particles.
#include "common/Types.h"
#include "spatial/KernelTable.h"

#include <Eigen/Eigenvalues>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace octo {

class VelocityFilter {
public:
    /// Largest row sum of the weights; bounds -L's spectrum to [0, 2c].
    static constexpr float kRowSum = 0.7f;
    /// Largest strength of one step that keeps the filter dissipative for any particle arrangement.
    static constexpr float kMaxStrength = 1.0f / (2.0f * kRowSum * kRowSum);
    /// The step the strength eps is given for (s): the default dam break's.
    static constexpr float kReferenceStep = 2.5e-3f;
    /// Directions a neighbourhood resolves: moment eigenvalues above this fraction of the largest.
    static constexpr double kRankTolerance = 1e-3;

    /// Relative density below which a particle counts as free surface and is left alone, and from
    /// which on it is filtered fully (linear in between).
    static constexpr float kSurfaceDensity = 0.7f, kInsideDensity = 0.85f;

    /// The strength of one step of dt: eps per reference step, in proportion to dt, at most the
    /// stability bound.
    static float stepStrength(float eps, float dt) {
        return std::min(eps * std::max(dt, 0.0f) / kReferenceStep, kMaxStrength);
    }

    /// Filters `velocities` in place over a step of dt and returns the largest filtered speed (0 when
    /// off: nothing changed). neighbours(i) gives particle i's fluid neighbours (j != i, symmetric
    /// lists, pairs beyond the kernel support allowed); v0 = m / rho0; relativeDensity(i) =
    /// rho_i / rho0 with the boundary's share (walls count as fluid, the free surface does not).
    template <class Neighbours, class RelativeDensity>
    float apply(float eps, float dt, std::span<Vec3f> velocities, std::span<const Vec3f> positions, float v0,
                const KernelTable& kernel, Neighbours&& neighbours, RelativeDensity&& relativeDensity) {
        const size_t n = velocities.size();
        const float strength = stepStrength(eps, dt);
        if (!(strength > 0.0f) || n == 0)
            return 0.0f;
        kappa_.resize(n);
        smoothed_.resize(n);
        twice_.resize(n);
        gradients_.resize(n);
        firstMoments_.resize(n);
        inverseMoments_.resize(n);
        // V0 W_ij once per pair, kept beside the lists (CSR by particle), then a_ij in place.
        offsets_.resize(n + 1);
        offsets_[0] = 0;
        for (size_t i = 0; i < n; ++i)
            offsets_[i + 1] = offsets_[i] + uint32_t(neighbours(uint32_t(i)).size());
        weights_.resize(offsets_[n]);
        forRange(n, [&](size_t i) {
            float sigma = 0.0f;
            float* w = weights_.data() + offsets_[i];
            for (const uint32_t j : neighbours(uint32_t(i))) {
                *w = v0 * kernel.W((positions[i] - positions[j]).squaredNorm());
                sigma += *w++;
            }
            const float inside = std::clamp((relativeDensity(uint32_t(i)) - kSurfaceDensity) /
                                                (kInsideDensity - kSurfaceDensity),
                                            0.0f, 1.0f);
            kappa_[i] = inside * (sigma > kRowSum ? kRowSum / sigma : 1.0f);
        });
        // a_ij = min(kappa_i, kappa_j) V0 W_ij, the moments sum_j a_ij x_ji and sum_j a_ij x_ji x_ji^T,
        // and G(v) in the same pass.
        forRange(n, [&](size_t i) {
            Vec3f first = Vec3f::Zero();
            Mat3f second = Mat3f::Zero(), t = Mat3f::Zero();
            float* a = weights_.data() + offsets_[i];
            for (const uint32_t j : neighbours(uint32_t(i))) {
                *a *= std::min(kappa_[i], kappa_[j]);
                const Vec3f xji = positions[j] - positions[i], axji = *a++ * xji;
                first += axji;
                second.noalias() += axji * xji.transpose();
                t.noalias() += (velocities[j] - velocities[i]) * axji.transpose();
            }
            firstMoments_[i] = first;
            inverseMoments_[i] = pseudoInverse(second);
            gradients_[i] = t * inverseMoments_[i];
        });
        // L(v)_i = sum_j a_ij (v_j - v_i) - (G_i m_i + sum_j a_ij G_j x_ji) / 2, G from gradients_.
        auto laplacian = [&](std::span<const Vec3f> v, std::vector<Vec3f>& out) {
            forRange(n, [&](size_t i) {
                Vec3f difference = Vec3f::Zero(), neighbourGradients = Vec3f::Zero();
                const float* a = weights_.data() + offsets_[i];
                for (const uint32_t j : neighbours(uint32_t(i))) {
                    const float aij = *a++;
                    difference += aij * (v[j] - v[i]);
                    neighbourGradients.noalias() += gradients_[j] * (aij * (positions[j] - positions[i]));
                }
                out[i] = difference - 0.5f * (gradients_[i] * firstMoments_[i] + neighbourGradients);
            });
        };
        laplacian(velocities, smoothed_);
        forRange(n, [&](size_t i) { // G(L(v))
            Mat3f t = Mat3f::Zero();
            const float* a = weights_.data() + offsets_[i];
            for (const uint32_t j : neighbours(uint32_t(i)))
                t.noalias() +=
                    (smoothed_[j] - smoothed_[i]) * (*a++ * (positions[j] - positions[i])).transpose();
            gradients_[i] = t * inverseMoments_[i];
        });
        laplacian(smoothed_, twice_);
        // The filter lowers the kinetic energy, not every particle's speed: the caller's CFL bound
        // needs the new maximum, found in the same pass.
        return std::sqrt(tbb::parallel_reduce(
            tbb::blocked_range<size_t>(0, n, 1024), 0.0f,
            [&](const tbb::blocked_range<size_t>& r, float maxV2) {
                for (size_t i = r.begin(); i < r.end(); ++i) {
                    velocities[i] -= strength * twice_[i];
                    maxV2 = std::max(maxV2, velocities[i].squaredNorm());
                }
                return maxV2;
            },
            [](float a, float b) { return std::max(a, b); }));
    }

private:
    template <class F> static void forRange(size_t n, F&& f) {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1024), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i < r.end(); ++i)
                f(i);
        });
    }

    /// M^+ over the directions M resolves (eigenvalues above kRankTolerance of the largest): the
    /// plain inverse when it resolves all three (the condition bound below implies it). 0 for a
    /// particle without weighted neighbours.
    static Mat3f pseudoInverse(const Mat3f& moment) {
        const Mat3d m = moment.cast<double>();
        const double det = m.determinant(), trace = m.trace();
        if (!(trace > 0.0))
            return Mat3f::Zero();
        // lambda_min >= det / lambda_max^2 >= det / trace^2, and lambda_max <= trace.
        if (det > kRankTolerance * trace * trace * trace)
            return m.inverse().cast<float>();
        Eigen::SelfAdjointEigenSolver<Mat3d> eigen;
        eigen.computeDirect(m);
        const Vec3d lambda = eigen.eigenvalues(); // ascending
        const double cut = kRankTolerance * lambda(2);
        Vec3d inverse;
        for (int k = 0; k < 3; ++k)
            inverse(k) = lambda(k) > cut ? 1.0 / lambda(k) : 0.0;
        return (eigen.eigenvectors() * inverse.asDiagonal() * eigen.eigenvectors().transpose()).cast<float>();
    }

    std::vector<float> kappa_;
    std::vector<Vec3f> smoothed_, twice_; // L(v) and L(L(v))
    std::vector<Mat3f> gradients_;        // G_i of the field L is taken of
    std::vector<Vec3f> firstMoments_;     // sum_j a_ij x_ji
    std::vector<Mat3f> inverseMoments_;   // (sum_j a_ij x_ji x_ji^T)^+
    std::vector<uint32_t> offsets_;       // particle i's pairs: weights_[offsets_[i] .. offsets_[i + 1])
    std::vector<float> weights_;          // a_ij
};

} // namespace octo
