#include "surface/SurfaceDetection_Marrone2010.h"

#include "common/SymmetricEigen3.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

namespace octo {

namespace {

// Eight float lanes (GCC/Clang vector extension): one AVX register, or two SSE registers on the
// baseline x86-64 target. Both targets run the same lane arithmetic in the same order (no FMA),
// so lambda does not depend on the CPU.
using F8 = float __attribute__((vector_size(32)));
using I8 = int32_t __attribute__((vector_size(32)));
constexpr uint32_t kLanes = 8;

// By reference / out-parameter: passing F8 by value would change the ABI between the two targets.
inline void load8(F8& v, const float* p) {
    std::memcpy(&v, p, sizeof v);
}
inline void store8(float* p, const F8& v) {
    std::memcpy(p, &v, sizeof v);
}
inline float total(const F8& v) {
    float t = 0.0f;
    for (uint32_t l = 0; l < kLanes; ++l)
        t += v[l];
    return t;
}
// For each 8-bit lane mask, the lanes whose bit is set, in order: shuffling a block by it moves
// the kept lanes to the front.
constexpr std::array<std::array<int32_t, kLanes>, 256> compactionOrders() {
    std::array<std::array<int32_t, kLanes>, 256> orders{};
    for (uint32_t bits = 0; bits < 256; ++bits) {
        uint32_t k = 0;
        for (uint32_t l = 0; l < kLanes; ++l)
            if (bits >> l & 1)
                orders[bits][k++] = int32_t(l);
    }
    return orders;
}
alignas(32) constexpr auto kCompactionOrders = compactionOrders();

// What differs between the baseline x86-64 target and AVX2: the instructions, never the result.
// GCC lowers comparisons of 32-byte vectors to scalar code without AVX, so the baseline splits
// them (and max, square root) into SSE halves itself.
//   atLeast(v, floor): v = max(v, floor) per lane (SSE max semantics: floor where v <= floor).
//   lanesBelow(v, bound): bit l set where v[l] < bound[l].
//   squareRoot(v): IEEE square root per lane (GCC has no vector-extension square root and does
//     not vectorise sqrtf, errno).
//   keepLanes(bits, blocks, n, out): writes the lanes of blocks[0..n) whose bit is set, in
//     order, to out[a][0..); returns their count. out may be written up to kLanes floats on.
struct BaselineTarget {
#if defined(__SSE__)
    using F4 = float __attribute__((vector_size(16)));
    // Halves by copy: GCC keeps each half in its SSE register (its shufflevector join went
    // through the stack lane by lane and stalled store forwarding).
    static F4 low(const F8& v) {
        F4 half;
        std::memcpy(&half, &v, sizeof half);
        return half;
    }
    static F4 high(const F8& v) {
        F4 half;
        std::memcpy(&half, reinterpret_cast<const char*>(&v) + sizeof half, sizeof half);
        return half;
    }
    static void join(F8& v, const F4& lo, const F4& hi) {
        std::memcpy(&v, &lo, sizeof lo);
        std::memcpy(reinterpret_cast<char*>(&v) + sizeof lo, &hi, sizeof hi);
    }

