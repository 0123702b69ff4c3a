#include "surface/AnisotropicField_YuTurk2013.h"

#include <Eigen/Eigenvalues>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>

namespace octo {

namespace {
constexpr float kSigma = float(315.0 / (64.0 * std::numbers::pi)); // P(q) = (1 - q^2)^3 on the unit ball

// Eight float lanes (GCC/Clang vector extension), as in DistanceField_Solenthaler2007.cpp.
using F8 = float __attribute__((vector_size(32)));
using I8 = int32_t __attribute__((vector_size(32)));
using F4 = float __attribute__((vector_size(16)));
static_assert(AnisotropicCandidates::kLanes == 8);

#if defined(__x86_64__) || defined(__i386__)
/// 8 x 8 transpose in registers: on return r[c] holds what was column c of the rows r[0..7].
[[gnu::target("avx2")]] inline void transpose8x8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}
#endif

inline void load8(F8& v, const float* p) {
    std::memcpy(&v, p, sizeof v);
}
inline float total(const F8& v) {
    const F4 h = __builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7);
    const F4 q = h + __builtin_shufflevector(h, h, 2, 3, 0, 1);
    return q[0] + q[1];
}

/// Eight kernels seen from the point o: d = o - xbar_j, G_j's six entries, the amplitude w,
/// u = G d and q = max(1 - |u|^2, 0); the sums below share these lane operations, in this order.
struct KernelLanes {
    F8 dx, dy, dz, a, b, cc, d, e, f, w, u0, u1, u2, q;
};
[[gnu::always_inline]] inline void loadKernels(const AnisotropicCandidates& c, size_t j, KernelLanes& k) {
    load8(k.dx, c.x.data() + j);
    load8(k.dy, c.y.data() + j);
    load8(k.dz, c.z.data() + j);
    load8(k.a, c.g00.data() + j);
    load8(k.b, c.g01.data() + j);
    load8(k.cc, c.g02.data() + j);
    load8(k.d, c.g11.data() + j);
    load8(k.e, c.g12.data() + j);
    load8(k.f, c.g22.data() + j);
    load8(k.w, c.amp.data() + j);
}
/// k as loadKernels left it (dx, dy, dz: the centres), seen from o.
[[gnu::always_inline]] inline KernelLanes kernelLanes(KernelLanes k, float ox, float oy, float oz) {
    const F8 zero = {}, one = zero + 1.0f;
    k.dx = ox - k.dx; // x - xbar_j
    k.dy = oy - k.dy;
    k.dz = oz - k.dz;
    k.u0 = k.a * k.dx + k.b * k.dy + k.cc * k.dz;
    k.u1 = k.b * k.dx + k.d * k.dy + k.e * k.dz;
    k.u2 = k.cc * k.dx + k.e * k.dy + k.f * k.dz;
    k.q = one - (k.u0 * k.u0 + k.u1 * k.u1 + k.u2 * k.u2);
    k.q = (F8)((I8)k.q & (k.q > zero)); // max(q, 0)
    return k;
}
[[gnu::always_inline]] inline KernelLanes kernelLanes(const AnisotropicCandidates& c, size_t j, float ox,
                                                      float oy, float oz) {
    KernelLanes k;
    loadKernels(c, j, k);
    return kernelLanes(k, ox, oy, oz);
}

/// The gradient's sums: sum of w (1 - |u|^2)^2 G u over the kernels, and how many kernel centres
/// lie within r (near).
struct GradientLanes {
    F8 ax = {}, ay = {}, az = {}, near = {};
    [[gnu::always_inline]] void add(const KernelLanes& g, F8 d2, float r2) {
        const F8 zero = {}, one = zero + 1.0f;
        const F8 s = g.w * g.q * g.q;
        near += (F8)((I8)one & ((d2 < r2) & (g.w > zero))); // padding has w = 0
        ax += s * (g.a * g.u0 + g.b * g.u1 + g.cc * g.u2);
        ay += s * (g.b * g.u0 + g.d * g.u1 + g.e * g.u2);
        az += s * (g.cc * g.u0 + g.e * g.u1 + g.f * g.u2);
    }
    void store(float* out) const {
        out[0] = total(ax);
        out[1] = total(ay);
        out[2] = total(az);
        out[3] = total(near);
    }
};

/// The velocity's sums: W (1, vx, vy, vz) with W = (1 - d^2 / radius^2)^3 over the kernel centres
/// within radius (w > 0: padding has amp = 0).
struct VelocityLanes {
    F8 sw = {}, sx = {}, sy = {}, sz = {};
    [[gnu::always_inline]] void add(F8 d2, F8 w, float invR2, const float* vx, const float* vy,
                                    const float* vz, size_t j) {
        const F8 zero = {}, one = zero + 1.0f;
        F8 ux, uy, uz;
        load8(ux, vx + j);
        load8(uy, vy + j);
        load8(uz, vz + j);
        F8 q = one - d2 * invR2;
        q = (F8)((I8)q & (q > zero) & (w > zero));
        const F8 k = q * q * q;
        sw += k;
        sx += k * ux;
        sy += k * uy;
        sz += k * uz;
    }
    void store(float* out) const {
        out[0] = total(sw);
        out[1] = total(sx);
        out[2] = total(sy);
        out[3] = total(sz);
    }
};

[[gnu::always_inline]] inline float fieldSum(const AnisotropicCandidates& c, size_t m, float ox, float oy,
                                             float oz) {
    F8 acc = {};
    for (size_t j = 0; j < m; j += 8) {
        const KernelLanes k = kernelLanes(c, j, ox, oy, oz);
        acc += k.w * (k.q * k.q * k.q);
    }
    return total(acc);
}

// fieldSum at n points o_p = (ox, oy, oz)[p], two at a time: each batch of kernels is loaded once
// for both, and each point's sum gets fieldSum's lane operations in fieldSum's order.
[[gnu::always_inline]] inline void fieldSums(const AnisotropicCandidates& c, size_t m, const float* ox,
                                             const float* oy, const float* oz, int n, float* out) {
    int p = 0;
    for (; p + 2 <= n; p += 2) {
        F8 acc0 = {}, acc1 = {};
        for (size_t j = 0; j < m; j += 8) {
            KernelLanes k;
            loadKernels(c, j, k);
            const KernelLanes k0 = kernelLanes(k, ox[p], oy[p], oz[p]);
            acc0 += k0.w * (k0.q * k0.q * k0.q);
            const KernelLanes k1 = kernelLanes(k, ox[p + 1], oy[p + 1], oz[p + 1]);
            acc1 += k1.w * (k1.q * k1.q * k1.q);
        }
        out[p] = total(acc0);
        out[p + 1] = total(acc1);
    }
    if (p < n)
        out[p] = fieldSum(c, m, ox[p], oy[p], oz[p]);
}

// sum of w (1 - |u|^2)^2 G u over the candidates, u = G (x - xbar); grad f = -6 times it.
[[gnu::always_inline]] inline void gradientSum(const AnisotropicCandidates& c, size_t m, float ox, float oy,
                                               float oz, float r2, float* out) {
    GradientLanes grad;
    for (size_t j = 0; j < m; j += 8) {
        const KernelLanes g = kernelLanes(c, j, ox, oy, oz);
        grad.add(g, g.dx * g.dx + g.dy * g.dy + g.dz * g.dz, r2);
    }
    grad.store(out);
}

// sum of W (1, vx, vy, vz) over the candidates centred within radius, W = (1 - d^2 / radius^2)^3.
[[gnu::always_inline]] inline void velocitySum(const AnisotropicCandidates& c, size_t m, float ox, float oy,
                                               float oz, float invR2, const float* vx, const float* vy,
                                               const float* vz, float* out) {
    VelocityLanes vel;
    for (size_t j = 0; j < m; j += 8) {
        F8 dx, dy, dz, w;
        load8(dx, c.x.data() + j);
        load8(dy, c.y.data() + j);
        load8(dz, c.z.data() + j);
        load8(w, c.amp.data() + j);
        dx = ox - dx;
        dy = oy - dy;
        dz = oz - dz;
        vel.add(dx * dx + dy * dy + dz * dz, w, invR2, vx, vy, vz, j);
    }
    vel.store(out);
}

