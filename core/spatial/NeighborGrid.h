#pragma once
// Uniform-grid neighbour search shared by the solver, surface detection and the distance field.
//
// Points are sorted by cell with a parallel counting sort. Cells are ranked in a brick-blocked
// Z-order (8x8x8 Morton bricks laid out brick by brick), so points that are near in space are
// near in memory, without a rank table. Points outside the domain are clamped into border cells:
// clamping is monotonic, so two points within one cell of each other stay within one cell and
// the search remains complete (it only gets slower for far-away points).
//
// Usage: setDomain(...) once (or per frame for a moving set), build(points) gives the
// permutation order()[sorted] = original; the caller keeps its per-point data in sorted order
// (permute()) and queries with the sorted positions.
#include "common/Types.h"
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

namespace octo {

class NeighborGrid {
public:
    /// Fixes the domain and the cell edge (>= the largest query radius for 27-cell queries).
    void setDomain(const Aabb& domain, float cellSize);
    /// Domain = bounding box of the points (plus one cell). When that box would need more than
    /// maxCells cells (far-flung outliers), the domain leaves out the outer 0.1 % of the points on
    /// each side of each axis (they are clamped into border cells), and only then does the cell
    /// edge grow, so memory stays O(n) and a few outliers do not put everything into one cell.
    void setDomainFromPoints(std::span<const Vec3f> points, float cellSize, size_t maxCells = 0);

    /// Sorts the points by cell. Afterwards order()[k] is the original index of sorted point k.
    void build(std::span<const Vec3f> points);

    std::span<const uint32_t> order() const { return order_; }
    size_t pointCount() const { return order_.size(); }
    float cellSize() const { return cellSize_; }
    const Aabb& domain() const { return domain_; }
    Vec3i dims() const { return dims_; }
    size_t cellCount() const { return cellStart_.empty() ? 0 : cellStart_.size() - 1; }
    /// After build(): the sum over the points of the number of points in their own cell (the
    /// sum of the squared cell occupancies). About 8 per point for a fluid at rest with cells of
    /// the kernel radius; coincident or clustered points make it quadratic, so callers compare
    /// it with a budget before running neighbour loops (O(n) to compute).
    uint64_t candidatePairs() const;
    /// After build(): the most points in one cell.
    uint32_t maxOccupancy() const;

    /// Reorders per-point data from original to sorted order (scratch is reused storage).
    template <class T> void permute(std::vector<T>& data, std::vector<T>& scratch) const;
    /// Writes the sorted copy of data into out.
    template <class T> void gather(std::span<const T> data, std::vector<T>& out) const;

    Vec3i cellOf(const Vec3f& p) const {
        Vec3f q = (p - domain_.min) * invCellSize_;
        Vec3i c;
        for (int a = 0; a < 3; ++a) {
            float v = std::floor(q[a]);
            c[a] = v < 0.0f ? 0 : (v >= float(dims_[a] - 1) ? dims_[a] - 1 : int(v));
        }
        return c;
    }
    uint32_t rankOf(const Vec3i& c) const {
        const uint32_t bx = uint32_t(c.x()) >> 3, by = uint32_t(c.y()) >> 3, bz = uint32_t(c.z()) >> 3;
        const uint32_t brick = (bz * bricks_.y() + by) * bricks_.x() + bx;
        return brick * 512u + morton3(uint32_t(c.x()) & 7u, uint32_t(c.y()) & 7u, uint32_t(c.z()) & 7u);
    }
    /// Sorted-index range [first, second) of the points in cell rank r.
    std::pair<uint32_t, uint32_t> cellRange(uint32_t rank) const {
        return {cellStart_[rank], cellStart_[rank + 1]};
    }

    /// Calls f(begin, end) for each non-empty cell within ceil(radius / cellSize) cells of x.
    template <class F> void forEachCandidateRange(const Vec3f& x, float radius, F&& f) const;
    /// As forEachCandidateRange, with each cell's box: f(begin, end, lo, hi). A border cell's box
    /// reaches to infinity outwards (it holds the points clamped into it), so a caller may skip every
    /// cell whose box is farther from its query point than the radius without missing a point. With
    /// radius <= cell edge, f may take a fifth argument: the cell's place in the 3x3x3 block (0..2).
    template <class F> void forEachCandidateCell(const Vec3f& x, float radius, F&& f) const;
    /// Calls f(begin, end) for each non-empty cell overlapping the box [lo, hi] (clamped to the
    /// grid) until f returns false; returns false if it stopped early.
    template <class F> bool forEachRangeInBox(const Vec3f& lo, const Vec3f& hi, F&& f) const;