    static void atLeast(F8& v, const F8& floor) {
        join(v, __builtin_ia32_maxps(low(v), low(floor)), __builtin_ia32_maxps(high(v), high(floor)));
    }
    static uint32_t lanesBelow(const F8& v, const F8& bound) {
        return uint32_t(__builtin_ia32_movmskps(__builtin_ia32_cmpltps(low(v), low(bound)))) |
               uint32_t(__builtin_ia32_movmskps(__builtin_ia32_cmpltps(high(v), high(bound)))) << 4;
    }
    static void squareRoot(F8& v) {
        join(v, __builtin_ia32_sqrtps(low(v)), __builtin_ia32_sqrtps(high(v)));
    }
#else
    static void atLeast(F8& v, const F8& floor) {
        for (uint32_t l = 0; l < kLanes; ++l)
            v[l] = v[l] > floor[l] ? v[l] : floor[l];
    }
    static uint32_t lanesBelow(const F8& v, const F8& bound) {
        uint32_t bits = 0;
        for (uint32_t l = 0; l < kLanes; ++l)
            bits |= uint32_t(v[l] < bound[l]) << l;
        return bits;
    }
    static void squareRoot(F8& v) {
        for (uint32_t l = 0; l < kLanes; ++l)
            v[l] = std::sqrt(v[l]);
    }
#endif
    // A copy per kept lane: SSE2 has no variable lane permute (GCC lowers the generic shuffle
    // lane by lane through memory).
    static uint32_t keepLanes(uint32_t bits, const F8 (&blocks)[4], int n, float* const (&out)[4]) {
        uint32_t k = 0;
        for (; bits; bits &= bits - 1, ++k) {
            const uint32_t l = uint32_t(std::countr_zero(bits));
            for (int a = 0; a < n; ++a)
                out[a][k] = blocks[a][l];
        }
        return k;
    }
};
#if defined(__x86_64__) || defined(__i386__)
// Not always_inline (the bodies that call these are not AVX2 functions until they are inlined
// into one); GCC inlines them into the AVX2 entry points.
struct Avx2Target {
    [[gnu::target("avx2")]] static void atLeast(F8& v, const F8& floor) {
        v = (F8)_mm256_max_ps((__m256)v, (__m256)floor);
    }
    [[gnu::target("avx2")]] static uint32_t lanesBelow(const F8& v, const F8& bound) {
        return uint32_t(_mm256_movemask_ps(_mm256_cmp_ps((__m256)v, (__m256)bound, _CMP_LT_OQ)));
    }
    [[gnu::target("avx2")]] static void squareRoot(F8& v) { v = (F8)_mm256_sqrt_ps((__m256)v); }
    // One permute per block (vpermps) moves the kept lanes to the front, stored whole. The intrinsic
    // rather than GCC's __builtin_shuffle, which clang does not have (same instruction).
    [[gnu::target("avx2")]] static uint32_t keepLanes(uint32_t bits, const F8 (&blocks)[4], int n,
                                                      float* const (&out)[4]) {
        I8 order;
        std::memcpy(&order, kCompactionOrders[bits].data(), sizeof order);
        for (int a = 0; a < n; ++a)
            store8(out[a], (F8)_mm256_permutevar8x32_ps((__m256)blocks[a], (__m256i)order));
        return uint32_t(std::popcount(bits));
    }
};
#endif

// The particle positions in sorted order as structure of arrays (one copy per call), so a
// cell's candidates are read 8 at a time from contiguous sorted-index ranges.
struct SortedPositions {
    std::vector<float> x, y, z;
};

// Candidates of one grid cell's particles: those of the 27 cells around it that lie within h of
// the box of the cell's particles (the rest, about 70 % on a lattice, are beyond h of every one
// of them), with their values (V_j in the L pass). The count is padded to whole 8-lane
// blocks with far-away points of zero value, which add exactly 0 to every kernel sum, so the
// per-particle sums run over all candidates without a per-candidate test or compaction.
struct Candidates {
    std::vector<float> x, y, z, v;
    std::vector<std::pair<uint32_t, uint32_t>> ranges; // merged sorted-index ranges of the 27 cells
    uint32_t count = 0;                                // padded to a multiple of kLanes
    size_t bytes() const {
        return (x.capacity() + y.capacity() + z.capacity() + v.capacity()) * sizeof(float) +
               ranges.capacity() * sizeof(ranges[0]);
    }
};
} // namespace

struct SurfaceDetection_Marrone2010::Workspace::Impl {
    tbb::enumerable_thread_specific<Candidates> candidates;
    SortedPositions positions;
    std::vector<float> volumes; // V_j = m / rho_j per sorted particle
};

SurfaceDetection_Marrone2010::Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}