// gradientSum and velocitySum in one pass over the candidates: each output gets the same lane
// operations in the same order as in its own pass (d^2 is the same expression in both).
[[gnu::always_inline]] inline void gradientVelocitySum(const AnisotropicCandidates& c, size_t m, float ox,
                                                       float oy, float oz, float r2, float invR2,
                                                       const float* vx, const float* vy, const float* vz,
                                                       float* grad, float* vel) {
    GradientLanes gradient;
    VelocityLanes velocity;
    for (size_t j = 0; j < m; j += 8) {
        const KernelLanes g = kernelLanes(c, j, ox, oy, oz);
        const F8 d2 = g.dx * g.dx + g.dy * g.dy + g.dz * g.dz;
        gradient.add(g, d2, r2);
        velocity.add(d2, g.w, invR2, vx, vy, vz, j);
    }
    gradient.store(grad);
    velocity.store(vel);
}

void gradientVelocitySumBaseline(const AnisotropicCandidates& c, size_t m, float ox, float oy, float oz,
                                 float r2, float invR2, const float* vx, const float* vy, const float* vz,
                                 float* grad, float* vel) {
    gradientVelocitySum(c, m, ox, oy, oz, r2, invR2, vx, vy, vz, grad, vel);
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void gradientVelocitySumAvx2(const AnisotropicCandidates& c, size_t m, float ox,
                                                     float oy, float oz, float r2, float invR2,
                                                     const float* vx, const float* vy, const float* vz,
                                                     float* grad, float* vel) {
    gradientVelocitySum(c, m, ox, oy, oz, r2, invR2, vx, vy, vz, grad, vel);
}
#endif

void velocitySumBaseline(const AnisotropicCandidates& c, size_t m, float ox, float oy, float oz, float invR2,
                         const float* vx, const float* vy, const float* vz, float* out) {
    velocitySum(c, m, ox, oy, oz, invR2, vx, vy, vz, out);
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void velocitySumAvx2(const AnisotropicCandidates& c, size_t m, float ox, float oy,
                                             float oz, float invR2, const float* vx, const float* vy,
                                             const float* vz, float* out) {
    velocitySum(c, m, ox, oy, oz, invR2, vx, vy, vz, out);
}
#endif

void gradientSumBaseline(const AnisotropicCandidates& c, size_t m, float ox, float oy, float oz, float r2,
                         float* out) {
    gradientSum(c, m, ox, oy, oz, r2, out);
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void gradientSumAvx2(const AnisotropicCandidates& c, size_t m, float ox, float oy,
                                             float oz, float r2, float* out) {
    gradientSum(c, m, ox, oy, oz, r2, out);
}
#endif

void fieldSumsBaseline(const AnisotropicCandidates& c, size_t m, const float* ox, const float* oy,
                       const float* oz, int n, float* out) {
    fieldSums(c, m, ox, oy, oz, n, out);
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void fieldSumsAvx2(const AnisotropicCandidates& c, size_t m, const float* ox,
                                           const float* oy, const float* oz, int n, float* out) {
    fieldSums(c, m, ox, oy, oz, n, out);
}
#endif

float fieldSumBaseline(const AnisotropicCandidates& c, size_t m, float ox, float oy, float oz) {
    return fieldSum(c, m, ox, oy, oz);
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] float fieldSumAvx2(const AnisotropicCandidates& c, size_t m, float ox, float oy,
                                           float oz) {
    return fieldSum(c, m, ox, oy, oz);
}
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
// For each 8-bit mask, the lanes it keeps, packed to the front, and their number.
struct CompressTable {
    alignas(32) uint32_t lanes[256][8];
    uint8_t count[256];
    constexpr CompressTable() : lanes{}, count{} {
        for (unsigned m = 0; m < 256; ++m) {
            unsigned k = 0;
            for (unsigned l = 0; l < 8; ++l)
                if ((m >> l) & 1u)
                    lanes[m][k++] = l;
            count[m] = uint8_t(k);
        }
    }
};
constexpr CompressTable kCompress;

/// The lanes of ids, a, b and c that mask keeps, packed to the front of out, oa, ob and oc (each
/// written up to seven entries past the kept); returns how many it kept.
[[gnu::target("avx2")]] inline unsigned storeKeptAvx2(unsigned mask, __m256i ids, __m256 a, __m256 b,
                                                      __m256 c, uint32_t* out, float* oa, float* ob,
                                                      float* oc) {
    const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompress.lanes[mask]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permutevar8x32_epi32(ids, perm));
    _mm256_storeu_ps(oa, _mm256_permutevar8x32_ps(a, perm));
    _mm256_storeu_ps(ob, _mm256_permutevar8x32_ps(b, perm));
    _mm256_storeu_ps(oc, _mm256_permutevar8x32_ps(c, perm));
    return kCompress.count[mask];
}

/// The filters' batch of eight from i on (of n): the lanes below n whose test passed, with their
/// ids (ids[i + l], or i + l without ids) and a, b, c, packed to the front of out, oa, ob, oc by
/// storeKeptAvx2; returns how many it kept.
[[gnu::target("avx2")]] inline unsigned keepBatchAvx2(__m256 test, size_t i, size_t n, const uint32_t* ids,
                                                      __m256 a, __m256 b, __m256 c, uint32_t* out, float* oa,
                                                      float* ob, float* oc) {
    const unsigned tail = n - i < 8 ? (1u << (n - i)) - 1u : 0xFFu; // the last batch: lanes < n
    const unsigned mask = unsigned(_mm256_movemask_ps(test)) & tail;
    const __m256i v =
        ids ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ids + i))
            : _mm256_add_epi32(_mm256_set1_epi32(int(i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return storeKeptAvx2(mask, v, a, b, c, out, oa, ob, oc);
}
#endif

// w_i = 1 - (sqrt(r2_i) / r_c)^3 for i < n (arrays of at least n rounded up to 8): the same
// operations in the same order as the scalar loop, eight at a time (no FMA: bit-identical).
void covarianceWeightsBaseline(const float* r2, size_t n, float invRc, float* w) {
    for (size_t i = 0; i < n; ++i) {
        const float q = std::sqrt(r2[i]) * invRc;
        w[i] = 1.0f - q * q * q;
    }
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void covarianceWeightsAvx2(const float* r2, size_t n, float invRc, float* w) {
    const __m256 inv = _mm256_set1_ps(invRc), one = _mm256_set1_ps(1.0f);
    for (size_t i = 0; i < n; i += 8) {
        const __m256 q = _mm256_mul_ps(_mm256_sqrt_ps(_mm256_loadu_ps(r2 + i)), inv);
        _mm256_storeu_ps(w + i, _mm256_sub_ps(one, _mm256_mul_ps(_mm256_mul_ps(q, q), q)));
    }
}
#endif
void covarianceWeights(const float* r2, size_t n, float invRc, float* w) {
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        return covarianceWeightsAvx2(r2, n, invRc, w);
#endif
    covarianceWeightsBaseline(r2, n, invRc, w);
}
} // namespace

float anisotropicFieldSum(const AnisotropicCandidates& c, const Vec3f& offset) {
    if (c.count == 0)
        return 0.0f;
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        return fieldSumAvx2(c, c.padded(), offset.x(), offset.y(), offset.z());
#endif
    return fieldSumBaseline(c, c.padded(), offset.x(), offset.y(), offset.z());
}

void anisotropicFieldSums(const AnisotropicCandidates& c, const float* ox, const float* oy, const float* oz,
                          int n, float* f) {
    if (c.count == 0) {
        std::fill_n(f, n, 0.0f);
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        return fieldSumsAvx2(c, c.padded(), ox, oy, oz, n, f);
#endif
    fieldSumsBaseline(c, c.padded(), ox, oy, oz, n, f);
}

Vec3f anisotropicFieldGradient(const AnisotropicCandidates& c, const Vec3f& offset, float radius, int* near) {
    float g[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (c.count > 0) {
#if defined(__x86_64__) || defined(__i386__)
        if (kHasAvx2)
            gradientSumAvx2(c, c.padded(), offset.x(), offset.y(), offset.z(), radius * radius, g);
        else
#endif
            gradientSumBaseline(c, c.padded(), offset.x(), offset.y(), offset.z(), radius * radius, g);
    }
    if (near)
        *near = int(g[3] + 0.5f);
    return Vec3f(-6.0f * g[0], -6.0f * g[1], -6.0f * g[2]);
}

Vec3f anisotropicFieldGradientAndMean(const AnisotropicCandidates& c, const Vec3f& offset, float radius,
                                      int& near, const float* vx, const float* vy, const float* vz,
                                      Vec3f& mean) {
    float g[4] = {0.0f, 0.0f, 0.0f, 0.0f}, s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (c.count > 0) {
        const float r2 = radius * radius, invR2 = 1.0f / (radius * radius);
#if defined(__x86_64__) || defined(__i386__)
        if (kHasAvx2)
            gradientVelocitySumAvx2(c, c.padded(), offset.x(), offset.y(), offset.z(), r2, invR2, vx, vy, vz,
                                    g, s);
        else
#endif
            gradientVelocitySumBaseline(c, c.padded(), offset.x(), offset.y(), offset.z(), r2, invR2, vx, vy,
                                        vz, g, s);
    }
    near = int(g[3] + 0.5f);
    mean = s[0] > 0.0f ? Vec3f(s[1] / s[0], s[2] / s[0], s[3] / s[0]) : Vec3f::Zero();
    return Vec3f(-6.0f * g[0], -6.0f * g[1], -6.0f * g[2]);
}

Vec3f kernelWeightedMean(const AnisotropicCandidates& c, const Vec3f& offset, float radius, const float* vx,
                         const float* vy, const float* vz) {
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (c.count > 0) {
        const float invR2 = 1.0f / (radius * radius);
#if defined(__x86_64__) || defined(__i386__)
        if (kHasAvx2)
            velocitySumAvx2(c, c.padded(), offset.x(), offset.y(), offset.z(), invR2, vx, vy, vz, s);
        else
#endif
            velocitySumBaseline(c, c.padded(), offset.x(), offset.y(), offset.z(), invR2, vx, vy, vz, s);
    }
    return s[0] > 0.0f ? Vec3f(s[1] / s[0], s[2] / s[0], s[3] / s[0]) : Vec3f::Zero();
}

namespace {

/// Eq. 4-6 relative to x_k (float precision): sums of w, w d, w d d^T, and of w, w d over the
/// surface neighbours.
struct NeighbourMoments {
    float sw = 0.0f, swSurface = 0.0f;
    Vec3f sd = Vec3f::Zero(), sdSurface = Vec3f::Zero();
    float sxx = 0, sxy = 0, sxz = 0, syy = 0, syz = 0, szz = 0;
};

/// Appends the particles j in [b, e) within rc of x (r2 <= rc2) at nk: j, |x_j - x|^2, x_j - x
/// (scratch has room for e - b + 8 more); returns the new count. |d|^2 = dx^2 + (dy^2 + dz^2),
/// the order of Eigen's squaredNorm(). Kept branch-free.
size_t keepRangeBaseline(const float* px, const float* py, const float* pz, uint32_t b, uint32_t e,
                         const Vec3f& x, float rc2, CovarianceScratch::Lane& s, size_t nk) {
    for (uint32_t j = b; j < e; ++j) {
        const float dx = px[j] - x.x(), dy = py[j] - x.y(), dz = pz[j] - x.z();
        const float r2 = dx * dx + (dy * dy + dz * dz);
        s.kept[nk] = j;
        s.r2[nk] = r2;
        s.dx[nk] = dx;
        s.dy[nk] = dy;
        s.dz[nk] = dz;
        nk += r2 <= rc2 ? 1 : 0;
    }
    return nk;
}
#if defined(__x86_64__) || defined(__i386__)
// Eight at a time, the kept lanes packed by a permutation; the baseline's float operations (AVX2
// without FMA). Reads up to seven positions past e (the arrays are padded).
[[gnu::target("avx2")]] size_t keepRangeAvx2(const float* px, const float* py, const float* pz, uint32_t b,
                                             uint32_t e, const Vec3f& x, float rc2,
                                             CovarianceScratch::Lane& s, size_t nk) {
    const __m256 vx = _mm256_set1_ps(x.x()), vy = _mm256_set1_ps(x.y()), vz = _mm256_set1_ps(x.z()),
                 vr = _mm256_set1_ps(rc2);
    __m256i index =
        _mm256_add_epi32(_mm256_set1_epi32(int32_t(b)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (uint32_t j = b; j < e; j += 8) {
        const __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(px + j), vx);
        const __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(py + j), vy);
        const __m256 dz = _mm256_sub_ps(_mm256_loadu_ps(pz + j), vz);
        const __m256 r2 =
            _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_add_ps(_mm256_mul_ps(dy, dy), _mm256_mul_ps(dz, dz)));
        auto mask = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(r2, vr, _CMP_LE_OQ)));
        if (e - j < 8)
            mask &= (1u << (e - j)) - 1u;
        const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompress.lanes[mask]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.kept.data() + nk),
                            _mm256_permutevar8x32_epi32(index, perm));
        _mm256_storeu_ps(s.r2.data() + nk, _mm256_permutevar8x32_ps(r2, perm));
        _mm256_storeu_ps(s.dx.data() + nk, _mm256_permutevar8x32_ps(dx, perm));
        _mm256_storeu_ps(s.dy.data() + nk, _mm256_permutevar8x32_ps(dy, perm));
        _mm256_storeu_ps(s.dz.data() + nk, _mm256_permutevar8x32_ps(dz, perm));
        nk += kCompress.count[mask];
        index = _mm256_add_epi32(index, _mm256_set1_epi32(8));
    }
    return nk;
}
#endif

/// ws = w for the surface neighbours, +0 for the others and when surface is empty (branch-free).
void surfaceWeights(CovarianceScratch::Lane& lane, size_t nk, std::span<const uint8_t> surface) {
    if (surface.empty()) {
        std::fill_n(lane.ws.begin(), nk, 0.0f);
        return;
    }
    for (size_t i = 0; i < nk; ++i) {
        const uint32_t keep = 0u - uint32_t(surface[lane.kept[i]] != 0);
        lane.ws[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(lane.w[i]) & keep);
    }
}

/// Writes the neighbours of x within rc (rc2 = rc^2) to scratch (keepRange*), growing it; returns
/// their number. The cells overlapping the box of x +- r_c (3-4 per axis), not forEachNeighbor's
/// ceil(r_c / cell) = 2 cells on each side (5 per axis, ~2.9x the candidates); cells whose particles
/// follow each other in the sorted order (x neighbours in a Morton brick) are tested as one range.
size_t keepNeighbours(const NeighborGrid& grid, const float* px, const float* py, const float* pz,
                      const Vec3f& x, float rc, float rc2, CovarianceScratch::Lane& scratch) {
    size_t nk = 0;
    uint32_t b0 = 0, e0 = 0; // the pending range
    auto keep = [&]() {
        if (scratch.kept.size() < nk + (e0 - b0) + 8) {
            const size_t cap = std::max(2 * scratch.kept.size(), nk + (e0 - b0) + 8);
            for (auto* v : {&scratch.r2, &scratch.w, &scratch.ws, &scratch.dx, &scratch.dy, &scratch.dz})
                v->resize(cap);
            scratch.kept.resize(cap);
        }
#if defined(__x86_64__) || defined(__i386__)
        if (kHasAvx2) {
            nk = keepRangeAvx2(px, py, pz, b0, e0, x, rc2, scratch, nk);
            return;
        }
#endif
        nk = keepRangeBaseline(px, py, pz, b0, e0, x, rc2, scratch, nk);
    };
    grid.forEachRangeInBox(x.array() - rc, x.array() + rc, [&](uint32_t b, uint32_t e) {
        if (b != e0) {
            if (e0 > b0)
                keep();
            b0 = b;
        }
        e0 = e;
        return true;
    });
    if (e0 > b0)
        keep();
    return nk;
}

/// Up to eight particles' neighbour sums, one particle per SIMD lane: each lane adds its own
/// terms in its kept order (the sums of the one-particle loop, bit for bit); a lane's padding
/// terms are +0 and leave its sums unchanged (a sum that starts at +0 is never -0).
struct MomentBatch {
    static constexpr size_t kLanes = 8;
    size_t lanes = 0, longest = 0;
    size_t count[kLanes] = {};
    NeighbourMoments moments[kLanes];
};

/// out[8 i + l] = rows[l][i] for i < n (n a multiple of 8): the lanes' values interleaved.
void interleaveBaseline(const float* const* rows, size_t n, float* out) {
    for (size_t i = 0; i < n; ++i)
        for (size_t l = 0; l < 8; ++l)
            out[8 * i + l] = rows[l][i];
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void interleaveAvx2(const float* const* rows, size_t n, float* out) {
    for (size_t i = 0; i < n; i += 8) {
        __m256 r[8];
        for (size_t l = 0; l < 8; ++l)
            r[l] = _mm256_loadu_ps(rows[l] + i);
        transpose8x8(r);
        for (size_t l = 0; l < 8; ++l)
            _mm256_storeu_ps(out + 8 * i + 8 * l, r[l]);
    }
}
#endif
void interleave(const float* const* rows, size_t n, float* out) {
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        return interleaveAvx2(rows, n, out);
#endif
    interleaveBaseline(rows, n, out);
}

/// The batch's lanes padded with zeros to a whole number of SIMD batches (lanes past b.lanes: all
/// zeros), then interleaved into scratch.lane*.
void interleaveBatch(MomentBatch& b, CovarianceScratch& scratch) {
    const size_t steps = (b.longest + 7) / 8 * 8;
    for (size_t l = 0; l < MomentBatch::kLanes; ++l) {
        CovarianceScratch::Lane& lane = scratch.lane[l];
        const size_t n = l < b.lanes ? b.count[l] : 0;
        for (auto* v : {&lane.w, &lane.ws, &lane.dx, &lane.dy, &lane.dz}) {
            if (v->size() < steps)
                v->resize(steps);
            std::fill(v->begin() + std::ptrdiff_t(n), v->begin() + std::ptrdiff_t(steps), 0.0f);
        }
    }
    using Field = std::vector<float> CovarianceScratch::Lane::*;
    const std::pair<Field, std::vector<float>*> fields[] = {{&CovarianceScratch::Lane::w, &scratch.laneW},
                                                            {&CovarianceScratch::Lane::ws, &scratch.laneWs},
                                                            {&CovarianceScratch::Lane::dx, &scratch.laneDx},
                                                            {&CovarianceScratch::Lane::dy, &scratch.laneDy},
                                                            {&CovarianceScratch::Lane::dz, &scratch.laneDz}};
    for (const auto& [field, out] : fields) {
        const float* rows[8];
        for (size_t l = 0; l < 8; ++l)
            rows[l] = (scratch.lane[l].*field).data();
        if (out->size() < 8 * steps)
            out->resize(8 * steps);
        interleave(rows, steps, out->data());
    }
    b.longest = steps;
}

/// The batch's sums: the first moments, then the second (each pass keeps its sums in registers).
[[gnu::always_inline]] inline void sumBatch(MomentBatch& b, const CovarianceScratch& scratch) {
    const F8 zero = {};
    F8 sw = zero, sws = zero, sdx = zero, sdy = zero, sdz = zero, ssx = zero, ssy = zero, ssz = zero;
    const float *pw = scratch.laneW.data(), *px = scratch.laneDx.data(), *py = scratch.laneDy.data(),
                *pz = scratch.laneDz.data(), *ps = scratch.laneWs.data();
    for (size_t i = 0; i < 8 * b.longest; i += 8) {
        F8 w, dx, dy, dz, ws;
        load8(w, pw + i);
        load8(dx, px + i);
        load8(dy, py + i);
        load8(dz, pz + i);
        load8(ws, ps + i);
        sw += w;
        sdx += w * dx;
        sdy += w * dy;
        sdz += w * dz;
        sws += ws;
        ssx += ws * dx;
        ssy += ws * dy;
        ssz += ws * dz;
    }
    F8 xx = zero, xy = zero, xz = zero, yy = zero, yz = zero, zz = zero;
    for (size_t i = 0; i < 8 * b.longest; i += 8) {
        F8 w, dx, dy, dz;
        load8(w, pw + i);
        load8(dx, px + i);
        load8(dy, py + i);
        load8(dz, pz + i);
        const F8 wx = w * dx; // w d.x() d.y() groups as (w d.x()) d.y()
        xx += wx * dx;
        xy += wx * dy;
        xz += wx * dz;
        yy += w * dy * dy;
        yz += w * dy * dz;
        zz += w * dz * dz;
    }
    for (size_t l = 0; l < b.lanes; ++l) {
        NeighbourMoments& m = b.moments[l];
        m.sw = sw[l];
        m.swSurface = sws[l];
        m.sd = Vec3f(sdx[l], sdy[l], sdz[l]);
        m.sdSurface = Vec3f(ssx[l], ssy[l], ssz[l]);
        m.sxx = xx[l];
        m.sxy = xy[l];
        m.sxz = xz[l];
        m.syy = yy[l];
        m.syz = yz[l];
        m.szz = zz[l];
    }
}

void sumBatchBaseline(MomentBatch& b, const CovarianceScratch& scratch) {
    sumBatch(b, scratch);
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void sumBatchAvx2(MomentBatch& b, const CovarianceScratch& scratch) {
    sumBatch(b, scratch);
}
#endif
void sumMoments(MomentBatch& b, const CovarianceScratch& scratch) {
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        return sumBatchAvx2(b, scratch);
#endif
    sumBatchBaseline(b, scratch);
}

/// The kernel centre's shift xbar_k - x_k: Eq. 6's mean mu (relative to x_k), or for a surface
/// particle the mean of its surface neighbours, times the smoothing, limited to shiftLimit.
Vec3f smoothingShift(const NeighbourMoments& m, const Vec3f& mu, bool onSurface,
                     const AnisotropySettings& s) {
    // Eq. 6 over the surface particles only: the mean of all neighbours of a surface particle lies
    // inside the fluid (half its neighbourhood is missing), which pulled the whole surface in by
    // ~0.9 r; the surface neighbours' mean lies in the surface layer.
    Vec3f shift = s.smoothing * (onSurface && m.swSurface > 0.0f ? Vec3f(m.sdSurface / m.swSurface) : mu);
    // At most shiftLimit (r): noise across the surface is a fraction of r, while a sparse
    // particle's mean can lie far away; the kernels stay near their particles, so a search by
    // particle position needs only R + r.
    const float shiftLength = shift.norm();
    if (shiftLength > s.shiftLimit)
        shift *= s.shiftLimit / shiftLength;
    return shift;
}

/// Eq. 5's covariance from the moments (inv = 1 / sum w, mu = the weighted mean offset).
Mat3f covarianceOf(const NeighbourMoments& m, float inv, const Vec3f& mu) {
    Mat3f C;
    C(0, 0) = inv * m.sxx - mu.x() * mu.x();
    C(0, 1) = C(1, 0) = inv * m.sxy - mu.x() * mu.y();
    C(0, 2) = C(2, 0) = inv * m.sxz - mu.x() * mu.z();
    C(1, 1) = inv * m.syy - mu.y() * mu.y();
    C(1, 2) = C(2, 1) = inv * m.syz - mu.y() * mu.z();
    C(2, 2) = inv * m.szz - mu.z() * mu.z();
    return C;
}

/// Raises max to at least v.
void atomicMax(std::atomic<float>& max, float v) {
    float cur = max.load();
    while (v > cur && !max.compare_exchange_weak(cur, v)) {
    }
}

} // namespace

int32_t AnisotropicKernels::assignSlots(const NeighborGrid& grid, std::span<const uint8_t> anisotropic,
                                        size_t n) {
    // Records: every particle of a grid cell holding an anisotropic particle (all when anisotropic
    // is empty), in sorted order, so that gather() reads a cell's kernels contiguously.
    slot.resize(n);
    int32_t m = 0;
    if (anisotropic.empty()) {
        for (size_t k = 0; k < n; ++k)
            slot[k] = m++;
    } else {
        for (size_t c = 0; c < grid.cellCount(); ++c) {
            const auto [b, e] = grid.cellRange(uint32_t(c));
            bool any = false;
            for (uint32_t k = b; k < e; ++k)
                any |= anisotropic[k] != 0;
            for (uint32_t k = b; k < e; ++k)
                slot[k] = any ? m++ : -1;
        }
    }
    for (auto* v : {&cx, &cy, &cz})
        v->resize(size_t(m) + AnisotropicCandidates::kLanes); // read in whole SIMD batches
    shape.resize(size_t(m));
    return m;
}

void AnisotropicKernels::setIsotropic(size_t o, float g, float a) {
    shape[o] = KernelShape{g, 0.0f, 0.0f, g, 0.0f, g, a, 0.0f};
}

bool AnisotropicKernels::setEllipsoid(size_t o, const Mat3f& C) {
    Eigen::SelfAdjointEigenSolver<Mat3f> es;
    es.computeDirect(C);
    const Vec3f ev = es.eigenvalues(); // ascending
    const float s1 = ev[2];
    if (!(s1 > 0.0f) || !std::isfinite(s1))
        return false;
    // Eq. 10: clamp the small axes to s1 / k_r; scaled so that the longest axis is R.
    const float R = s_.kernelRadius;
    Vec3f inverseAxis;
    for (int a = 0; a < 3; ++a)
        inverseAxis[a] = 1.0f / (R * std::max(ev[a], s1 / s_.kr) / s1);
    const Mat3f& Q = es.eigenvectors();
    const Mat3f G = Q * inverseAxis.asDiagonal() * Q.transpose();
    shape[o] = KernelShape{
        G(0, 0), G(0, 1), G(0, 2), G(1, 1), G(1, 2), G(2, 2), s_.particleVolume * kSigma * inverseAxis.prod(),
        0.0f};
    return true;
}

void AnisotropicKernels::compute(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                 std::span<const uint8_t> anisotropic, std::span<const uint8_t> surface,
                                 const AnisotropySettings& s,
                                 const std::function<CovarianceScratch&()>& scratchOfThread,
                                 std::array<const float*, 3> sortedArrays) {
    s_ = s;
    const size_t n = xs.size();
    xs_ = xs;
    assignSlots(grid, anisotropic, n);
    if (sortedArrays[0] && sortedArrays[1] && sortedArrays[2]) {
        px_ = sortedArrays[0];
        py_ = sortedArrays[1];
        pz_ = sortedArrays[2];
    } else {
        for (auto* v : {&ownX_, &ownY_, &ownZ_})
            v->resize(n + 8);
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 16384), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t k = r.begin(); k < r.end(); ++k) {
                ownX_[k] = xs[k].x();
                ownY_[k] = xs[k].y();
                ownZ_[k] = xs[k].z();
            }
        });
        px_ = ownX_.data();
        py_ = ownY_.data();
        pz_ = ownZ_.data();
    }
    const float R = s.kernelRadius, rc = s.covarianceRadius, V = s.particleVolume;
    isoG = 1.0f / R;
    isoAmp = V * kSigma * isoG * isoG * isoG;
    const float knG = 1.0f / (R * s.kn), knAmp = V * kSigma * knG * knG * knG;
    const float invRc = 1.0f / rc, rc2 = rc * rc;
    const bool surfaceOnly = !surface.empty() && s.smoothSurfaceOnly;
    std::atomic<uint64_t> count{0};
    std::atomic<float> maxShift{0.0f};
    // Chunks of 256: the surface particles, which do the work, cluster in the sorted order, and
    // small chunks keep two threads busy to the end (each particle's sums are its lane's alone).
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 256), [&](const tbb::blocked_range<size_t>& range) {
        uint64_t mine = 0;
        float shiftMax = 0.0f;
        CovarianceScratch& scratch = scratchOfThread();
        // Eq. 4-10 for a batch of particles whose neighbour sums ran in SIMD lanes.
        MomentBatch batch;
        size_t members[MomentBatch::kLanes];
        auto finish = [&]() {
            interleaveBatch(batch, scratch);
            sumMoments(batch, scratch);
            for (size_t l = 0; l < batch.lanes; ++l) {
                const size_t k = members[l];
                const NeighbourMoments& m = batch.moments[l];
                const Vec3f x = xs[k];
                const auto o = size_t(slot[k]);
                const float inv = m.sw > 0.0f ? 1.0f / m.sw : 0.0f;
                const Vec3f mu = inv * m.sd; // xw_k - x_k
                const Vec3f shift = smoothingShift(m, mu, surfaceOnly && surface[k], s);
                cx[o] = x.x() + shift.x();
                cy[o] = x.y() + shift.y();
                cz[o] = x.z() + shift.z();
                shiftMax = std::max(shiftMax, shift.norm());
                if (int(batch.count[l]) - 1 < s.nEps) // the particle itself is not a neighbour
                    setIsotropic(o, knG, knAmp);
                else if (!setEllipsoid(o, covarianceOf(m, inv, mu)))
                    setIsotropic(o, isoG, isoAmp);
            }
            batch.lanes = batch.longest = 0;
        };
        for (size_t k = range.begin(); k < range.end(); ++k) {
            if (slot[k] < 0)
                continue; // the isotropic kernel at x_k, read from the positions
            const Vec3f x = xs[k];
            if (!anisotropic.empty() && !anisotropic[k]) { // the isotropic kernel at x_k, stored
                const auto o = size_t(slot[k]);
                cx[o] = x.x();
                cy[o] = x.y();
                cz[o] = x.z();
                setIsotropic(o, isoG, isoAmp);
                continue;
            }
            ++mine;
            CovarianceScratch::Lane& lane = scratch.lane[batch.lanes];
            const size_t nk = keepNeighbours(grid, px_, py_, pz_, x, rc, rc2, lane);
            covarianceWeights(lane.r2.data(), nk, invRc, lane.w.data());
            surfaceWeights(lane, nk, surfaceOnly ? surface : std::span<const uint8_t>());
            members[batch.lanes] = k;
            batch.count[batch.lanes++] = nk;
            batch.longest = std::max(batch.longest, nk);
            if (batch.lanes == MomentBatch::kLanes)
                finish();
        }
        if (batch.lanes > 0)
            finish();
        count += mine;
        atomicMax(maxShift, shiftMax);
    });
    anisotropicCount = count.load();
    maxShift_ = maxShift.load();
}

