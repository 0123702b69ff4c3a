#pragma once
// Anisotropic-kernel scalar field of Yu & Turk, "Reconstructing surfaces of particle-based fluids
// using anisotropic kernels", ACM TOG 32(1), 2013 (docs/SURFACE.md):
//   f(x) = sum_j V sigma det(G_j) P(|G_j (x - xbar_j)|),  phi(x) = iso - f(x)  (phi < 0 inside),
// with
//  - xbar_j = (1 - lambda) x_j + lambda sum_k w_jk x_k / sum_k w_jk (their Eq. 6, Laplacian smoothing
//    of the kernel centres), w_jk = 1 - (|x_j - x_k| / r_c)^3 for |x_j - x_k| < r_c (Eq. 5);
//  - C_j = sum w_jk (x_k - xw_j)(x_k - xw_j)^T / sum w_jk (Eq. 4), C_j = Q diag(s1 >= s2 >= s3) Q^T
//    (Eigen's SelfAdjointEigenSolver::computeDirect), clamped as in their Eq. 10:
//    s_k <- max(s_k, s1 / k_r) when the particle has more than N_eps neighbours, else k_n I;
//  - G_j = Q diag(1 / (R s~_k)) Q^T (Eq. 8/9). Yu & Turk scale s by a constant k_s; we scale by
//    1 / s1 instead (s~_1 = 1), so the longest axis of every kernel is the isotropic support R and the
//    corner evaluation's candidate search stays the distance field's (a documented deviation).
// P(q) = (1 - q^2)^3 on q < 1 (no square root in the hot loop), sigma = 315 / (64 pi) its unit-ball
// normalisation, V = (2r)^3 the rest volume of a particle. Only surface particles (Marrone 2010 flag)
// are made anisotropic: the kernels of the others are the isotropic ones of support R, which is the
// same as k_n = 1 for an interior neighbourhood, and they contribute only deep inside the fluid.
#include "common/Types.h"
#include "spatial/NeighborGrid.h"

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace octo {

struct AnisotropySettings {
    float kernelRadius = 0.04f;     ///< R: support of an isotropic kernel, longest axis of the others
    float covarianceRadius = 0.06f; ///< r_c of Eq. 4-6
    float particleVolume = 8e-6f;   ///< V = (2r)^3
    float kr = 4.0f;                ///< largest / smallest axis ratio (Yu & Turk: 4)
    float kn = 0.5f;                ///< isotropic size of a sparsely surrounded particle (Yu & Turk: 0.5)
    int nEps = 25;                  ///< fewer neighbours: isotropic k_n kernel (Yu & Turk: 25)
    float smoothing = 0.9f;         ///< lambda of Eq. 6 (Yu & Turk: 0.9)
    float iso = 0.5f;               ///< level f = iso
    bool smoothSurfaceOnly = true;  ///< Eq. 6's mean over the anisotropic (surface) particles only
    float shiftLimit = 0.01f;       ///< |xbar_j - x_j| at most this (the particle radius r)
};

/// compute()'s per-thread buffers. A batch of up to eight particles is summed in SIMD lanes: each
/// particle's kept neighbours j with |x_j - x|^2, weight, surface weight and x_j - x, then the same
/// interleaved (neighbour i of lane l at 8 i + l).
struct CovarianceScratch {
    struct Lane {
        std::vector<uint32_t> kept;
        std::vector<float> r2, w, ws, dx, dy, dz;
    };
    std::array<Lane, 8> lane;
    std::vector<float> laneW, laneDx, laneDy, laneDz, laneWs;
};

struct AnisotropicCandidates;

/// A kernel's shape: the symmetric G (support |G d| < 1) and the amplitude, one 32-byte record (so
/// a kernel is copied with one vector move and eight are transposed to lanes in registers).
struct alignas(32) KernelShape {
    float g00, g01, g02, g11, g12, g22, amp, unused;
};

/// The kernels of all particles, in the neighbour grid's sorted order (structure of arrays).
class AnisotropicKernels {
public:
    /// xs: sorted positions of grid; anisotropic[k] != 0 selects the particles that get Eq. 4-10
    /// (empty: all). surface[k] != 0 marks the surface particles (empty: none), whose smoothed
    /// centre is the mean of their surface neighbours only (smoothSurfaceOnly). Parallel (TBB);
    /// capacities are kept between calls. scratch() gives the calling thread's buffers (the caller
    /// owns them, e.g. in its per-thread scratch, so they live from frame to frame). sortedArrays:
    /// xs as arrays x, y, z of xs.size() + 8 floats (e.g. the detection's copy), valid until the
    /// kernels' last use; null: compute() makes its own copy.
    void compute(const NeighborGrid& grid, std::span<const Vec3f> xs, std::span<const uint8_t> anisotropic,
                 std::span<const uint8_t> surface, const AnisotropySettings& s,
                 const std::function<CovarianceScratch&()>& scratch,
                 std::array<const float*, 3> sortedArrays = {nullptr, nullptr, nullptr});
    size_t size() const { return slot.size(); }
    /// Kernel j's centre (sorted particle index j).
    Vec3f centre(size_t j) const {
        const int32_t k = slot[j];
        return k < 0 ? xs_[j] : Vec3f(cx[size_t(k)], cy[size_t(k)], cz[size_t(k)]);
    }
    /// Largest |xbar_j - x_j|: a query for particles within R of a point must reach R + maxShift.
    float maxShift() const { return maxShift_; }
    const AnisotropySettings& settings() const { return s_; }
    /// Kernel j's contribution at x (plain; for tests, vertices and single points).
    float contribution(size_t j, const Vec3f& x) const;
    /// Adds kernel j's contribution to f and its gradient.
    void addWithGradient(size_t j, const Vec3f& x, float& f, Vec3f& grad) const;
    /// Appends to out the kernels of the particles in the grid cells overlapping [lo, hi] whose
    /// centres lie in [keepLo, keepHi], relative to origin (centre - origin), in grid order (cells
    /// z, y, x, then sorted index); ids (when given) gets their sorted particle indices at the same
    /// positions. grid and the particles are compute()'s. Does not seal out.
    void gather(const NeighborGrid& grid, const Vec3f& lo, const Vec3f& hi, const Vec3f& keepLo,
                const Vec3f& keepHi, const Vec3f& origin, AnisotropicCandidates& out,
                std::vector<uint32_t>* ids = nullptr) const;
    size_t bytes() const;
    // Per particle (sorted order): its record in the arrays below, or -1 for the isotropic kernel
    // of support R at the particle itself (isoG, isoAmp). Every particle of a grid cell that holds
    // an anisotropic particle has a record (the isotropic ones hold isoG, isoAmp), at consecutive
    // slots in sorted order, so a cell's kernels are read contiguously; cells without one are read
    // from the positions.
    std::vector<int32_t> slot;
    // Per record: smoothed centre, shape.
    std::vector<float> cx, cy, cz;
    std::vector<KernelShape> shape;
    float isoG = 0.0f, isoAmp = 0.0f;
    uint64_t anisotropicCount = 0; ///< particles that got Eq. 4-10 (for stats)

private:
    /// Sets slot for n particles (compute's anisotropic) and sizes the records; returns their number.
    int32_t assignSlots(const NeighborGrid& grid, std::span<const uint8_t> anisotropic, size_t n);
    /// Record o: the spherical kernel G = g I, amplitude a.
    void setIsotropic(size_t o, float g, float a);
    /// Record o: the ellipsoid of covariance C (axes clamped as in Eq. 10); false (o unchanged) when C has no
    /// positive finite eigenvalue.
    bool setEllipsoid(size_t o, const Mat3f& C);
    template <bool kIds>
    void gatherRange(uint32_t b, uint32_t e, const Vec3f& keepLo, const Vec3f& keepHi, const Vec3f& origin,
                     AnisotropicCandidates& out, std::vector<uint32_t>* ids) const;

    AnisotropySettings s_;
    float maxShift_ = 0.0f;
    std::span<const Vec3f> xs_;             // the particles of the last compute
    std::vector<float> ownX_, ownY_, ownZ_; // the same as arrays (padded by a SIMD batch), when not given
    const float *px_ = nullptr, *py_ = nullptr, *pz_ = nullptr; // the arrays in use
};

/// The kernels near one block of corners, relative to a centre. gather() fills the centres and
/// shape (records); assignFrom() picks some of them into the sealed lanes read by the field sums:
/// centres and the shape's seven values as arrays, padded to whole SIMD batches with far kernels
/// (weight 0). Reused between calls.
struct AnisotropicCandidates {
    static constexpr size_t kLanes = 8;
    std::vector<float> x, y, z;
    std::vector<KernelShape> shape;
    std::vector<float> g00, g01, g02, g11, g12, g22, amp;
    size_t count = 0;
    void clear() { count = 0; }
    /// Room for n more candidates (and the padding).
    void reserveMore(size_t n) {
        if (count + n + kLanes > x.size())
            grow(count + n + kLanes);
    }
    /// Replaces the candidates by o[pick[0..n)] (gathered), centres shifted by -shift, and seals them.
    void assignFrom(const AnisotropicCandidates& o, const uint32_t* pick, size_t n, const Vec3f& shift);
    /// keepWithin(px, py, pz, ids, n, c, r2, kept) and then assignFrom(o, kept, m, c) in one pass, the
    /// same values in the same order, when (px, py, pz)[i] are o's centres at ids[i] (at i without
    /// ids): the kept centres minus c are the test's own differences, written as it keeps them.
    /// px, py, pz and ids are read, and kept written, up to n + 7 (whole batches of eight). Returns m,
    /// the number kept.
    size_t assignWithin(const AnisotropicCandidates& o, const float* px, const float* py, const float* pz,
                        const uint32_t* ids, size_t n, const Vec3f& c, float r2, uint32_t* kept);
    void seal();
    size_t padded() const { return (count + kLanes - 1) / kLanes * kLanes; }
    size_t bytes() const;

private:
    void grow(size_t need);
};

/// Writes to out the i < n (ids[i] when ids is given) with |(x, y, z)[i] - c|^2 <= r2, in order;
/// returns their number. out has room for n. The same float operations as the plain test.
size_t keepWithin(const float* x, const float* y, const float* z, const uint32_t* ids, size_t n,
                  const Vec3f& c, float r2, uint32_t* out);

/// Writes the i < n with |a[i] - c| <= r to the outputs, in order: ids[i] (i without ids) to outIds
/// and x[i], y[i], z[i] to ox, oy, oz; returns their number. a is one of x, y, z. In whole batches
/// of eight: the inputs are read and the outputs written up to n + 7.
size_t keepNear(const float* a, const float* x, const float* y, const float* z, const uint32_t* ids, size_t n,
                float c, float r, uint32_t* outIds, float* ox, float* oy, float* oz);

/// keepNear with the test (a[i] - ca)^2 + (b[i] - cb)^2 <= r2: the points within sqrt(r2) of a line
/// along the third axis (a, b: two of x, y, z).
size_t keepNearLine(const float* a, const float* b, const float* x, const float* y, const float* z,
                    const uint32_t* ids, size_t n, float ca, float cb, float r2, uint32_t* outIds, float* ox,
                    float* oy, float* oz);

/// f at centre + offset from sealed candidates (SIMD; AVX2 when the CPU has it).
float anisotropicFieldSum(const AnisotropicCandidates& c, const Vec3f& offset);
/// f[p] = anisotropicFieldSum(c, (ox, oy, oz)[p]) for p < n, the same values, in one call that
/// reads each batch of kernels once per two points.
void anisotropicFieldSums(const AnisotropicCandidates& c, const float* ox, const float* oy, const float* oz,
                          int n, float* f);
/// grad f at centre + offset from sealed candidates (SIMD); near (when given) gets the number of
/// kernels centred within radius of the point.
Vec3f anisotropicFieldGradient(const AnisotropicCandidates& c, const Vec3f& offset, float radius = 0.0f,
                               int* near = nullptr);

/// anisotropicFieldGradient (near: its count) and kernelWeightedMean (mean) at one point, in one pass
/// over the candidates: the same values as the two calls.
Vec3f anisotropicFieldGradientAndMean(const AnisotropicCandidates& c, const Vec3f& offset, float radius,
                                      int& near, const float* vx, const float* vy, const float* vz,
                                      Vec3f& mean);

/// sum_j W_j v_j / sum_j W_j over the sealed candidates centred within radius of centre + offset,
/// W = (1 - d^2 / radius^2)^3 (d: distance to the kernel's centre); v_j = (vx, vy, vz)[j], arrays of
/// at least c.padded() values in the candidates' order. Zero when no kernel is that close.
Vec3f kernelWeightedMean(const AnisotropicCandidates& c, const Vec3f& offset, float radius, const float* vx,
                         const float* vy, const float* vz);

} // namespace octo
