#include "spatial/NeighborGrid.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace octo {

void NeighborGrid::setDomain(const Aabb& domain, float cellSize) {
    if (!(cellSize > 0.0f) || !std::isfinite(cellSize))
        throw std::invalid_argument("NeighborGrid: cell size must be > 0");
    if (domain.empty())
        throw std::invalid_argument("NeighborGrid: empty domain");
    domain_ = domain;
    cellSize_ = cellSize;
    invCellSize_ = 1.0f / cellSize;
    const Vec3f ext = domain.extent();
    for (int a = 0; a < 3; ++a) {
        // In double and checked before the int conversion (float-cast-overflow for far-flung points).
        const double along = std::ceil(double(ext[a]) * double(invCellSize_)) + 1.0;
        if (!(along < double(1 << 30))) {
            std::ostringstream s;
            s << "NeighborGrid: a domain " << ext[a] << " m wide along "
              << "xyz"[a] << " needs " << along << " cells of " << cellSize << " m (limit 2^30 per axis)";
            throw std::length_error(s.str());
        }
        dims_[a] = std::max(1, int(along));
        bricks_[a] = (dims_[a] + 7) / 8;
    }
    const size_t cells = size_t(bricks_.x()) * bricks_.y() * bricks_.z() * 512u;
    if (cells > (size_t(1) << 31)) {
        std::ostringstream s;
        s << "NeighborGrid: a domain of " << ext.x() << " x " << ext.y() << " x " << ext.z() << " m needs "
          << cells << " cells of " << cellSize << " m (limit 2^31)";
        throw std::length_error(s.str());
    }
    cellStart_.assign(cells + 1, 0u);
}

namespace {
// Up to this many points, build() counts and scatters in one thread.
constexpr size_t kSerialScatter = size_t(1) << 16;

double cellsFor(const Vec3f& ext, float size) {
    return double(std::ceil(ext.x() / size) + 9) * double(std::ceil(ext.y() / size) + 9) *
           double(std::ceil(ext.z() / size) + 9);
}
} // namespace

void NeighborGrid::setDomainFromPoints(std::span<const Vec3f> points, float cellSize, size_t maxCells) {
    Aabb box;
    for (const Vec3f& p : points)
        if (p.allFinite())
            box.extend(p);
    if (box.empty())
        box = Aabb(Vec3f::Zero(), Vec3f::Constant(cellSize));
    if (maxCells == 0)
        maxCells = std::max<size_t>(size_t(1) << 18, 8 * points.size());
    // A few far-flung points must not coarsen the cells of all the others (one particle 10 km from
    // a 216 k lattice put the whole lattice into one cell: 74 s of neighbour loops instead of 2 s).
    // The domain is then the box of the points without the outer 0.1 % on each side of each axis;
    // the points outside it are clamped into the border cells, which keeps the search complete.
    if (cellsFor(box.extent(), cellSize) > double(maxCells) && points.size() >= 1000) {
        const size_t cut = points.size() / 1000;
        std::vector<float> c;
        c.reserve(points.size());
        Aabb trimmed;
        for (int a = 0; a < 3; ++a) {
            c.clear();
            for (const Vec3f& p : points)
                if (p.allFinite())
                    c.push_back(p[a]);
            if (c.size() <= 2 * cut)
                break;
            std::nth_element(c.begin(), c.begin() + std::ptrdiff_t(cut), c.end());
            trimmed.min[a] = c[cut];
            std::nth_element(c.begin(), c.end() - std::ptrdiff_t(cut) - 1, c.end());
            trimmed.max[a] = c[c.size() - cut - 1];
        }
        if (!trimmed.empty() && (trimmed.max.array() >= trimmed.min.array()).all())
            box = trimmed;
    }
    const Vec3f ext = box.extent();
    float size = cellSize;
    for (int guard = 0; guard < 64; ++guard) {
        if (cellsFor(ext, size) <= double(maxCells))
            break;
        size *= 1.25f;
    }
    setDomain(box, size);
}

uint64_t NeighborGrid::candidatePairs() const {
    // Sum over the points of their own cell's occupancy (= sum over cells of occupancy^2).
    uint64_t pairs = 0;
    for (uint32_t key : keys_)
        pairs += uint64_t(cellStart_[key + 1] - cellStart_[key]);
    return pairs;
}

uint32_t NeighborGrid::maxOccupancy() const {
    uint32_t most = 0;
    for (uint32_t key : keys_)
        most = std::max(most, cellStart_[key + 1] - cellStart_[key]);
    return most;
}

void NeighborGrid::build(std::span<const Vec3f> points) {
    const size_t n = points.size();
    const size_t cells = cellStart_.size() - 1;
    keys_.resize(n);
    order_.resize(n);
    std::fill(cellStart_.begin(), cellStart_.end(), 0u);

    // Small sets (the solver's 9 k particles, a container's wall samples rebuilt every step with a
    // moving body): keys in parallel, then histogram and scatter in one thread, without atomics; the
    // scatter in ascending order leaves every cell sorted, as the per-cell sort below does.
    const bool serial = n <= kSerialScatter;
    // Count points per cell (key computation and histogram in one pass).
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i < r.end(); ++i) {
            const uint32_t key = rankOf(cellOf(points[i]));
            keys_[i] = key;
            if (!serial)
                std::atomic_ref<uint32_t>(cellStart_[key + 1]).fetch_add(1u, std::memory_order_relaxed);
        }
    });
    if (serial)
        for (size_t i = 0; i < n; ++i)
            ++cellStart_[keys_[i] + 1];
    // Exclusive prefix sum: cellStart_[c] = first sorted index of cell c.
    for (size_t c = 0; c < cells; ++c)
        cellStart_[c + 1] += cellStart_[c];

    cursor_.assign(cellStart_.begin(), cellStart_.end() - 1);
    if (serial) {
        for (size_t i = 0; i < n; ++i)
            order_[cursor_[keys_[i]]++] = uint32_t(i);
        return;
    }
    // Scatter; order inside a cell is restored afterwards so the result is deterministic.
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i < r.end(); ++i) {
            const uint32_t slot =
                std::atomic_ref<uint32_t>(cursor_[keys_[i]]).fetch_add(1u, std::memory_order_relaxed);
            order_[slot] = uint32_t(i);
        }
    });
    tbb::parallel_for(tbb::blocked_range<size_t>(0, cells, 8192), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t c = r.begin(); c < r.end(); ++c)
            if (cellStart_[c + 1] - cellStart_[c] > 1)
                std::sort(order_.begin() + cellStart_[c], order_.begin() + cellStart_[c + 1]);
    });
}

} // namespace octo