namespace {
// Writes the i < m with (x, y, z)[i] in [lo, hi] to keep and their (x, y, z)[i] - origin to ox, oy,
// oz, in order; returns their number (each output has room for m + 8). Branch-free.
size_t insideBox(const float* x, const float* y, const float* z, size_t m, const Vec3f& lo, const Vec3f& hi,
                 const Vec3f& origin, uint32_t* keep, float* ox, float* oy, float* oz) {
    size_t nk = 0;
    for (size_t i = 0; i < m; ++i) {
        keep[nk] = uint32_t(i);
        ox[nk] = x[i] - origin.x();
        oy[nk] = y[i] - origin.y();
        oz[nk] = z[i] - origin.z();
        nk += (x[i] >= lo.x()) & (x[i] <= hi.x()) & (y[i] >= lo.y()) & (y[i] <= hi.y()) & (z[i] >= lo.z()) &
                      (z[i] <= hi.z())
                  ? 1
                  : 0;
    }
    return nk;
}
} // namespace

// One range of gather() without AVX2 (with it, gatherRangesAvx2 reads the ranges in lots).
template <bool kIds>
void AnisotropicKernels::gatherRange(uint32_t b, uint32_t e, const Vec3f& keepLo, const Vec3f& keepHi,
                                     const Vec3f& origin, AnisotropicCandidates& out,
                                     std::vector<uint32_t>* ids) const {
    const size_t n = e - b;
    out.reserveMore(n);
    if constexpr (kIds)
        if (ids->size() < out.count + n)
            ids->resize(std::max(2 * ids->size(), out.count + n));
    size_t c = out.count;
    // In chunks: the kept particles and their centres first (branch-free), then their shapes.
    constexpr size_t kChunk = 64;
    uint32_t keep[kChunk + 8];
    const int32_t s0 = slot[b];
    const KernelShape iso{isoG, 0.0f, 0.0f, isoG, 0.0f, isoG, isoAmp, 0.0f};
    for (size_t i0 = 0; i0 < n; i0 += kChunk) {
        const size_t m = std::min(kChunk, n - i0);
        size_t nk = 0;
        if (s0 >= 0) { // a cell with records: consecutive slots
            const size_t s = size_t(s0) + i0;
            nk = insideBox(cx.data() + s, cy.data() + s, cz.data() + s, m, keepLo, keepHi, origin, keep,
                           out.x.data() + c, out.y.data() + c, out.z.data() + c);
            for (size_t k = 0; k < nk; ++k, ++c) {
                out.shape[c] = shape[s + keep[k]];
                if constexpr (kIds)
                    (*ids)[c] = b + uint32_t(i0 + keep[k]);
            }
        } else {                     // isotropic kernels at the particles
            const size_t f = b + i0; // px_, py_, pz_ hold xs_ (the centres)
            nk = insideBox(px_ + f, py_ + f, pz_ + f, m, keepLo, keepHi, origin, keep, out.x.data() + c,
                           out.y.data() + c, out.z.data() + c);
            for (size_t k = 0; k < nk; ++k, ++c) {
                out.shape[c] = iso;
                if constexpr (kIds)
                    (*ids)[c] = b + uint32_t(i0 + keep[k]);
            }
        }
    }
    out.count = c;
}

