#pragma once
// Bi-Laplacian velocity filter (in-house): damps particle-scale velocity noise, and resolved flow
// with it where the flow is curved at the kernel scale (docs/SCENES.md). Two options, both off by
// default (what each changes is measured below and in docs/SCENES.md):
//
//   v <- v - eps L(L(v))                                      (once per step, committed velocities)
//   v <- v - eps dt / dt_ref L(L(v))                          (a rate: setRate)
//   L(v)_i = sum_j a_ij (v_j - v_i)                           (XSPH's operator, Monaghan 1989)
//   L(v)_i = sum_j a_ij (v_j - v_i - (G_i + G_j) / 2 (x_j - x_i))     (linear-exact: setLinearExact)
//   G_i    = argmin_G sum_j a_ij |v_j - v_i - G (x_j - x_i)|^2         (weighted least squares)
//
// XSPH's operator is zero for a linear field only where a particle's neighbourhood is symmetric: in
// the two layers at a wall (the filter sums no boundary) or under the free surface it changes a
// linear shear by 1.8 % per step (issue 26; 0.9 % of the shear's change across h in
// test_velocity_filter's slab), a drag on the boundary layers. The linear-exact operator subtracts
// the first-order part with a corrected gradient, so L vanishes for every linear field in any
// neighbourhood that resolves all three directions (a nearly flat one, with an eigenvalue of its
// moment matrix below kRankTolerance of the largest, keeps only the resolved ones): the construction of the
// diffusive term of delta-SPH (Antuono, Colagrossi, Marrone & Molteni 2010, "Free-surface flows solved by
// means of SPH schemes with numerical diffusive terms", Comput. Phys. Commun. 181: differences minus the mean
// of the two renormalised gradients along x_ij) and of the corrected second derivative of Fatehi & Manzari
// 2011 (Comput. Math. Appl. 61). The gradient is renormalised as Bonet & Lok 1999 do (a moment matrix makes
// it exact for linear fields), here with the filter's own weights a_ij instead of grad W: then G_i minimises
// that particle's residual, and L is exactly -grad E of
//
//   E(v) = 1/4 sum_i min_G sum_j a_ij |v_j - v_i - G (x_j - x_i)|^2 <= 1/4 sum_ij a_ij |v_j - v_i|^2
//
// (envelope theorem: G_i held fixed when differentiating its own minimum). So -L is symmetric,
// positive semi-definite and below XSPH's -L, whose spectrum Gershgorin bounds by [0, 2c] (every
// row of a sums to at most c): for both operators eps_step <= 1 / (2 c^2) ~ 1.02 keeps the filter
// stable and never raises the kinetic energy, however the particles are arranged. Every linear
// field (uniform flow, rigid rotation, shear) is in the linear-exact L's null space, so it also
// conserves angular momentum; where a neighbourhood is flat (a sheet, a line) the moment matrix is
// singular and G minimises over the directions it resolves (pseudo-inverse), all of the above
// still holding. Why it is not the default: with it (and the rate) the resting columns of
// test_rest_resolutions move at 0.049-0.103 m/s at 0.5 s instead of 0.028-0.045 (r = 12 mm: 0.097,
// per step without the rate 0.097 too; the filter off: 0.126) and Martin & Moyce's front RMS is
// 0.127 (0.097; 0.132 without the filter): what quiets the rest and slows the surge is XSPH's drag
// on the layers at walls and under the free surface (docs/SCENES.md, "Rest without the filter").
// It costs 3.6x XSPH's filter (five passes with 3x3 moments instead of three).
//
// Per step, a wave's energy falls by about 2 eps_step mu^2 (mu its eigenvalue of -L), so a fixed
// eps per step damps more the shorter the steps (a resolved shear wave loses 1.75x more of its
// energy in 0.06 s at 1 ms steps than at 3 ms). eps_step = eps dt / dt_ref makes it a rate,
// eps / dt_ref per second: a resolved flow (eps_step mu^2 << 1) loses the same energy per second
// at any dt (the wave: 42.9 % and 43.1 %). dt_ref = 2.5 ms is the step of the default dam break
// (r = 8.5 mm, 30 k particles: median 2.4 ms over its first 3 s, 1.5-2.8 ms for 80 % of it), so
// eps = 0.8 acts as per step there. Longer steps are capped at the stability bound (eps_step = 1.02
// from dt = 3.2 ms at eps = 0.8). Why the rate is not the default: finer resolutions take shorter
// steps (r = 12 / 6.25 mm: 2.9 / 1.7 ms in a resting column) while the start
// lattice's rearrangement grows faster, so the resting columns at 4.5 and 4.25 mm move at 0.080
// and 0.067 m/s at 0.5 s (per step: 0.031, 0.028; bound 0.05); and the cylinder wake (1 ms steps)
// keeps more particle-scale rotation without confinement (enstrophy 11.3 instead of 8.1), so
// confinement's gain drops to 1.07x (test_vorticity: >= 1.4x).
//
// A Laplacian alone (XSPH, v <- v + eps L(v)) damps a velocity wave of length lambda at a rate
// ~ (h / lambda)^2, so the strength that quiets particle-scale noise also slows a dam break
// (measured: eps = 0.5 made a resting column quiet but moved the Martin & Moyce front RMS from 0.10
// to 0.15). Applying it twice damps ~ (h / lambda)^4: the same at the particle scale, 16x less at
// 2h and negligible at the scale of the flow (docs/BENCHMARKS.md, issue 9).
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
// bobbing at 0.04-0.07 m/s for as long as a resting column was run. XSPH's filter: three passes over
// the fluid neighbours (sigma; L(v); L(L(v))), no boundary, a_ij kept beside the lists (4 bytes per
// pair); linear-exact: five (sigma; a_ij, moments and G(v); L(v); G(L(v)); L(L(v))), each
// particle's moments and G kept beside the particles.
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

    /// The strength of one step of dt, at most the stability bound: eps per step by default; as a
    /// rate (setRate), eps per reference step, in proportion to dt.
    float stepStrength(float eps, float dt) const {
        return std::min(rate_ ? eps * std::max(dt, 0.0f) / kReferenceStep : eps, kMaxStrength);
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
        if (linearExact_)
            linearExactBiLaplacian(velocities, positions, neighbours);
        else
            xsphBiLaplacian(velocities, neighbours);
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

    /// The strength as a rate, eps per kReferenceStep of flow, instead of per step. Off by default:
    /// the finer resting columns and the cylinder wake's confinement test rely on the damping per
    /// step (docs/SCENES.md, "Rest without the filter").
    void setRate(bool on) { rate_ = on; }
    /// L with the first-order correction (linear-exact) instead of XSPH's operator. Off by default:
    /// the resting columns and Martin & Moyce's front rely on what XSPH's operator does at walls and
    /// under the free surface (docs/SCENES.md).
    void setLinearExact(bool on) { linearExact_ = on; }

private:
    // XSPH's L twice (three passes with the weights'): a_ij = min(kappa_i, kappa_j) V0 W_ij is
    // stored in place by the first.
    template <class Neighbours> void xsphBiLaplacian(std::span<const Vec3f> v, Neighbours& neighbours) {
        const size_t n = v.size();
        forRange(n, [&](size_t i) {
            Vec3f sum = Vec3f::Zero();
            float* a = weights_.data() + offsets_[i];
            for (const uint32_t j : neighbours(uint32_t(i))) {
                *a *= std::min(kappa_[i], kappa_[j]);
                sum += *a++ * (v[j] - v[i]);
            }
            smoothed_[i] = sum;
        });
        forRange(n, [&](size_t i) {
            Vec3f sum = Vec3f::Zero();
            const float* a = weights_.data() + offsets_[i];
            for (const uint32_t j : neighbours(uint32_t(i)))
                sum += *a++ * (smoothed_[j] - smoothed_[i]);
            twice_[i] = sum;
        });
    }

    // The linear-exact L twice (five passes with the weights').
    template <class Neighbours>
    void linearExactBiLaplacian(std::span<const Vec3f> v, std::span<const Vec3f> positions,
                                Neighbours& neighbours) {
        const size_t n = v.size();
        gradients_.resize(n);
        firstMoments_.resize(n);
        inverseMoments_.resize(n);
        // a_ij in place, the moments sum_j a_ij x_ji and sum_j a_ij x_ji x_ji^T, and G(v).
        forRange(n, [&](size_t i) {
            Vec3f first = Vec3f::Zero();
            Mat3f second = Mat3f::Zero(), t = Mat3f::Zero();
            float* a = weights_.data() + offsets_[i];
            for (const uint32_t j : neighbours(uint32_t(i))) {
                *a *= std::min(kappa_[i], kappa_[j]);
                const Vec3f xji = positions[j] - positions[i], axji = *a++ * xji;
                first += axji;
                second.noalias() += axji * xji.transpose();
                t.noalias() += (v[j] - v[i]) * axji.transpose();
            }
            firstMoments_[i] = first;
            inverseMoments_[i] = pseudoInverse(second);
            gradients_[i] = t * inverseMoments_[i];
        });
        // L(v)_i = sum_j a_ij (v_j - v_i) - (G_i m_i + sum_j a_ij G_j x_ji) / 2, G from gradients_.
        auto laplacian = [&](std::span<const Vec3f> u, std::vector<Vec3f>& out) {
            forRange(n, [&](size_t i) {
                Vec3f difference = Vec3f::Zero(), neighbourGradients = Vec3f::Zero();
                const float* a = weights_.data() + offsets_[i];
                for (const uint32_t j : neighbours(uint32_t(i))) {
                    const float aij = *a++;
                    difference += aij * (u[j] - u[i]);
                    neighbourGradients.noalias() += gradients_[j] * (aij * (positions[j] - positions[i]));
                }
                out[i] = difference - 0.5f * (gradients_[i] * firstMoments_[i] + neighbourGradients);
            });
        };
        laplacian(v, smoothed_);
        forRange(n, [&](size_t i) { // G(L(v))
            Mat3f t = Mat3f::Zero();
            const float* a = weights_.data() + offsets_[i];
            for (const uint32_t j : neighbours(uint32_t(i)))
                t.noalias() +=
                    (smoothed_[j] - smoothed_[i]) * (*a++ * (positions[j] - positions[i])).transpose();
            gradients_[i] = t * inverseMoments_[i];
        });
        laplacian(smoothed_, twice_);
    }

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

    bool rate_ = false, linearExact_ = false;
    std::vector<float> kappa_;
    std::vector<Vec3f> smoothed_, twice_; // L(v) and L(L(v))
    std::vector<Mat3f> gradients_;        // G_i of the field L is taken of
    std::vector<Vec3f> firstMoments_;     // sum_j a_ij x_ji
    std::vector<Mat3f> inverseMoments_;   // (sum_j a_ij x_ji x_ji^T)^+
    std::vector<uint32_t> offsets_;       // particle i's pairs: weights_[offsets_[i] .. offsets_[i + 1])
    std::vector<float> weights_;          // a_ij
};

} // namespace octo