    /// Calls f(j, xj, r2) for every sorted point j with |x - xj|^2 <= radius^2.
    /// sortedPositions must be the points in sorted order (index j = sorted index).
    template <class F>
    void forEachNeighbor(const Vec3f& x, float radius, std::span<const Vec3f> sortedPositions, F&& f) const {
        const float r2max = radius * radius;
        forEachCandidateRange(x, radius, [&](uint32_t b, uint32_t e) {
            for (uint32_t j = b; j < e; ++j) {
                const Vec3f& xj = sortedPositions[j];
                const float r2 = (x - xj).squaredNorm();
                if (r2 <= r2max)
                    f(j, xj, r2);
            }
        });
    }

private:
    template <class F> void forEachCandidateCellIn(const Vec3i& c0, const Vec3i& c1, F& f) const;
    static uint32_t spread3(uint32_t v) { return (v & 1u) | ((v & 2u) << 2) | ((v & 4u) << 4); }
    static uint32_t morton3(uint32_t x, uint32_t y, uint32_t z) {
        return spread3(x) | (spread3(y) << 1) | (spread3(z) << 2);
    }

    Aabb domain_{Vec3f::Zero(), Vec3f::Ones()};
    float cellSize_ = 1.0f, invCellSize_ = 1.0f;
    Vec3i dims_{1, 1, 1};
    Vec3i bricks_{1, 1, 1};
    std::vector<uint32_t> cellStart_; // size cells + 1, prefix sums of counts
    std::vector<uint32_t> order_;     // sorted -> original
    std::vector<uint32_t> keys_;      // per original point: cell rank
    std::vector<uint32_t> cursor_;    // scatter offsets
};

template <class T> void NeighborGrid::permute(std::vector<T>& data, std::vector<T>& scratch) const {
    scratch.resize(data.size());
    gather(std::span<const T>(data), scratch);
    data.swap(scratch);
}

template <class T> void NeighborGrid::gather(std::span<const T> data, std::vector<T>& out) const {
    out.resize(order_.size());
    const uint32_t* ord = order_.data();
    T* dst = out.data();
    const T* src = data.data();
    const size_t n = order_.size();
    // Small enough to leave to the caller's parallel region; large copies are bandwidth bound.
    for (size_t k = 0; k < n; ++k)
        dst[k] = src[ord[k]];
}

template <class F> void NeighborGrid::forEachCandidateRange(const Vec3f& x, float radius, F&& f) const {
    const int reach = std::max(1, int(std::ceil(radius * invCellSize_ - 1e-6f)));
    const Vec3i c = cellOf(x);
    const int z0 = std::max(0, c.z() - reach), z1 = std::min(dims_.z() - 1, c.z() + reach);
    const int y0 = std::max(0, c.y() - reach), y1 = std::min(dims_.y() - 1, c.y() + reach);
    const int x0 = std::max(0, c.x() - reach), x1 = std::min(dims_.x() - 1, c.x() + reach);
    for (int z = z0; z <= z1; ++z)
        for (int y = y0; y <= y1; ++y)
            for (int xx = x0; xx <= x1; ++xx) {
                const uint32_t r = rankOf(Vec3i(xx, y, z));
                const uint32_t b = cellStart_[r], e = cellStart_[r + 1];
                if (b != e)
                    f(b, e);
            }
}

template <class F> void NeighborGrid::forEachCandidateCell(const Vec3f& x, float radius, F&& f) const {
    const int reach = std::max(1, int(std::ceil(radius * invCellSize_ - 1e-6f)));
    const Vec3i c = cellOf(x);
    const Vec3i c0 = (c - Vec3i::Constant(reach)).cwiseMax(Vec3i::Zero());
    const Vec3i c1 = (c + Vec3i::Constant(reach)).cwiseMin(dims_ - Vec3i::Ones());
    if (reach > 1) { // the general loop; the solver's queries (radius = cell edge) take the one below
        forEachCandidateCellIn(c0, c1, f);
        return;
    }
    // Up to 3 cells per axis: their bounds and their shares of the rank (brick index and Morton
    // bits), computed once per axis instead of once per cell (the solver asks for every cell it
    // enters, twice per step). Same cells, same order, same boxes as the general loop.
    constexpr float inf = std::numeric_limits<float>::infinity();
    float lo[3][3], hi[3][3];
    uint32_t brick[3][3], bits[3][3];
    const uint32_t stride[3] = {1u, uint32_t(bricks_.x()), uint32_t(bricks_.x()) * uint32_t(bricks_.y())};
    for (int a = 0; a < 3; ++a)
        for (int k = c0[a]; k <= c1[a]; ++k) {
            const int q = k - c0[a];
            lo[a][q] = k == 0 ? -inf : domain_.min[a] + float(k) * cellSize_;
            hi[a][q] = k == dims_[a] - 1 ? inf : domain_.min[a] + float(k + 1) * cellSize_;
            brick[a][q] = (uint32_t(k) >> 3) * stride[a];
            bits[a][q] = spread3(uint32_t(k) & 7u) << a;
        }
    const int nx = c1.x() - c0.x(), ny = c1.y() - c0.y(), nz = c1.z() - c0.z();
    for (int z = 0; z <= nz; ++z)
        for (int y = 0; y <= ny; ++y) {
            const uint32_t brickZY = brick[2][z] + brick[1][y], bitsZY = bits[2][z] | bits[1][y];
            for (int xx = 0; xx <= nx; ++xx) {
                const uint32_t r = (brickZY + brick[0][xx]) * 512u + (bitsZY | bits[0][xx]);
                const uint32_t b = cellStart_[r], e = cellStart_[r + 1];
                if (b == e)
                    continue;
                const Vec3f cellLo(lo[0][xx], lo[1][y], lo[2][z]), cellHi(hi[0][xx], hi[1][y], hi[2][z]);
                if constexpr (std::is_invocable_v<F&, uint32_t, uint32_t, const Vec3f&, const Vec3f&,
                                                  const Vec3i&>)
                    f(b, e, cellLo, cellHi, Vec3i(xx, y, z));
                else
                    f(b, e, cellLo, cellHi);
            }
        }
}

template <class F> void NeighborGrid::forEachCandidateCellIn(const Vec3i& c0, const Vec3i& c1, F& f) const {
    constexpr float inf = std::numeric_limits<float>::infinity();
    auto lower = [&](int a, int k) { return k == 0 ? -inf : domain_.min[a] + float(k) * cellSize_; };
    auto upper = [&](int a, int k) {
        return k == dims_[a] - 1 ? inf : domain_.min[a] + float(k + 1) * cellSize_;
    };
    for (int z = c0.z(); z <= c1.z(); ++z)
        for (int y = c0.y(); y <= c1.y(); ++y)
            for (int xx = c0.x(); xx <= c1.x(); ++xx) {
                const uint32_t r = rankOf(Vec3i(xx, y, z));
                const uint32_t b = cellStart_[r], e = cellStart_[r + 1];
                if (b == e)
                    continue;
                const Vec3f lo(lower(0, xx), lower(1, y), lower(2, z)),
                    hi(upper(0, xx), upper(1, y), upper(2, z));
                if constexpr (std::is_invocable_v<F&, uint32_t, uint32_t, const Vec3f&, const Vec3f&,
                                                  const Vec3i&>)
                    f(b, e, lo, hi, Vec3i(xx, y, z) - c0);
                else
                    f(b, e, lo, hi);
            }
}
template <class F> bool NeighborGrid::forEachRangeInBox(const Vec3f& lo, const Vec3f& hi, F&& f) const {
    const Vec3i c0 = cellOf(lo), c1 = cellOf(hi);
    for (int z = c0.z(); z <= c1.z(); ++z)
        for (int y = c0.y(); y <= c1.y(); ++y)
            for (int x = c0.x(); x <= c1.x(); ++x) {
                const uint32_t r = rankOf(Vec3i(x, y, z));
                const uint32_t b = cellStart_[r], e = cellStart_[r + 1];
                if (b != e && !f(b, e))
                    return false;
            }
    return true;
}

} // namespace octo