#if defined(__x86_64__) || defined(__i386__)
namespace {
/// Sorted particles [b, e), their centres at cx + s0 (records) or px + b (s0 < 0).
struct KernelRange {
    uint32_t b, e;
    int32_t s0;
};
struct KernelSource {
    const float *cx, *cy, *cz;
    const KernelShape* shape;
    const float *px, *py, *pz;
    KernelShape iso;
};
// gatherRange over several ranges in one AVX2 pass, eight particles at a time (the last batch of a
// range masked): the same tests (insideBox's), the same kernels in the same order. out has room
// for its count plus the ranges' particles plus a batch, ids (kIds) as well.
template <bool kIds>
[[gnu::target("avx2")]] size_t gatherRangesAvx2(const KernelSource& src, const KernelRange* ranges, size_t nr,
                                                const Vec3f& lo, const Vec3f& hi, const Vec3f& origin,
                                                AnisotropicCandidates& out, size_t c, uint32_t* ids) {
    const __m256 lx = _mm256_set1_ps(lo.x()), ly = _mm256_set1_ps(lo.y()), lz = _mm256_set1_ps(lo.z());
    const __m256 hx = _mm256_set1_ps(hi.x()), hy = _mm256_set1_ps(hi.y()), hz = _mm256_set1_ps(hi.z());
    const __m256 ox = _mm256_set1_ps(origin.x()), oy = _mm256_set1_ps(origin.y()),
                 oz = _mm256_set1_ps(origin.z());
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (size_t q = 0; q < nr; ++q) {
        const KernelRange& r = ranges[q];
        const bool records = r.s0 >= 0;
        const size_t f = records ? size_t(r.s0) : r.b;
        const float *x = (records ? src.cx : src.px) + f, *y = (records ? src.cy : src.py) + f,
                    *z = (records ? src.cz : src.pz) + f;
        const size_t n = r.e - r.b;
        for (size_t i = 0; i < n; i += 8) {
            const __m256 vx = _mm256_loadu_ps(x + i), vy = _mm256_loadu_ps(y + i),
                         vz = _mm256_loadu_ps(z + i);
            const __m256 in = _mm256_and_ps(
                _mm256_and_ps(
                    _mm256_and_ps(_mm256_cmp_ps(vx, lx, _CMP_GE_OQ), _mm256_cmp_ps(vx, hx, _CMP_LE_OQ)),
                    _mm256_and_ps(_mm256_cmp_ps(vy, ly, _CMP_GE_OQ), _mm256_cmp_ps(vy, hy, _CMP_LE_OQ))),
                _mm256_and_ps(_mm256_cmp_ps(vz, lz, _CMP_GE_OQ), _mm256_cmp_ps(vz, hz, _CMP_LE_OQ)));
            const unsigned tail = n - i < 8 ? (1u << (n - i)) - 1u : 0xFFu;
            const unsigned mask = unsigned(_mm256_movemask_ps(in)) & tail;
            if (!mask)
                continue;
            const uint32_t* keep = kCompress.lanes[mask];
            const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(keep));
            _mm256_storeu_ps(out.x.data() + c, _mm256_permutevar8x32_ps(_mm256_sub_ps(vx, ox), perm));
            _mm256_storeu_ps(out.y.data() + c, _mm256_permutevar8x32_ps(_mm256_sub_ps(vy, oy), perm));
            _mm256_storeu_ps(out.z.data() + c, _mm256_permutevar8x32_ps(_mm256_sub_ps(vz, oz), perm));
            if constexpr (kIds) {
                const __m256i j = _mm256_add_epi32(_mm256_set1_epi32(int32_t(r.b + i)), lanes);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(ids + c),
                                    _mm256_permutevar8x32_epi32(j, perm));
            }
            const unsigned cnt = kCompress.count[mask];
            if (records)
                for (unsigned k = 0; k < cnt; ++k)
                    out.shape[c + k] = src.shape[f + i + keep[k]];
            else
                for (unsigned k = 0; k < cnt; ++k)
                    out.shape[c + k] = src.iso;
            c += cnt;
        }
    }
    return c;
}
} // namespace
#endif

