#pragma once
// Basic value types shared by every core layer.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>
#include <limits>

namespace octo {

using Vec3f = Eigen::Vector3f;
using Vec3d = Eigen::Vector3d;
using Vec3i = Eigen::Vector3i;
using Mat3f = Eigen::Matrix3f;
using Mat3d = Eigen::Matrix3d;
using Quatd = Eigen::Quaterniond;

/// Axis-aligned box; empty when min > max.
struct Aabb {
    Vec3f min = Vec3f::Constant(std::numeric_limits<float>::max());
    Vec3f max = Vec3f::Constant(std::numeric_limits<float>::lowest());

    Aabb() = default;
    Aabb(const Vec3f& lo, const Vec3f& hi) : min(lo), max(hi) {}

    bool empty() const { return (min.array() > max.array()).any(); }
    void extend(const Vec3f& p) {
        min = min.cwiseMin(p);
        max = max.cwiseMax(p);
    }
    void extend(const Aabb& b) {
        min = min.cwiseMin(b.min);
        max = max.cwiseMax(b.max);
    }
    Vec3f extent() const { return max - min; }
    Vec3f center() const { return 0.5f * (min + max); }
    bool contains(const Vec3f& p) const {
        return (p.array() >= min.array()).all() && (p.array() <= max.array()).all();
    }
    Aabb enlarged(float margin) const { return {min.array() - margin, max.array() + margin}; }
};

} // namespace octo
