#pragma once
// Orbit / pan / zoom camera for the viewport, and the picking ray through a pixel.
// Pure math (GLM), no GL calls, so it is tested headless.
#include <glm/glm.hpp>

namespace octo::render {

/// A half-line: origin + t * dir, t >= 0, dir normalised.
struct Ray {
    glm::vec3 origin{0.0f};
    glm::vec3 dir{0.0f, 0.0f, -1.0f};
    glm::vec3 at(float t) const { return origin + t * dir; }
};

/// Turntable camera around a target point; up is +y (the simulation's up).
class OrbitCamera {
public:
    void setViewport(int widthPx, int heightPx);
    int width() const { return width_; }
    int height() const { return height_; }

    /// Drag by pixels: horizontal = yaw, vertical = pitch (clamped short of the poles).
    void orbit(float dxPx, float dyPx);
    /// Moves the target in the view plane so the point under the cursor follows it.
    void pan(float dxPx, float dyPx);
    /// Wheel steps (positive = closer); exponential so zoom feels uniform at every scale.
    void zoom(float steps);
    /// Frames a box: target at its centre, distance so the whole box fits the view.
    void fit(const glm::vec3& boxMin, const glm::vec3& boxMax);

    glm::mat4 view() const;
    glm::mat4 projection() const;
    glm::vec3 eye() const;
    glm::vec3 forward() const; ///< unit view direction (eye -> target)

    /// Ray from the eye through a widget pixel (x right, y down, in logical pixels).
    Ray rayThroughPixel(float x, float y) const;
    /// Widget pixel of a world point (inverse of rayThroughPixel up to depth).
    glm::vec2 project(const glm::vec3& world) const;

    glm::vec3 target{0.0f};
    float yawRad = 0.6f;
    float pitchRad = 0.35f;
    float distance = 3.0f;
    float fovYRad = 0.7854f; // 45 degrees

private:
    int width_ = 1;
    int height_ = 1;
};

} // namespace octo::render