void AnisotropicKernels::gather(const NeighborGrid& grid, const Vec3f& lo, const Vec3f& hi,
                                const Vec3f& keepLo, const Vec3f& keepHi, const Vec3f& origin,
                                AnisotropicCandidates& out, std::vector<uint32_t>* ids) const {
    // Cells whose particles follow each other in the sorted order, both with records (then at
    // consecutive slots) or both without, are read as one range.
    uint32_t b0 = 0, e0 = 0; // the pending range
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2) { // the ranges in lots, each read in one call
        constexpr size_t kLot = 64;
        KernelRange lot[kLot];
        size_t nr = 0, particles = 0;
        const KernelSource src{
            cx.data(), cy.data(), cz.data(), shape.data(),
            px_,       py_,       pz_,       KernelShape{isoG, 0.0f, 0.0f, isoG, 0.0f, isoG, isoAmp, 0.0f}};
        auto read = [&]() {
            out.reserveMore(particles);
            if (ids && ids->size() < out.count + particles + AnisotropicCandidates::kLanes)
                ids->resize(std::max(2 * ids->size(), out.count + particles + AnisotropicCandidates::kLanes));
            out.count =
                ids ? gatherRangesAvx2<true>(src, lot, nr, keepLo, keepHi, origin, out, out.count,
                                             ids->data())
                    : gatherRangesAvx2<false>(src, lot, nr, keepLo, keepHi, origin, out, out.count, nullptr);
            nr = particles = 0;
        };
        grid.forEachRangeInBox(lo, hi, [&](uint32_t b, uint32_t e) {
            if (b != e0 || e0 == b0 || (slot[b] < 0) != (slot[b0] < 0)) {
                if (e0 != b0) {
                    lot[nr++] = KernelRange{b0, e0, slot[b0]};
                    particles += e0 - b0;
                    if (nr == kLot)
                        read();
                }
                b0 = b;
            }
            e0 = e;
            return true;
        });
        if (e0 != b0) {
            lot[nr++] = KernelRange{b0, e0, slot[b0]};
            particles += e0 - b0;
        }
        if (nr)
            read();
        return;
    }
