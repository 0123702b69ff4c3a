#include "surface/SurfaceDetection_Marrone2010.h"

#include <Eigen/Eigenvalues>
#include <tbb/parallel_for.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace octo {

namespace {

// Candidates of one grid cell's particles (the 27 cells around it) in structure-of-arrays form,
// so the inner sums run as Eigen array expressions (SIMD, including the square roots). Kept per
// thread between calls: no allocation in steady state.
struct Candidates {
    std::vector<float> x, y, z, v;
    Eigen::ArrayXf dx, dy, dz, s, nv; // per particle: its neighbours within h (compacted)
    std::vector<uint32_t> idx;
    void clear() {
        x.clear();
        y.clear();
        z.clear();
        v.clear();
    }
};
thread_local Candidates tlCandidates;

template <class PerCell> void forEachOccupiedCell(const NeighborGrid& grid, PerCell&& perCell) {
    tbb::parallel_for(tbb::blocked_range<uint32_t>(0, uint32_t(grid.cellCount()), 256),
                      [&](const tbb::blocked_range<uint32_t>& r) {
                          for (uint32_t c = r.begin(); c < r.end(); ++c) {
                              const auto [b, e] = grid.cellRange(c);
                              if (b != e)
                                  perCell(b, e);
                          }
                      });
}

void gather(const NeighborGrid& grid, std::span<const Vec3f> xs, std::span<const float> values,
            const Vec3f& origin, float h, Candidates& c) {
    size_t m = 0;
    grid.forEachCandidateRange(origin, h, [&](uint32_t b, uint32_t e) { m += e - b; });
    c.x.resize(m);
    c.y.resize(m);
    c.z.resize(m);
    c.v.resize(m);
    float *x = c.x.data(), *y = c.y.data(), *z = c.z.data(), *v = c.v.data();
    size_t k = 0;
    grid.forEachCandidateRange(origin, h, [&](uint32_t b, uint32_t e) {
        for (uint32_t j = b; j < e; ++j, ++k) {
            x[k] = xs[j].x();
            y[k] = xs[j].y();
            z[k] = xs[j].z();
            v[k] = values.empty() ? 0.0f : values[j];
        }
    });
    if (c.dx.size() < Eigen::Index(m)) {
        const Eigen::Index cap = std::max<Eigen::Index>(2 * Eigen::Index(m), 256);
        c.dx.resize(cap);
        c.dy.resize(cap);
        c.dz.resize(cap);
        c.s.resize(cap);
        c.nv.resize(cap);
    }
}

// Compacts the candidates within h of (xi, yi, zi) into c.dx/dy/dz (x_i - x_j) and c.nv (value);
// returns their count. The distances are computed vectorised, the index compaction is
// branch-free, so the ~85 % of candidates outside the support cost little.
Eigen::Index neighbours(Candidates& c, float xi, float yi, float zi, float h2) {
    const Eigen::Index m = Eigen::Index(c.x.size());
    using Map = Eigen::Map<const Eigen::ArrayXf>;
    auto r2 = c.s.head(m);
    r2 = (xi - Map(c.x.data(), m)).square() + (yi - Map(c.y.data(), m)).square() +
         (zi - Map(c.z.data(), m)).square();
    if (c.idx.size() < size_t(m))
        c.idx.resize(size_t(m));
    uint32_t* idx = c.idx.data();
    const float* r = r2.data();
    Eigen::Index k = 0;
    for (Eigen::Index j = 0; j < m; ++j) {
        idx[k] = uint32_t(j);
        k += r[j] < h2 ? 1 : 0;
    }
    const float *x = c.x.data(), *y = c.y.data(), *z = c.z.data(), *v = c.v.data();
    float *dx = c.dx.data(), *dy = c.dy.data(), *dz = c.dz.data(), *nv = c.nv.data();
    for (Eigen::Index q = 0; q < k; ++q) {
        const uint32_t j = idx[q];
        dx[q] = xi - x[j];
        dy[q] = yi - y[j];
        dz[q] = zi - z[j];
        nv[q] = v[j];
    }
    return k;
}
} // namespace

