#pragma once
// Bi-Laplacian velocity filter (in-house): damps particle-scale velocity noise, and real flow with it
// (docs/SCENES.md: a swirl, a cylinder wake, a shear at walls); per step, not per second.
//
//   L(v)_i = sum_j a_ij (v_j - v_i)           (XSPH's smoothing operator, Monaghan 1989)
//   v     <- v - eps L(L(v))                  (once per step, on the committed velocities)
//
// XSPH itself (v <- v + eps L(v)) is a Laplacian: it damps a velocity wave of length lambda at a
// rate ~ (h / lambda)^2, so the strength that quiets particle-scale noise also slows a dam break
// (measured: eps = 0.5 made a resting column quiet but moved the Martin & Moyce front RMS from 0.10
// to 0.15). Applying the operator twice damps ~ (h / lambda)^4: the same at the particle scale,
// 16x less at 2h and negligible at the scale of the flow (docs/BENCHMARKS.md, issue 9).
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
// bobbing at 0.04-0.07 m/s for as long as a resting column was run (now 0.03-0.045 m/s; a zero-g
// cube with tension still rounds into a drop, Martin & Moyce's front moves < 0.005 in RMS(Z);
// docs/BENCHMARKS.md §3, docs/VALIDATION.md). The weights are symmetric,
// so momentum is conserved, and every row sums to at most c, so L's eigenvalues lie in [-2c, 0]
// (Gershgorin): for eps <= 1 / (2 c^2) ~ 1.02 the filter is stable and never raises the kinetic
// energy, however compressed the particles are. Three passes over the fluid neighbours (sigma,
// L(v), L(L(v))), no boundary, no square root; the first keeps V0 W_ij beside the lists (4 bytes
// per pair) for the other two.
#include "common/Types.h"
#include "spatial/KernelTable.h"

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
    /// Largest row sum of the weights; bounds L's spectrum to [-2c, 0].
    static constexpr float kRowSum = 0.7f;
    /// Largest eps that keeps the filter dissipative for any particle arrangement.
    static constexpr float kMaxStrength = 1.0f / (2.0f * kRowSum * kRowSum);

    /// Relative density below which a particle counts as free surface and is left alone, and from
    /// which on it is filtered fully (linear in between).
    static constexpr float kSurfaceDensity = 0.7f, kInsideDensity = 0.85f;

    /// Filters `velocities` in place and returns the largest filtered speed (0 when off: nothing
    /// changed). neighbours(i) gives particle i's fluid neighbours (j != i, symmetric lists, pairs
    /// beyond the kernel support allowed); v0 = m / rho0; relativeDensity(i) = rho_i / rho0 with the
    /// boundary's share (walls count as fluid, the free surface does not).
    template <class Neighbours, class RelativeDensity>
    float apply(float eps, std::span<Vec3f> velocities, std::span<const Vec3f> positions, float v0,
                const KernelTable& kernel, Neighbours&& neighbours, RelativeDensity&& relativeDensity) {
        const size_t n = velocities.size();
        if (!(eps > 0.0f) || n == 0)
            return 0.0f;
        eps = std::min(eps, kMaxStrength);
        kappa_.resize(n);
        smoothed_.resize(n);
        twice_.resize(n);
        // W_ij once per pair, kept beside the lists for the two Laplacians (CSR by particle).
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
        auto laplacian = [&](std::span<const Vec3f> v, std::vector<Vec3f>& out) {
            forRange(n, [&](size_t i) {
                Vec3f sum = Vec3f::Zero();
                const float* w = weights_.data() + offsets_[i];
                const float ki = kappa_[i];
                if (ki > 0.0f)
                    for (const uint32_t j : neighbours(uint32_t(i)))
                        sum += (std::min(ki, kappa_[j]) * *w++) * (v[j] - v[i]);
                out[i] = sum;
            });
        };
        laplacian(velocities, smoothed_);
        laplacian(smoothed_, twice_);
        // The filter lowers the kinetic energy, not every particle's speed: the caller's CFL bound
        // needs the new maximum, found in the same pass.
        return std::sqrt(tbb::parallel_reduce(
            tbb::blocked_range<size_t>(0, n, 1024), 0.0f,
            [&](const tbb::blocked_range<size_t>& r, float maxV2) {
                for (size_t i = r.begin(); i < r.end(); ++i) {
                    velocities[i] -= eps * twice_[i];
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

    std::vector<float> kappa_;
    std::vector<Vec3f> smoothed_, twice_; // L(v) and L(L(v))
    std::vector<uint32_t> offsets_;       // particle i's pairs: weights_[offsets_[i] .. offsets_[i + 1])
    std::vector<float> weights_;          // V0 W_ij of the first pass
};

} // namespace octo