#endif
    auto flush = [&]() {
        if (e0 == b0)
            return;
        if (ids)
            gatherRange<true>(b0, e0, keepLo, keepHi, origin, out, ids);
        else
            gatherRange<false>(b0, e0, keepLo, keepHi, origin, out, nullptr);
    };
    grid.forEachRangeInBox(lo, hi, [&](uint32_t b, uint32_t e) {
        if (b != e0 || e0 == b0 || (slot[b] < 0) != (slot[b0] < 0)) {
            flush();
            b0 = b;
        }
        e0 = e;
        return true;
    });
    flush();
}

namespace {
// The plain test, branch-free; index i is reported as ids[i], or first + i without ids.
size_t keepWithinBaseline(const float* x, const float* y, const float* z, const uint32_t* ids, uint32_t first,
                          size_t n, float cx, float cy, float cz, float r2, uint32_t* out) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const float dx = x[i] - cx, dy = y[i] - cy, dz = z[i] - cz;
        out[k] = ids ? ids[i] : first + uint32_t(i);
        k += dx * dx + dy * dy + dz * dz <= r2 ? 1 : 0;
    }
    return k;
}
#if defined(__x86_64__) || defined(__i386__)

// Eight at a time, the kept lanes packed by a permutation (no branch per kept point); the same
// float operations as the baseline (AVX2 without FMA), so the same points are kept.
[[gnu::target("avx2")]] size_t keepWithinAvx2(const float* x, const float* y, const float* z,
                                              const uint32_t* ids, size_t n, float cx, float cy, float cz,
                                              float r2, uint32_t* out) {
    const __m256 vx = _mm256_set1_ps(cx), vy = _mm256_set1_ps(cy), vz = _mm256_set1_ps(cz),
                 vr = _mm256_set1_ps(r2);
    const __m256i step = _mm256_set1_epi32(8);
    __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    size_t k = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(x + i), vx);
        const __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(y + i), vy);
        const __m256 dz = _mm256_sub_ps(_mm256_loadu_ps(z + i), vz);
        const __m256 d2 =
            _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)), _mm256_mul_ps(dz, dz));
        const auto mask = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(d2, vr, _CMP_LE_OQ)));
        const __m256i v = ids ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ids + i)) : index;
        const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompress.lanes[mask]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), _mm256_permutevar8x32_epi32(v, perm));
        k += kCompress.count[mask];
        index = _mm256_add_epi32(index, step);
    }
    return k + keepWithinBaseline(x + i, y + i, z + i, ids ? ids + i : nullptr, uint32_t(i), n - i, cx, cy,
                                  cz, r2, out + k);
}
#endif

