#pragma once
// Particle distance field of Zhu & Bridson, "Animating sand as a fluid", SIGGRAPH 2005, with the
// radius correction of Solenthaler, Schläfli & Pajarola, "A unified particle model for fluid-solid
// interactions", CAVW 18, 2007 (docs/ALGORITHMS.md §6):
//   phi(x) = |x - xbar| - r f,  xbar = sum w_j x_j / sum w_j,  w_j = (1 - |x - x_j|^2 / R^2)^3,
//   f = 1 for EVmax < t_low, 0 for EVmax > t_high, else gamma^3 - 3 gamma^2 + 3 gamma with
//   gamma = (t_high - EVmax) / (t_high - t_low); EVmax = largest eigenvalue of grad xbar.
// grad xbar = sum (x_j - xbar) (x) grad w_j / sum w_j is not symmetric in general; we take the
// eigenvalues of its symmetric part (real, and they bound the real parts of the others).
// Points without a particle within R are outside: phi = +R.
#include "common/SymmetricEigen3.h"
#include "common/Types.h"
#include "spatial/NeighborGrid.h"

#include <algorithm>
#include <span>
#include <vector>

namespace octo {

class DistanceField_Solenthaler2007 {
public:
    DistanceField_Solenthaler2007(float particleRadius, float kernelRadius, float tLow, float tHigh)
        : r_(particleRadius), R_(kernelRadius), invR2_(1.0f / (kernelRadius * kernelRadius)), tLow_(tLow),
          tHigh_(tHigh) {}

    float kernelRadius() const { return R_; }

    /// Accumulates one particle, d = x_j - x (relative coordinates keep float precision).
    struct Sums {
        float sw = 0.0f;
        Vec3f sd = Vec3f::Zero(), g = Vec3f::Zero();
        Mat3f c = Mat3f::Zero();
    };
    void add(Sums& s, const Vec3f& d, float r2) const {
        const float q = 1.0f - r2 * invR2_;
        if (q <= 0.0f)
            return;
        const float q2 = q * q;
        const float w = q2 * q;
        const float cg = 6.0f * q2 * invR2_; // grad_x w_j = cg * d
        s.sw += w;
        s.sd += w * d;
        s.g += cg * d;
        s.c.noalias() += (cg * d) * d.transpose();
    }
    float phi(const Sums& s) const {
        if (!(s.sw > 0.0f))
            return R_;
        const float inv = 1.0f / s.sw;
        const Vec3f dbar = inv * s.sd; // xbar - x
        // grad xbar = (c - dbar g^T) / sum w; only its symmetric part is needed.
        Mat3f S;
        for (int a = 0; a < 3; ++a)
            for (int b = a; b < 3; ++b)
                S(a, b) = S(b, a) = inv * (s.c(a, b) - 0.5f * (dbar[a] * s.g[b] + dbar[b] * s.g[a]));
        return dbar.norm() - r_ * radiusFactor(largestSymmetricEigenvalue(S));
    }
    float radiusFactor(float evMax) const {
        if (evMax < tLow_)
            return 1.0f;
        if (evMax > tHigh_)
            return 0.0f;
        const float g = (tHigh_ - evMax) / (tHigh_ - tLow_);
        return g * g * g - 3.0f * g * g + 3.0f * g;
    }
    /// phi at x with neighbours from the grid (xs in the grid's sorted order).
    float operator()(const Vec3f& x, const NeighborGrid& grid, std::span<const Vec3f> xs) const {
        Sums s;
        grid.forEachNeighbor(x, R_, xs, [&](uint32_t, const Vec3f& xj, float r2) { add(s, xj - x, r2); });
        return phi(s);
    }

    /// Particles near a group of corners, relative to a centre, in structure-of-arrays form,
    /// padded to a whole number of SIMD batches with points far outside R (weight 0). Reused
    /// between calls (capacity kept).
    static constexpr size_t kLanes = 8;
    struct Candidates {
        std::vector<float> x, y, z;
        size_t count = 0; ///< real candidates; x.size() is count rounded up to kLanes
        void clear() {
            x.clear();
            y.clear();
            z.clear();
            count = 0;
        }
        /// Makes room for n more candidates (and the padding); out gets where they go. Returns count.
        size_t reserveMore(size_t n, float* out[3]) {
            const size_t need = count + n + kLanes;
            if (x.size() < need) {
                x.resize(need);
                y.resize(need);
                z.resize(need);
            }
            out[0] = x.data() + count;
            out[1] = y.data() + count;
            out[2] = z.data() + count;
            return count;
        }
        /// Pads the last batch with far points; call after the appends, before phi.
        void seal() {
            const size_t end = padded();
            x.resize(std::max(x.size(), end));
            y.resize(std::max(y.size(), end));
            z.resize(std::max(z.size(), end));
            for (size_t k = count; k < end; ++k)
                x[k] = y[k] = z[k] = kFar;
        }
        size_t padded() const { return (count + kLanes - 1) / kLanes * kLanes; }
    };
    /// phi at centre + offset from sealed candidates given relative to centre (all particles within
    /// R of the point must be among them; farther ones contribute 0).
    float phi(const Candidates& c, const Vec3f& offset) const {
        if (c.count == 0)
            return R_;
        return phi(sums(c.x.data(), c.y.data(), c.z.data(), c.padded(), offset));
    }
    /// The 13 sums over m candidates (m a multiple of kLanes) relative to offset, in one pass with
    /// kLanes independent lanes (SIMD; AVX2 when the CPU has it, same result bit for bit).
    Sums sums(const float* x, const float* y, const float* z, size_t m, const Vec3f& offset) const;

private:
    static constexpr float kFar = 1e9f; // padding: its squared distance stays finite, q clamps to 0
    float r_, R_, invR2_, tLow_, tHigh_;
};

} // namespace octo
