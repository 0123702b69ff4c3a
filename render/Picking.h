#pragma once
// Picking a rigid body under the cursor and dragging it along a camera-facing plane.
// GUI-side geometry on the published snapshot (body meshes + transforms), no solver access.
#include "render/Camera.h"
#include "sim/FrameSnapshot.h"

#include <optional>

namespace octo::render {

/// Möller–Trumbore ray/triangle test; returns the ray parameter t of the hit.
std::optional<float> intersectTriangle(const Ray& ray, const glm::vec3& a, const glm::vec3& b,
                                       const glm::vec3& c);

struct BodyHit {
    int bodyId = -1;
    float t = 0.0f; ///< ray parameter of the nearest hit
    glm::vec3 worldPoint{0.0f};
    glm::vec3 bodyPoint{0.0f}; ///< same point in body space (what beginDrag wants)
};

/// Nearest body hit by the ray, testing each body mesh transformed by its snapshot pose.
std::optional<BodyHit> pickBody(const FrameSnapshot& frame, const Ray& ray);

/// The plane the grabbed point moves in: through the grab point, facing the camera, so the
/// body follows the cursor without changing its depth (the usual 3D drag of SPH demos).
class DragPlane {
public:
    DragPlane() = default;
    DragPlane(const glm::vec3& point, const glm::vec3& normal);
    /// Where the cursor ray meets the plane; none when the ray is parallel or points away.
    std::optional<glm::vec3> intersect(const Ray& ray) const;
    const glm::vec3& point() const { return point_; }
    const glm::vec3& normal() const { return normal_; }

private:
    glm::vec3 point_{0.0f};
    glm::vec3 normal_{0.0f, 0.0f, 1.0f};
};

/// Drag state machine used by the viewport's drag tool: begin on a body hit, then every
/// cursor move yields a world target on the drag plane.
class BodyDragger {
public:
    /// Starts a drag if the ray hits a body; the plane faces the camera through the hit.
    std::optional<BodyHit> begin(const FrameSnapshot& frame, const Ray& ray, const glm::vec3& cameraForward);
    /// World target for the grabbed point given the new cursor ray (none if not dragging).
    std::optional<glm::vec3> move(const Ray& ray) const;
    void end() { active_ = false; }
    bool active() const { return active_; }
    int bodyId() const { return hit_.bodyId; }

private:
    bool active_ = false;
    BodyHit hit_;
    DragPlane plane_;
};

inline glm::vec3 toGlm(const Vec3f& v) {
    return {v.x(), v.y(), v.z()};
}
inline Vec3f toEigen(const glm::vec3& v) {
    return {v.x, v.y, v.z};
}

} // namespace octo::render
