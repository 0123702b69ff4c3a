#pragma once
// Particle distance field of Zhu & Bridson, "Animating sand as a fluid", SIGGRAPH 2005, with the
// radius correction of Solenthaler, Schläfli & Pajarola, "A unified particle model for fluid-solid
// interactions", CAVW 18, 2007 (ALGORITHMS.md §6):
//   phi(x) = |x - xbar| - r f,  xbar = sum w_j x_j / sum w_j,  w_j = (1 - |x - x_j|^2 / R^2)^3,
//   f = 1 for EVmax < t_low, 0 for EVmax > t_high, else gamma^3 - 3 gamma^2 + 3 gamma with
//   gamma = (t_high - EVmax) / (t_high - t_low); EVmax = largest eigenvalue of grad xbar.
// grad xbar = sum (x_j - xbar) (x) grad w_j / sum w_j is not symmetric in general; we take the
// eigenvalues of its symmetric part (real, and they bound the real parts of the others).
// Points without a particle within R are outside: phi = +R.
#include "common/Types.h"
#include "sph/NeighborGrid.h"

#include <Eigen/Eigenvalues>
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
        const Vec3f dbar = s.sd / s.sw; // xbar - x
        const Mat3f J = (s.c - dbar * s.g.transpose()) / s.sw;
        const Mat3f S = 0.5f * (J + J.transpose());
        Eigen::SelfAdjointEigenSolver<Mat3f> es;
        es.computeDirect(S, Eigen::EigenvaluesOnly);
        return dbar.norm() - r_ * radiusFactor(es.eigenvalues()[2]);
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

    /// Particles near a group of corners, relative to a centre, in structure-of-arrays form so that
    /// the sums run as Eigen array expressions (SIMD). Reused between calls.
    struct Candidates {
        std::vector<float> x, y, z;
        Eigen::ArrayXf dx, dy, dz, w, cg;
        void clear() {
            x.clear();
            y.clear();
            z.clear();
        }
        void push(const Vec3f& d) {
            x.push_back(d.x());
            y.push_back(d.y());
            z.push_back(d.z());
        }
        /// Appends the points of [b, e) within sqrt(reach2) of centre, relative to centre.
        void appendNear(const Vec3f* pts, uint32_t b, uint32_t e, const Vec3f& centre, float reach2) {
            const size_t n0 = x.size();
            x.resize(n0 + (e - b));
            y.resize(n0 + (e - b));
            z.resize(n0 + (e - b));
            size_t k = n0;
            for (uint32_t j = b; j < e; ++j) {
                const float dx = pts[j].x() - centre.x(), dy = pts[j].y() - centre.y(),
                            dz = pts[j].z() - centre.z();
                x[k] = dx;
                y[k] = dy;
                z[k] = dz;
                k += (dx * dx + dy * dy + dz * dz <= reach2) ? 1 : 0; // branch-free compaction
            }
            x.resize(k);
            y.resize(k);
            z.resize(k);
        }
    };
    /// phi at centre + offset from candidates given relative to centre (all particles within R of
    /// the point must be among them; farther ones contribute 0).
    float phi(Candidates& c, const Vec3f& offset) const {
        const Eigen::Index m = Eigen::Index(c.x.size());
        if (m == 0)
            return R_;
        if (c.dx.size() < m) {
            const Eigen::Index cap = std::max<Eigen::Index>(2 * m, 256);
            c.dx.resize(cap);
            c.dy.resize(cap);
            c.dz.resize(cap);
            c.w.resize(cap);
            c.cg.resize(cap);
        }
        using Map = Eigen::Map<const Eigen::ArrayXf>;
        auto dx = c.dx.head(m), dy = c.dy.head(m), dz = c.dz.head(m), w = c.w.head(m), cg = c.cg.head(m);
        dx = Map(c.x.data(), m) - offset.x(); // x_j - x
        dy = Map(c.y.data(), m) - offset.y();
        dz = Map(c.z.data(), m) - offset.z();
        cg = (1.0f - (dx.square() + dy.square() + dz.square()) * invR2_).max(0.0f); // q = 1 - s^2
        w = cg.cube();
        cg = (6.0f * invR2_) * cg.square(); // grad_x w_j = cg_j (x_j - x)
        Sums s;
        s.sw = w.sum();
        s.sd = Vec3f((w * dx).sum(), (w * dy).sum(), (w * dz).sum());
        s.g = Vec3f((cg * dx).sum(), (cg * dy).sum(), (cg * dz).sum());
        const float cxx = (cg * dx * dx).sum(), cxy = (cg * dx * dy).sum(), cxz = (cg * dx * dz).sum();
        const float cyy = (cg * dy * dy).sum(), cyz = (cg * dy * dz).sum(), czz = (cg * dz * dz).sum();
        s.c << cxx, cxy, cxz, cxy, cyy, cyz, cxz, cyz, czz;
        return phi(s);
    }

private:
    float r_, R_, invR2_, tLow_, tHigh_;
};

} // namespace octo