// The cubic spline in branch-free form: W = k (2 max(0, 1-q)^3 - 8 max(0, 1/2-q)^3), which equals
// k (6q^3 - 6q^2 + 1) for q <= 1/2 and 2k (1-q)^3 for 1/2 < q <= 1 (same as CubicSplineKernel).
void SurfaceDetection_Marrone2010::computeDensities(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                                    const CubicSplineKernel& kernel, float mass,
                                                    std::span<float> rho) {
    const float h = kernel.supportRadius(), invH = 1.0f / h;
    const float k = 8.0f / (std::numbers::pi_v<float> * h * h * h);
    forEachOccupiedCell(grid, [&](uint32_t b, uint32_t e) {
        Candidates& c = tlCandidates;
        gather(grid, xs, {}, xs[b], h, c);
        for (uint32_t i = b; i < e; ++i) {
            const Eigen::Index n = neighbours(c, xs[i].x(), xs[i].y(), xs[i].z(), h * h);
            auto q = c.s.head(n);
            q = (c.dx.head(n).square() + c.dy.head(n).square() + c.dz.head(n).square()).sqrt() * invH;
            const float sum = (2.0f * (1.0f - q).max(0.0f).cube() - 8.0f * (0.5f - q).max(0.0f).cube()).sum();
            rho[i] = mass * k * sum;
        }
    });
}

void SurfaceDetection_Marrone2010::computeLambda(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                                 std::span<const float> rho, const CubicSplineKernel& kernel,
                                                 float mass, std::span<float> lambda) {
    const float h = kernel.supportRadius(), invH = 1.0f / h;
    const float k = 8.0f / (std::numbers::pi_v<float> * h * h * h);
    forEachOccupiedCell(grid, [&](uint32_t b, uint32_t e) {
        Candidates& c = tlCandidates;
        gather(grid, xs, rho, xs[b], h, c);
        for (float& v : c.v)
            v = v > 0.0f ? mass / v : 0.0f; // V_j = m / rho_j
        for (uint32_t i = b; i < e; ++i) {
            const Eigen::Index n = neighbours(c, xs[i].x(), xs[i].y(), xs[i].z(), h * h);
            auto dx = c.dx.head(n), dy = c.dy.head(n), dz = c.dz.head(n), s = c.s.head(n);
            const auto cv = c.nv.head(n);
            // L = -sum_j V_j x_ij (x) gradW_ij with gradW_ij = (dW/dq) / (h |x_ij|) x_ij (symmetric).
            // s_j = -V_j (dW/dq) / (h |x_ij|); dW/dq = k (-6 max(0,1-q)^2 + 24 max(0,1/2-q)^2) is 0
            // at q = 0, so the self term vanishes.
            s = (dx.square() + dy.square() + dz.square()).sqrt();
            s = -cv * k *
                (-6.0f * (1.0f - s * invH).max(0.0f).square() +
                 24.0f * (0.5f - s * invH).max(0.0f).square()) *
                invH / s.max(1e-20f);
            Mat3f L;
            L(0, 0) = (s * dx * dx).sum();
            L(0, 1) = L(1, 0) = (s * dx * dy).sum();
            L(0, 2) = L(2, 0) = (s * dx * dz).sum();
            L(1, 1) = (s * dy * dy).sum();
            L(1, 2) = L(2, 1) = (s * dy * dz).sum();
            L(2, 2) = (s * dz * dz).sum();
            lambda[i] = smallestEigenvalue(L);
        }
    });
}

float SurfaceDetection_Marrone2010::smallestEigenvalue(const Mat3f& m) {
    const Mat3d s = 0.5 * (m + m.transpose()).cast<double>();
    Eigen::SelfAdjointEigenSolver<Mat3d> es;
    es.computeDirect(s, Eigen::EigenvaluesOnly);
    return float(es.eigenvalues()[0]);
}

} // namespace octo
