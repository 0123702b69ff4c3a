#pragma once
// A sparse spatial hash of points (cell edge = the largest query radius): incremental inserts,
// radius queries over the 27 surrounding cells. Concurrent const queries are safe.
#include "common/Types.h"

#include <cmath>
#include <unordered_map>
#include <vector>

namespace octo {

class PointHash {
public:
    explicit PointHash(float cellSize = 1.0f) { reset(cellSize); }
    void reset(float cellSize) {
        cell_ = cellSize;
        inv_ = 1.0f / cellSize;
        head_.clear();
        next_.clear();
        points_.clear();
    }
    void reserve(size_t n) {
        head_.reserve(n);
        next_.reserve(n);
        points_.reserve(n);
    }
    uint32_t insert(const Vec3f& p) {
        const uint32_t i = uint32_t(points_.size());
        points_.push_back(p);
        auto [it, inserted] = head_.try_emplace(key(cellOf(p)), i);
        next_.push_back(inserted ? kNone : it->second);
        if (!inserted)
            it->second = i;
        return i;
    }
    const std::vector<Vec3f>& points() const { return points_; }
    size_t size() const { return points_.size(); }

    /// Calls f(index, point) for the points in the 27 cells around p (a superset of the points
    /// within one cell edge).
    template <class F> void forEachNear(const Vec3f& p, F&& f) const {
        const Vec3i c = cellOf(p);
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    auto it = head_.find(key(c + Vec3i(dx, dy, dz)));
                    if (it == head_.end())
                        continue;
                    for (uint32_t i = it->second; i != kNone; i = next_[i])
                        f(i, points_[i]);
                }
    }
    /// True if some point lies closer than radius (<= cell edge) to p.
    bool anyWithin(const Vec3f& p, float radius) const {
        const float r2 = radius * radius;
        bool found = false;
        forEachNear(p, [&](uint32_t, const Vec3f& q) { found = found || (q - p).squaredNorm() < r2; });
        return found;
    }
    /// Squared distance to the nearest point within one cell edge (or +inf).
    float nearestSquaredDistance(const Vec3f& p, uint32_t* index = nullptr) const {
        float best = std::numeric_limits<float>::infinity();
        forEachNear(p, [&](uint32_t i, const Vec3f& q) {
            const float d2 = (q - p).squaredNorm();
            if (d2 < best) {
                best = d2;
                if (index)
                    *index = i;
            }
        });
        return best;
    }

private:
    static constexpr uint32_t kNone = 0xffffffffu;
    Vec3i cellOf(const Vec3f& p) const {
        return {int(std::floor(p.x() * inv_)), int(std::floor(p.y() * inv_)), int(std::floor(p.z() * inv_))};
    }
    static uint64_t key(const Vec3i& c) {
        const uint64_t m = (1u << 21) - 1;
        return (uint64_t(uint32_t(c.x()) & m)) | (uint64_t(uint32_t(c.y()) & m) << 21) |
               (uint64_t(uint32_t(c.z()) & m) << 42);
    }
    float cell_ = 1.0f, inv_ = 1.0f;
    std::unordered_map<uint64_t, uint32_t> head_;
    std::vector<uint32_t> next_;
    std::vector<Vec3f> points_;
};

} // namespace octo