std::array<const float*, 3> SurfaceDetection_Marrone2010::Workspace::sortedPositions() const {
    return {impl_->positions.x.data(), impl_->positions.y.data(), impl_->positions.z.data()};
}
SurfaceDetection_Marrone2010::Workspace::~Workspace() = default;
size_t SurfaceDetection_Marrone2010::Workspace::bytes() const {
    const SortedPositions& p = impl_->positions;
    size_t b = (p.x.capacity() + p.y.capacity() + p.z.capacity() + impl_->volumes.capacity()) * sizeof(float);
    for (const Candidates& c : impl_->candidates)
        b += c.bytes();
    return b;
}

namespace {

// kLanes spare floats at the end: candidate ranges are read in whole blocks (the lanes past a
// range are masked out).
void copySorted(std::span<const Vec3f> xs, SortedPositions& p) {
    p.x.resize(xs.size() + kLanes);
    p.y.resize(xs.size() + kLanes);
    p.z.resize(xs.size() + kLanes);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, xs.size(), 16384),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t j = r.begin(); j < r.end(); ++j) {
                              p.x[j] = xs[j].x();
                              p.y[j] = xs[j].y();
                              p.z[j] = xs[j].z();
                          }
                      });
}

// What a pass needs to gather a cell's candidates. The arrays have kLanes readable floats past
// the last particle, so ranges are read in whole blocks.
struct Sources {
    const NeighborGrid& grid;
    const SortedPositions& positions;
    const float* values; // per sorted particle, or null (no values needed)
    float h;
};

// Sorted-index ranges of the 27 cells around cell [b, e), contiguous ones merged (cells are in
// Z-order within bricks, so neighbours in x often are).
void candidateRanges(const Sources& src, uint32_t b, Candidates& c) {
    const SortedPositions& p = src.positions;
    c.ranges.clear();
    uint32_t m = 0;
    src.grid.forEachCandidateRange(Vec3f(p.x[b], p.y[b], p.z[b]), src.h, [&](uint32_t rb, uint32_t re) {
        if (!c.ranges.empty() && c.ranges.back().second == rb)
            c.ranges.back().second = re;
        else
            c.ranges.emplace_back(rb, re);
        m += re - rb;
    });
    if (c.x.size() < m + kLanes) { // room for the padding; grown rarely
        const size_t capacity = 2 * m + kLanes;
        c.x.resize(capacity);
        c.y.resize(capacity);
        c.z.resize(capacity);
        c.v.resize(capacity);
    }
}

// Appends the candidates of [rb, re) that are within h of the box [lo, hi] to c (from c.count),
// 8 at a time: the distance test gives a lane mask, and only the set lanes are copied. The test
// is conservative: lo <= x_i <= hi and rounding is monotonic, so the computed box distance never
// exceeds the computed |x_i - x_j|; a candidate it drops has |x_i - x_j|^2 >= h^2 for every
// particle i of the cell, as the per-particle test had it.
template <class Target>
[[gnu::always_inline]] inline void appendNearBox(const Sources& src, uint32_t rb, uint32_t re,
                                                 const F8 (&lo)[3], const F8 (&hi)[3], Candidates& c) {
    const SortedPositions& p = src.positions;
    const F8 zero = {}, h2 = zero + src.h * src.h;
    const int arrays = src.values ? 4 : 3; // positions, and values when there are
    uint32_t k = c.count;
    for (uint32_t j0 = rb; j0 < re; j0 += kLanes) {
        F8 block[4]; // x, y, z, value
        load8(block[0], p.x.data() + j0);
        load8(block[1], p.y.data() + j0);
        load8(block[2], p.z.data() + j0);
        if (src.values)
            load8(block[3], src.values + j0);
        // Distance to the box per axis: max(lo - p, 0) + max(p - hi, 0) (one of them is 0).
        F8 e[3];
        for (int a = 0; a < 3; ++a) {
            F8 below = lo[a] - block[a], above = block[a] - hi[a];
            Target::atLeast(below, zero);
            Target::atLeast(above, zero);
            e[a] = below + above;
        }
        uint32_t bits = Target::lanesBelow((e[0] * e[0] + e[1] * e[1]) + e[2] * e[2], h2);
        if (re - j0 < kLanes)
            bits &= (1u << (re - j0)) - 1u;
        // The arrays have a block of room past the count.
        float* const out[4] = {c.x.data() + k, c.y.data() + k, c.z.data() + k, c.v.data() + k};
        k += Target::keepLanes(bits, block, arrays, out);
    }
    c.count = k;
}

