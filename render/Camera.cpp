#include "render/Camera.h"

#include <algorithm>
#include <cmath>
#include <glm/gtc/matrix_transform.hpp>

namespace octo::render {

void OrbitCamera::setViewport(int widthPx, int heightPx) {
    width_ = std::max(1, widthPx);
    height_ = std::max(1, heightPx);
}

void OrbitCamera::orbit(float dxPx, float dyPx) {
    const float radPerPx = 0.008f;
    yawRad -= dxPx * radPerPx;
    pitchRad = std::clamp(pitchRad + dyPx * radPerPx, -1.55f, 1.55f);
}

void OrbitCamera::pan(float dxPx, float dyPx) {
    // World size of one pixel at the target's depth keeps the grabbed point under the cursor.
    const float worldPerPx = 2.0f * distance * std::tan(0.5f * fovYRad) / float(height_);
    const glm::vec3 f = forward();
    const glm::vec3 right = glm::normalize(glm::cross(f, glm::vec3(0, 1, 0)));
    const glm::vec3 up = glm::cross(right, f);
    target += (-dxPx * right + dyPx * up) * worldPerPx;
}

void OrbitCamera::zoom(float steps) {
    distance = std::clamp(distance * std::pow(0.85f, steps), 1e-3f, 1e4f);
}

void OrbitCamera::fit(const glm::vec3& boxMin, const glm::vec3& boxMax) {
    // Three-quarter view from above (the floor grid surrounds the container), then the smallest
    // distance at which all eight corners project inside 90 % of the viewport.
    target = 0.5f * (boxMin + boxMax);
    yawRad = 0.6f;
    pitchRad = 0.5f;
    const float radius = std::max(0.5f * glm::length(boxMax - boxMin), 1e-3f);
    const float aspect = float(width_) / float(height_);
    const float halfFov = 0.5f * std::min(fovYRad, 2.0f * std::atan(std::tan(0.5f * fovYRad) * aspect));
    const auto fits = [&](float d) {
        distance = d;
        const glm::mat4 m = projection() * view();
        for (int k = 0; k < 8; ++k) {
            const glm::vec3 c((k & 1) ? boxMax.x : boxMin.x, (k & 2) ? boxMax.y : boxMin.y,
                              (k & 4) ? boxMax.z : boxMin.z);
            glm::vec4 clip = m * glm::vec4(c, 1.0f);
            if (clip.w <= 0.0f)
                return false;
            clip /= clip.w;
            if (std::abs(clip.x) > 0.9f || std::abs(clip.y) > 0.9f)
                return false;
        }
        return true;
    };
    // The bounding sphere always fits; bisect down toward the tightest fit.
    float hi = radius / std::sin(halfFov) * 1.05f, lo = 0.0f;
    for (int i = 0; i < 30; ++i) {
        const float mid = 0.5f * (lo + hi);
        (fits(mid) ? hi : lo) = mid;
    }
    distance = hi;
}

glm::vec3 OrbitCamera::forward() const {
    // Eye sits at yaw/pitch on a sphere around the target; forward points back at the target.
    const glm::vec3 offset(std::cos(pitchRad) * std::sin(yawRad), std::sin(pitchRad),
                           std::cos(pitchRad) * std::cos(yawRad));
    return -offset;
}

glm::vec3 OrbitCamera::eye() const {
    return target - distance * forward();
}

glm::mat4 OrbitCamera::view() const {
    return glm::lookAt(eye(), target, glm::vec3(0, 1, 0));
}

glm::mat4 OrbitCamera::projection() const {
    // Near/far follow the orbit distance so depth precision stays useful at every zoom.
    const float nearZ = std::max(distance * 0.01f, 1e-4f);
    const float farZ = distance * 100.0f + 10.0f;
    return glm::perspective(fovYRad, float(width_) / float(height_), nearZ, farZ);
}

Ray OrbitCamera::rayThroughPixel(float x, float y) const {
    const glm::vec2 ndc(2.0f * x / float(width_) - 1.0f, 1.0f - 2.0f * y / float(height_));
    const glm::mat4 inv = glm::inverse(projection() * view());
    glm::vec4 nearP = inv * glm::vec4(ndc, -1.0f, 1.0f);
    glm::vec4 farP = inv * glm::vec4(ndc, 1.0f, 1.0f);
    nearP /= nearP.w;
    farP /= farP.w;
    Ray ray;
    ray.origin = eye();
    ray.dir = glm::normalize(glm::vec3(farP) - glm::vec3(nearP));
    return ray;
}

glm::vec2 OrbitCamera::project(const glm::vec3& world) const {
    glm::vec4 clip = projection() * view() * glm::vec4(world, 1.0f);
    clip /= clip.w;
    return {(clip.x + 1.0f) * 0.5f * float(width_), (1.0f - clip.y) * 0.5f * float(height_)};
}

} // namespace octo::render
