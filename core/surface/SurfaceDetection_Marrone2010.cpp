#include "surface/SurfaceDetection_Marrone2010.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numbers>
#include <vector>

namespace octo {

namespace {

// Candidates of one grid cell's particles (the 27 cells around it) in structure-of-arrays form,
// so the inner sums run as Eigen array expressions (SIMD, including the square roots).
struct Candidates {
    std::vector<float> x, y, z, v;
    std::vector<std::pair<uint32_t, uint32_t>> ranges; // sorted-index ranges of the 27 cells
    Eigen::ArrayXf dx, dy, dz, s, nv;                  // per particle: its neighbours within h (compacted)
    size_t bytes() const {
        return (x.capacity() + y.capacity() + z.capacity() + v.capacity()) * sizeof(float) +
               size_t(dx.size() + dy.size() + dz.size() + s.size() + nv.size()) * sizeof(float);
    }
};
} // namespace

// Neighbour bit masks of one particle over its cell's candidates (cells with <= 256 candidates).
using NeighbourMask = std::array<uint64_t, 4>;
constexpr size_t kMaskCandidates = 256;

struct SurfaceDetection_Marrone2010::Workspace::Impl {
    tbb::enumerable_thread_specific<Candidates> candidates;
    std::vector<NeighbourMask> masks; // per sorted particle, during computeDensitiesAndLambda
    std::vector<float> volumes;       // V_j = m / rho_j per sorted particle
};

SurfaceDetection_Marrone2010::Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
SurfaceDetection_Marrone2010::Workspace::~Workspace() = default;
size_t SurfaceDetection_Marrone2010::Workspace::bytes() const {
    size_t b = impl_->masks.capacity() * sizeof(NeighbourMask) + impl_->volumes.capacity() * sizeof(float);
    for (const Candidates& c : impl_->candidates)
        b += c.bytes();
    return b;
}

namespace {

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

// Candidates of the cell holding origin: positions, and values[j] when values is not empty.
void gather(const NeighborGrid& grid, std::span<const Vec3f> xs, std::span<const float> values,
            const Vec3f& origin, float h, Candidates& c) {
    c.ranges.clear();
    size_t m = 0;
    grid.forEachCandidateRange(origin, h, [&](uint32_t b, uint32_t e) {
        c.ranges.emplace_back(b, e);
        m += e - b;
    });
    c.x.resize(m);
    c.y.resize(m);
    c.z.resize(m);
    c.v.resize(m);
    float *x = c.x.data(), *y = c.y.data(), *z = c.z.data(), *v = c.v.data();
    const Vec3f* p = xs.data();
    size_t k = 0;
    for (const auto& [b, e] : c.ranges) {
        for (uint32_t j = b; j < e; ++j, ++k) {
            x[k] = p[j].x();
            y[k] = p[j].y();
            z[k] = p[j].z();
        }
        if (!values.empty())
            std::copy(values.data() + b, values.data() + e, v + (k - (e - b)));
    }
    if (c.dx.size() < Eigen::Index(m)) {
        const Eigen::Index cap = std::max<Eigen::Index>(2 * Eigen::Index(m), 256);
        c.dx.resize(cap);
        c.dy.resize(cap);
        c.dz.resize(cap);
        c.s.resize(cap);
        c.nv.resize(cap);
    }
}

// Copies the candidates whose bits are set into c.dx/dy/dz (x_i - x_j) and c.nv (value), in
// candidate order, starting at k; returns the new count.
inline Eigen::Index compact(Candidates& c, size_t j0, uint64_t bits, float xi, float yi, float zi,
                            Eigen::Index k) {
    const float *x = c.x.data(), *y = c.y.data(), *z = c.z.data(), *v = c.v.data();
    float *dx = c.dx.data(), *dy = c.dy.data(), *dz = c.dz.data(), *nv = c.nv.data();
    for (; bits; bits &= bits - 1) {
        const size_t jj = j0 + size_t(std::countr_zero(bits));
        dx[k] = xi - x[jj];
        dy[k] = yi - y[jj];
        dz[k] = zi - z[jj];
        nv[k] = v[jj];
        ++k;
    }
    return k;
}

// Compacts the candidates within h of (xi, yi, zi); returns their count. 64 candidates at a time:
// a SIMD distance test gives a bit mask, and only the set bits (~15 % of the candidates) are
// copied. The masks are written to maskOut when given (and the candidates fit in it).
Eigen::Index neighbours(Candidates& c, float xi, float yi, float zi, float h2,
                        NeighbourMask* maskOut = nullptr) {
    const size_t m = c.x.size();
    const float *x = c.x.data(), *y = c.y.data(), *z = c.z.data();
    Eigen::Index k = 0;
    for (size_t j0 = 0; j0 < m; j0 += 64) {
        const size_t len = std::min<size_t>(64, m - j0);
        uint64_t bits = 0;
        size_t j = 0;
#if defined(__SSE2__)
        const __m128 xv = _mm_set1_ps(xi), yv = _mm_set1_ps(yi), zv = _mm_set1_ps(zi), hv = _mm_set1_ps(h2);
        for (; j + 4 <= len; j += 4) {
            const __m128 ex = _mm_sub_ps(xv, _mm_loadu_ps(x + j0 + j));
            const __m128 ey = _mm_sub_ps(yv, _mm_loadu_ps(y + j0 + j));
            const __m128 ez = _mm_sub_ps(zv, _mm_loadu_ps(z + j0 + j));
            const __m128 r2 =
                _mm_add_ps(_mm_add_ps(_mm_mul_ps(ex, ex), _mm_mul_ps(ey, ey)), _mm_mul_ps(ez, ez));
            bits |= uint64_t(unsigned(_mm_movemask_ps(_mm_cmplt_ps(r2, hv)))) << j;
        }
#endif
        for (; j < len; ++j) {
            const float ex = xi - x[j0 + j], ey = yi - y[j0 + j], ez = zi - z[j0 + j];
            bits |= uint64_t((ex * ex + ey * ey) + ez * ez < h2) << j;
        }
        if (maskOut && m <= kMaskCandidates)
            (*maskOut)[j0 / 64] = bits;
        k = compact(c, j0, bits, xi, yi, zi, k);
    }
    return k;
}

// The same from a stored mask (the candidates gathered in the same order).
Eigen::Index neighbours(Candidates& c, float xi, float yi, float zi, const NeighbourMask& mask) {
    Eigen::Index k = 0;
    for (size_t j0 = 0; j0 < c.x.size(); j0 += 64)
        k = compact(c, j0, mask[j0 / 64], xi, yi, zi, k);
    return k;
}
} // namespace

void SurfaceDetection_Marrone2010::computeDensities(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                                    const CubicSplineKernel& kernel, float mass,
                                                    std::span<float> rho) {
    Workspace ws;
    computeDensities(grid, xs, kernel, mass, rho, ws);
}

void SurfaceDetection_Marrone2010::computeLambda(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                                 std::span<const float> rho, const CubicSplineKernel& kernel,
                                                 float mass, std::span<float> lambda) {
    Workspace ws;
    computeLambda(grid, xs, rho, kernel, mass, lambda, ws);
}

namespace {
// The cubic spline in branch-free form: W = k (2 max(0, 1-q)^3 - 8 max(0, 1/2-q)^3), which equals
// k (6q^3 - 6q^2 + 1) for q <= 1/2 and 2k (1-q)^3 for 1/2 < q <= 1 (same as CubicSplineKernel).
// masks: per sorted particle, written when given.
void densityPass(const NeighborGrid& grid, std::span<const Vec3f> xs, const CubicSplineKernel& kernel,
                 float mass, std::span<float> rho, tbb::enumerable_thread_specific<Candidates>& tls,
                 NeighbourMask* masks) {
    const float h = kernel.supportRadius(), invH = 1.0f / h;
    const float k = 8.0f / (std::numbers::pi_v<float> * h * h * h);
    forEachOccupiedCell(grid, [&](uint32_t b, uint32_t e) {
        Candidates& c = tls.local();
        gather(grid, xs, {}, xs[b], h, c);
        for (uint32_t i = b; i < e; ++i) {
            const Eigen::Index n =
                neighbours(c, xs[i].x(), xs[i].y(), xs[i].z(), h * h, masks ? masks + i : nullptr);
            auto q = c.s.head(n);
            q = (c.dx.head(n).square() + c.dy.head(n).square() + c.dz.head(n).square()).sqrt() * invH;
            const float sum = (2.0f * (1.0f - q).max(0.0f).cube() - 8.0f * (0.5f - q).max(0.0f).cube()).sum();
            rho[i] = mass * k * sum;
        }
    });
}

// masks: per sorted particle from densityPass over the same grid and positions, or null.
void lambdaPass(const NeighborGrid& grid, std::span<const Vec3f> xs, std::span<const float> rho,
                const CubicSplineKernel& kernel, float mass, std::span<float> lambda,
                SurfaceDetection_Marrone2010::Workspace::Impl& ws, const NeighbourMask* masks) {
    const float h = kernel.supportRadius(), invH = 1.0f / h;
    const float k = 8.0f / (std::numbers::pi_v<float> * h * h * h);
    ws.volumes.resize(rho.size());
    float* volumes = ws.volumes.data();
    tbb::parallel_for(tbb::blocked_range<size_t>(0, rho.size(), 16384),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t j = r.begin(); j < r.end(); ++j)
                              volumes[j] = rho[j] > 0.0f ? mass / rho[j] : 0.0f; // V_j = m / rho_j
                      });
    auto& tls = ws.candidates;
    forEachOccupiedCell(grid, [&](uint32_t b, uint32_t e) {
        Candidates& c = tls.local();
        gather(grid, xs, ws.volumes, xs[b], h, c);
        const bool useMasks = masks && c.x.size() <= kMaskCandidates;
        for (uint32_t i = b; i < e; ++i) {
            const Eigen::Index n = useMasks ? neighbours(c, xs[i].x(), xs[i].y(), xs[i].z(), masks[i])
                                            : neighbours(c, xs[i].x(), xs[i].y(), xs[i].z(), h * h);
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
            lambda[i] = SurfaceDetection_Marrone2010::smallestEigenvalue(L);
        }
    });
}
} // namespace