// The candidates of the cell [b, e), ready for the kernel sums.
template <class Target>
[[gnu::always_inline]] inline void gather(const Sources& src, uint32_t b, uint32_t e, Candidates& c) {
    const SortedPositions& p = src.positions;
    Vec3f lo(p.x[b], p.y[b], p.z[b]), hi = lo;
    for (uint32_t i = b + 1; i < e; ++i) {
        const Vec3f xi(p.x[i], p.y[i], p.z[i]);
        lo = lo.cwiseMin(xi);
        hi = hi.cwiseMax(xi);
    }
    candidateRanges(src, b, c);
    const F8 zero = {};
    const F8 lo8[3] = {zero + lo.x(), zero + lo.y(), zero + lo.z()};
    const F8 hi8[3] = {zero + hi.x(), zero + hi.y(), zero + hi.z()};
    c.count = 0;
    for (const auto& [rb, re] : c.ranges)
        appendNearBox<Target>(src, rb, re, lo8, hi8, c);
    // Padding: at least 2h below the box in x, so beyond h of every particle of the cell, value 0
    // (the |lo.x| term keeps the gap when 2h is below the rounding of far-off coordinates).
    const uint32_t padded = (c.count + kLanes - 1) / kLanes * kLanes;
    const float padX = lo.x() - (2.0f * src.h + std::abs(lo.x()));
    for (uint32_t j = c.count; j < padded; ++j) {
        c.x[j] = padX;
        c.y[j] = lo.y();
        c.z[j] = lo.z();
        c.v[j] = 0.0f;
    }
    c.count = padded;
}

// Candidates j0 .. j0 + 7 seen from x_i: offsets x_i - x_j, distance r, and the cubic spline's
// clamped factors a = max(0, 1 - q), b = max(0, 1/2 - q) with q = r / h (both sums below).
struct SplineLanes {
    F8 dx, dy, dz, r, a, b;
};
template <class Target>
[[gnu::always_inline]] inline void splineLanes(const Candidates& c, uint32_t j0, float xi, float yi, float zi,
                                               float invH, SplineLanes& l) {
    const F8 zero = {}, one = zero + 1.0f, half = zero + 0.5f;
    load8(l.dx, c.x.data() + j0);
    load8(l.dy, c.y.data() + j0);
    load8(l.dz, c.z.data() + j0);
    l.dx = xi - l.dx;
    l.dy = yi - l.dy;
    l.dz = zi - l.dz;
    l.r = (l.dx * l.dx + l.dy * l.dy) + l.dz * l.dz;
    Target::squareRoot(l.r);
    const F8 q = l.r * invH;
    l.a = one - q;
    l.b = half - q;
    Target::atLeast(l.a, zero);
    Target::atLeast(l.b, zero);
}

// The cubic spline in branch-free form: W = k (2 a^3 - 8 b^3), which equals k (6q^3 - 6q^2 + 1)
// for q <= 1/2 and 2k (1-q)^3 for 1/2 < q <= 1 (same as CubicSplineKernel).
// Returns sum_j W_ij / k over the candidates (the own term included).
template <class Target>
[[gnu::always_inline]] inline float kernelSum(const Candidates& c, float xi, float yi, float zi, float invH) {
    F8 sum = {};
    SplineLanes l;
    for (uint32_t j0 = 0; j0 < c.count; j0 += kLanes) {
        splineLanes<Target>(c, j0, xi, yi, zi, invH, l);
        sum += 2.0f * (l.a * l.a * l.a) - 8.0f * (l.b * l.b * l.b);
    }
    return total(sum);
}