// keepWithinBaseline that also writes the kept differences (x, y, z)[i] - c to ox, oy, oz.
size_t keepOffsetsBaseline(const float* x, const float* y, const float* z, const uint32_t* ids,
                           uint32_t first, size_t n, float cx, float cy, float cz, float r2, uint32_t* out,
                           float* ox, float* oy, float* oz) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const float dx = x[i] - cx, dy = y[i] - cy, dz = z[i] - cz;
        out[k] = ids ? ids[i] : first + uint32_t(i);
        ox[k] = dx;
        oy[k] = dy;
        oz[k] = dz;
        k += dx * dx + dy * dy + dz * dz <= r2 ? 1 : 0;
    }
    return k;
}
#if defined(__x86_64__) || defined(__i386__)
// keepWithinAvx2 that also writes the kept differences (ox, oy, oz: room for n + 8 each). The last
// batch is masked: reads up to seven values past n, writes up to seven past the kept.
[[gnu::target("avx2")]] size_t keepOffsetsAvx2(const float* x, const float* y, const float* z,
                                               const uint32_t* ids, size_t n, float cx, float cy, float cz,
                                               float r2, uint32_t* out, float* ox, float* oy, float* oz) {
    const __m256 vx = _mm256_set1_ps(cx), vy = _mm256_set1_ps(cy), vz = _mm256_set1_ps(cz),
                 vr = _mm256_set1_ps(r2);
    size_t k = 0;
    for (size_t i = 0; i < n; i += 8) {
        const __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(x + i), vx);
        const __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(y + i), vy);
        const __m256 dz = _mm256_sub_ps(_mm256_loadu_ps(z + i), vz);
        const __m256 d2 =
            _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)), _mm256_mul_ps(dz, dz));
        k += keepBatchAvx2(_mm256_cmp_ps(d2, vr, _CMP_LE_OQ), i, n, ids, dx, dy, dz, out + k, ox + k, oy + k,
                           oz + k);
    }
    return k;
}
#endif
} // namespace

namespace {
size_t keepNearBaseline(const float* a, const float* x, const float* y, const float* z, const uint32_t* ids,
                        uint32_t first, size_t n, float c, float r, uint32_t* outIds, float* ox, float* oy,
                        float* oz) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        outIds[k] = ids ? ids[i] : first + uint32_t(i);
        ox[k] = x[i];
        oy[k] = y[i];
        oz[k] = z[i];
        k += std::abs(a[i] - c) <= r ? 1 : 0;
    }
    return k;
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] size_t keepNearAvx2(const float* a, const float* x, const float* y, const float* z,
                                            const uint32_t* ids, size_t n, float c, float r, uint32_t* outIds,
                                            float* ox, float* oy, float* oz) {
    const __m256 vc = _mm256_set1_ps(c), vr = _mm256_set1_ps(r), sign = _mm256_set1_ps(-0.0f);
    size_t k = 0;
    for (size_t i = 0; i < n; i += 8) {
        const __m256 d = _mm256_andnot_ps(sign, _mm256_sub_ps(_mm256_loadu_ps(a + i), vc)); // |a - c|
        k +=
            keepBatchAvx2(_mm256_cmp_ps(d, vr, _CMP_LE_OQ), i, n, ids, _mm256_loadu_ps(x + i),
                          _mm256_loadu_ps(y + i), _mm256_loadu_ps(z + i), outIds + k, ox + k, oy + k, oz + k);
    }
    return k;
}
#endif
} // namespace

namespace {
size_t keepNearLineBaseline(const float* a, const float* b, const float* x, const float* y, const float* z,
                            const uint32_t* ids, uint32_t first, size_t n, float ca, float cb, float r2,
                            uint32_t* outIds, float* ox, float* oy, float* oz) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const float da = a[i] - ca, db = b[i] - cb;
        outIds[k] = ids ? ids[i] : first + uint32_t(i);
        ox[k] = x[i];
        oy[k] = y[i];
        oz[k] = z[i];
        k += da * da + db * db <= r2 ? 1 : 0;
    }
    return k;
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] size_t keepNearLineAvx2(const float* a, const float* b, const float* x,
                                                const float* y, const float* z, const uint32_t* ids, size_t n,
                                                float ca, float cb, float r2, uint32_t* outIds, float* ox,
                                                float* oy, float* oz) {
    const __m256 va = _mm256_set1_ps(ca), vb = _mm256_set1_ps(cb), vr = _mm256_set1_ps(r2);
    size_t k = 0;
    for (size_t i = 0; i < n; i += 8) {
        const __m256 da = _mm256_sub_ps(_mm256_loadu_ps(a + i), va);
        const __m256 db = _mm256_sub_ps(_mm256_loadu_ps(b + i), vb);
        const __m256 d2 = _mm256_add_ps(_mm256_mul_ps(da, da), _mm256_mul_ps(db, db));
        k +=
            keepBatchAvx2(_mm256_cmp_ps(d2, vr, _CMP_LE_OQ), i, n, ids, _mm256_loadu_ps(x + i),
                          _mm256_loadu_ps(y + i), _mm256_loadu_ps(z + i), outIds + k, ox + k, oy + k, oz + k);
    }
    return k;
}
#endif
} // namespace