void SurfaceDetection_Marrone2010::computeDensities(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                                    const CubicSplineKernel& kernel, float mass,
                                                    std::span<float> rho, Workspace& workspace) {
    densityPass(grid, xs, kernel, mass, rho, workspace.impl().candidates, nullptr);
}

void SurfaceDetection_Marrone2010::computeLambda(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                                 std::span<const float> rho, const CubicSplineKernel& kernel,
                                                 float mass, std::span<float> lambda, Workspace& workspace) {
    lambdaPass(grid, xs, rho, kernel, mass, lambda, workspace.impl(), nullptr);
}

void SurfaceDetection_Marrone2010::computeDensitiesAndLambda(const NeighborGrid& grid,
                                                             std::span<const Vec3f> xs,
                                                             const CubicSplineKernel& kernel, float mass,
                                                             std::span<float> rho, std::span<float> lambda,
                                                             Workspace& workspace) {
    auto& masks = workspace.impl().masks;
    masks.resize(xs.size());
    densityPass(grid, xs, kernel, mass, rho, workspace.impl().candidates, masks.data());
    lambdaPass(grid, xs, rho, kernel, mass, lambda, workspace.impl(), masks.data());
}

// Roots of the characteristic cubic of a symmetric 3x3 matrix A (Smith 1961): with q = tr A / 3
// and p = sqrt(tr((A - qI)^2) / 6), B = (A - qI) / p has eigenvalues 2 cos(phi + 2 pi k / 3),
// phi = acos(det B / 2) / 3; the smallest is k = 1. Two transcendental calls instead of the
// general solver's atan2, sin, cos and rescaling.
float SurfaceDetection_Marrone2010::smallestEigenvalue(const Mat3f& m) {
    const double a = m(0, 0), b = m(1, 1), c = m(2, 2);
    const double d = 0.5 * (double(m(0, 1)) + double(m(1, 0)));
    const double e = 0.5 * (double(m(0, 2)) + double(m(2, 0)));
    const double f = 0.5 * (double(m(1, 2)) + double(m(2, 1)));
    const double off = d * d + e * e + f * f;
    const double q = (a + b + c) / 3.0;
    const double aq = a - q, bq = b - q, cq = c - q;
    const double p2 = aq * aq + bq * bq + cq * cq + 2.0 * off;
    if (!(p2 > 1e-30 * (q * q + 1e-300)))
        return float(std::min({a, b, c})); // (nearly) a multiple of the identity
    const double p = std::sqrt(p2 / 6.0), ip = 1.0 / p;
    const double ba = aq * ip, bb = bq * ip, bc = cq * ip, bd = d * ip, be = e * ip, bf = f * ip;
    const double det = ba * (bb * bc - bf * bf) - bd * (bd * bc - bf * be) + be * (bd * bf - bb * be);
    const double r = std::clamp(0.5 * det, -1.0, 1.0);
    const double phi = std::acos(r) / 3.0;
    return float(q + 2.0 * p * std::cos(phi + 2.0 * std::numbers::pi / 3.0));
}

} // namespace octo