// L_i = -sum_j V_j x_ij (x) gradW_ij with gradW_ij = (dW/dq) / (h |x_ij|) x_ij (symmetric): with
// s_j = -V_j (dW/dq) / (h |x_ij|), L_i = sum_j s_j x_ij x_ij^T. dW/dq = k (-6 a^2 + 24 b^2) is 0 at
// q = 0, so the own term vanishes.
template <class Target>
[[gnu::always_inline]] inline Mat3f renormalisationInverse(const Candidates& c, float xi, float yi, float zi,
                                                           float k, float invH) {
    const F8 zero = {}, tiny = zero + 1e-20f;
    F8 lxx = zero, lxy = zero, lxz = zero, lyy = zero, lyz = zero, lzz = zero;
    SplineLanes l;
    for (uint32_t j0 = 0; j0 < c.count; j0 += kLanes) {
        splineLanes<Target>(c, j0, xi, yi, zi, invH, l);
        F8 volume;
        load8(volume, c.v.data() + j0);
        F8 rSafe = l.r; // max(r, tiny): the own term divides 0 by it
        Target::atLeast(rSafe, tiny);
        const F8 s = -volume * k * (-6.0f * (l.a * l.a) + 24.0f * (l.b * l.b)) * invH / rSafe;
        const F8 sx = s * l.dx, sy = s * l.dy, sz = s * l.dz;
        lxx += sx * l.dx;
        lxy += sx * l.dy;
        lxz += sx * l.dz;
        lyy += sy * l.dy;
        lyz += sy * l.dz;
        lzz += sz * l.dz;
    }
    Mat3f L;
    L << total(lxx), total(lxy), total(lxz), total(lxy), total(lyy), total(lyz), total(lxz), total(lyz),
        total(lzz);
    return L;
}

// One density-pass cell: rho_i = m k sum_j W_ij / k for its particles.
struct DensityPass {
    Sources src;
    float invH, massK;
    float* rho;
};
template <class Target>
[[gnu::always_inline]] inline void densityCell(const DensityPass& pass, uint32_t b, uint32_t e,
                                               Candidates& c) {
    gather<Target>(pass.src, b, e, c);
    const SortedPositions& p = pass.src.positions;
    for (uint32_t i = b; i < e; ++i)
        pass.rho[i] = pass.massK * kernelSum<Target>(c, p.x[i], p.y[i], p.z[i], pass.invH);
}

// One L-pass cell: lambda_i = smallest eigenvalue of L_i for its particles.
struct LambdaPass {
    Sources src; // values: V_j
    float invH, k;
    float* lambda;
};
template <class Target>
[[gnu::always_inline]] inline void lambdaCell(const LambdaPass& pass, uint32_t b, uint32_t e, Candidates& c) {
    gather<Target>(pass.src, b, e, c);
    const SortedPositions& p = pass.src.positions;
    for (uint32_t i = b; i < e; ++i)
        pass.lambda[i] = smallestSymmetricEigenvalue(
            renormalisationInverse<Target>(c, p.x[i], p.y[i], p.z[i], pass.k, pass.invH));
}

void densityCellBaseline(const DensityPass& pass, uint32_t b, uint32_t e, Candidates& c) {
    densityCell<BaselineTarget>(pass, b, e, c);
}
void lambdaCellBaseline(const LambdaPass& pass, uint32_t b, uint32_t e, Candidates& c) {
    lambdaCell<BaselineTarget>(pass, b, e, c);
}
#if defined(__x86_64__) || defined(__i386__)
[[gnu::target("avx2")]] void densityCellAvx2(const DensityPass& pass, uint32_t b, uint32_t e, Candidates& c) {
    densityCell<Avx2Target>(pass, b, e, c);
}
[[gnu::target("avx2")]] void lambdaCellAvx2(const LambdaPass& pass, uint32_t b, uint32_t e, Candidates& c) {
    lambdaCell<Avx2Target>(pass, b, e, c);
}
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
#endif