size_t keepNearLine(const float* a, const float* b, const float* x, const float* y, const float* z,
                    const uint32_t* ids, size_t n, float ca, float cb, float r2, uint32_t* outIds, float* ox,
                    float* oy, float* oz) {
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        return keepNearLineAvx2(a, b, x, y, z, ids, n, ca, cb, r2, outIds, ox, oy, oz);
#endif
    return keepNearLineBaseline(a, b, x, y, z, ids, 0, n, ca, cb, r2, outIds, ox, oy, oz);
}

size_t keepNear(const float* a, const float* x, const float* y, const float* z, const uint32_t* ids, size_t n,
                float c, float r, uint32_t* outIds, float* ox, float* oy, float* oz) {
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        return keepNearAvx2(a, x, y, z, ids, n, c, r, outIds, ox, oy, oz);
#endif
    return keepNearBaseline(a, x, y, z, ids, 0, n, c, r, outIds, ox, oy, oz);
}

size_t keepWithin(const float* x, const float* y, const float* z, const uint32_t* ids, size_t n,
                  const Vec3f& c, float r2, uint32_t* out) {
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        return keepWithinAvx2(x, y, z, ids, n, c.x(), c.y(), c.z(), r2, out);
#endif
    return keepWithinBaseline(x, y, z, ids, 0, n, c.x(), c.y(), c.z(), r2, out);
}

namespace {
struct Kernel {
    Vec3f c;
    float g00, g01, g02, g11, g12, g22, amp;
};
Kernel kernelOf(const AnisotropicKernels& k, size_t j) {
    const int32_t s = k.slot[j];
    if (s < 0)
        return {k.centre(j), k.isoG, 0.0f, 0.0f, k.isoG, 0.0f, k.isoG, k.isoAmp};
    const auto o = size_t(s);
    const KernelShape& g = k.shape[o];
    return {k.centre(j), g.g00, g.g01, g.g02, g.g11, g.g12, g.g22, g.amp};
}
} // namespace

float AnisotropicKernels::contribution(size_t j, const Vec3f& x) const {
    const Kernel k = kernelOf(*this, j);
    const Vec3f d = x - k.c;
    const Vec3f u(k.g00 * d.x() + k.g01 * d.y() + k.g02 * d.z(),
                  k.g01 * d.x() + k.g11 * d.y() + k.g12 * d.z(),
                  k.g02 * d.x() + k.g12 * d.y() + k.g22 * d.z());
    const float q = 1.0f - u.squaredNorm();
    return q > 0.0f ? k.amp * q * q * q : 0.0f;
}

void AnisotropicKernels::addWithGradient(size_t j, const Vec3f& x, float& f, Vec3f& grad) const {
    const Kernel k = kernelOf(*this, j);
    const Vec3f d = x - k.c;
    const Vec3f u(k.g00 * d.x() + k.g01 * d.y() + k.g02 * d.z(),
                  k.g01 * d.x() + k.g11 * d.y() + k.g12 * d.z(),
                  k.g02 * d.x() + k.g12 * d.y() + k.g22 * d.z());
    const float q = 1.0f - u.squaredNorm();
    if (q <= 0.0f)
        return;
    f += k.amp * q * q * q;
    // d/dx (1 - |G d|^2)^3 = -6 (1 - |G d|^2)^2 G^T G d, G symmetric.
    const Vec3f Gu(k.g00 * u.x() + k.g01 * u.y() + k.g02 * u.z(),
                   k.g01 * u.x() + k.g11 * u.y() + k.g12 * u.z(),
                   k.g02 * u.x() + k.g12 * u.y() + k.g22 * u.z());
    grad -= (6.0f * k.amp * q * q) * Gu;
}

size_t AnisotropicKernels::bytes() const {
    return shape.capacity() * sizeof(KernelShape) +
           (cx.capacity() + cy.capacity() + cz.capacity() + ownX_.capacity() + ownY_.capacity() +
            ownZ_.capacity()) *
               sizeof(float) +
           slot.capacity() * sizeof(int32_t);
}

void AnisotropicCandidates::grow(size_t need) {
    if (x.size() >= need)
        return;
    const size_t cap = std::max(need, 2 * x.size());
    for (auto* v : {&x, &y, &z, &g00, &g01, &g02, &g11, &g12, &g22, &amp})
        v->resize(cap);
    shape.resize(cap);
}

namespace {
// The shapes of src[pick[k]], k < n, as seven arrays (a transpose: the values are moved, not
// computed). Writes whole batches of eight: up to seven values past n.
void transposeShapesBaseline(const KernelShape* src, const uint32_t* pick, size_t n, float* const* out) {
    for (size_t k = 0; k < n; ++k) {
        const KernelShape& g = src[pick[k]];
        out[0][k] = g.g00;
        out[1][k] = g.g01;
        out[2][k] = g.g02;
        out[3][k] = g.g11;
        out[4][k] = g.g12;
        out[5][k] = g.g22;
        out[6][k] = g.amp;
    }
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void transposeShapesAvx2(const KernelShape* src, const uint32_t* pick, size_t n,
                                                 float* const* out) {
    for (size_t k = 0; k < n; k += 8) {
        __m256 r[8]; // rows are kernels, columns the shape's values (the eighth is padding)
        for (size_t i = 0; i < 8; ++i)
            r[i] = k + i < n ? _mm256_load_ps(&src[pick[k + i]].g00) : _mm256_setzero_ps();
        transpose8x8(r);
        for (size_t c = 0; c < 7; ++c)
            _mm256_storeu_ps(out[c] + k, r[c]);
    }
}
#endif
} // namespace

void AnisotropicCandidates::assignFrom(const AnisotropicCandidates& o, const uint32_t* pick, size_t n,
                                       const Vec3f& shift) {
    clear();
    reserveMore(n);
    for (size_t k = 0; k < n; ++k) {
        const uint32_t i = pick[k];
        x[k] = o.x[i] - shift.x();
        y[k] = o.y[i] - shift.y();
        z[k] = o.z[i] - shift.z();
    }
    float* const out[7] = {g00.data(), g01.data(), g02.data(), g11.data(),
                           g12.data(), g22.data(), amp.data()};
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        transposeShapesAvx2(o.shape.data(), pick, n, out);
    else
#endif
        transposeShapesBaseline(o.shape.data(), pick, n, out);
    count = n;
    seal();
}

size_t AnisotropicCandidates::assignWithin(const AnisotropicCandidates& o, const float* px, const float* py,
                                           const float* pz, const uint32_t* ids, size_t n, const Vec3f& c,
                                           float r2, uint32_t* kept) {
    clear();
    reserveMore(n);
    size_t m;
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        m = keepOffsetsAvx2(px, py, pz, ids, n, c.x(), c.y(), c.z(), r2, kept, x.data(), y.data(), z.data());
    else
#endif
        m = keepOffsetsBaseline(px, py, pz, ids, 0, n, c.x(), c.y(), c.z(), r2, kept, x.data(), y.data(),
                                z.data());
    float* const out[7] = {g00.data(), g01.data(), g02.data(), g11.data(),
                           g12.data(), g22.data(), amp.data()};
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        transposeShapesAvx2(o.shape.data(), kept, m, out);
    else
#endif
        transposeShapesBaseline(o.shape.data(), kept, m, out);
    count = m;
    seal();
    return m;
}

void AnisotropicCandidates::seal() {
    // A whole batch of zeros from count on (q = 1, weight 0): covers the padding up to padded().
    grow(count + kLanes);
    for (auto* v : {&x, &y, &z, &g00, &g01, &g02, &g11, &g12, &g22, &amp})
        std::fill_n(v->data() + count, kLanes, 0.0f);
}

size_t AnisotropicCandidates::bytes() const {
    return 10 * x.capacity() * sizeof(float) + shape.capacity() * sizeof(KernelShape);
}

} // namespace octo