// Chunks of 64 cells: the occupied cells cluster (the fluid fills part of its box), and small
// chunks keep two threads busy to the end (each cell's particles are computed on their own).
template <class PerCell> void forEachOccupiedCell(const NeighborGrid& grid, PerCell&& perCell) {
    tbb::parallel_for(tbb::blocked_range<uint32_t>(0, uint32_t(grid.cellCount()), 64),
                      [&](const tbb::blocked_range<uint32_t>& r) {
                          for (uint32_t c = r.begin(); c < r.end(); ++c) {
                              const auto [b, e] = grid.cellRange(c);
                              if (b != e)
                                  perCell(b, e);
                          }
                      });
}

// ws.positions must hold the sorted positions.
void densityPass(const NeighborGrid& grid, const CubicSplineKernel& kernel, float mass, std::span<float> rho,
                 SurfaceDetection_Marrone2010::Workspace::Impl& ws) {
    const float h = kernel.supportRadius();
    const float k = 8.0f / (std::numbers::pi_v<float> * h * h * h);
    const DensityPass pass{{grid, ws.positions, nullptr, h}, 1.0f / h, mass * k, rho.data()};
    auto perCell = densityCellBaseline;
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        perCell = densityCellAvx2;
#endif
    forEachOccupiedCell(grid, [&](uint32_t b, uint32_t e) { perCell(pass, b, e, ws.candidates.local()); });
}

// ws.positions must hold the sorted positions.
void lambdaPass(const NeighborGrid& grid, std::span<const float> rho, const CubicSplineKernel& kernel,
                float mass, std::span<float> lambda, SurfaceDetection_Marrone2010::Workspace::Impl& ws) {
    const float h = kernel.supportRadius();
    const float k = 8.0f / (std::numbers::pi_v<float> * h * h * h);
    ws.volumes.resize(rho.size() + kLanes); // read in whole blocks, as the positions
    float* volumes = ws.volumes.data();
    tbb::parallel_for(tbb::blocked_range<size_t>(0, rho.size(), 16384),
                      [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t j = r.begin(); j < r.end(); ++j)
                              volumes[j] = rho[j] > 0.0f ? mass / rho[j] : 0.0f; // V_j = m / rho_j
                      });
    const LambdaPass pass{{grid, ws.positions, volumes, h}, 1.0f / h, k, lambda.data()};
    auto perCell = lambdaCellBaseline;
#if defined(__x86_64__) || defined(__i386__)
    if (kHasAvx2)
        perCell = lambdaCellAvx2;
#endif
    forEachOccupiedCell(grid, [&](uint32_t b, uint32_t e) { perCell(pass, b, e, ws.candidates.local()); });
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

void SurfaceDetection_Marrone2010::computeDensities(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                                    const CubicSplineKernel& kernel, float mass,
                                                    std::span<float> rho, Workspace& workspace) {
    copySorted(xs, workspace.impl().positions);
    densityPass(grid, kernel, mass, rho, workspace.impl());
}

void SurfaceDetection_Marrone2010::computeLambda(const NeighborGrid& grid, std::span<const Vec3f> xs,
                                                 std::span<const float> rho, const CubicSplineKernel& kernel,
                                                 float mass, std::span<float> lambda, Workspace& workspace) {
    copySorted(xs, workspace.impl().positions);
    lambdaPass(grid, rho, kernel, mass, lambda, workspace.impl());
}

void SurfaceDetection_Marrone2010::computeDensitiesAndLambda(const NeighborGrid& grid,
                                                             std::span<const Vec3f> xs,
                                                             const CubicSplineKernel& kernel, float mass,
                                                             std::span<float> rho, std::span<float> lambda,
                                                             Workspace& workspace) {
    copySorted(xs, workspace.impl().positions);
    densityPass(grid, kernel, mass, rho, workspace.impl());
    lambdaPass(grid, rho, kernel, mass, lambda, workspace.impl());
}
} // namespace octo
