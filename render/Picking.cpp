#include "render/Picking.h"

#include <cmath>

namespace octo::render {

std::optional<float> intersectTriangle(const Ray& ray, const glm::vec3& a, const glm::vec3& b,
                                       const glm::vec3& c) {
    const glm::vec3 e1 = b - a, e2 = c - a;
    const glm::vec3 p = glm::cross(ray.dir, e2);
    const float det = glm::dot(e1, p);
    if (std::abs(det) < 1e-12f)
        return std::nullopt;
    const float invDet = 1.0f / det;
    const glm::vec3 s = ray.origin - a;
    const float u = glm::dot(s, p) * invDet;
    if (u < 0.0f || u > 1.0f)
        return std::nullopt;
    const glm::vec3 q = glm::cross(s, e1);
    const float v = glm::dot(ray.dir, q) * invDet;
    if (v < 0.0f || u + v > 1.0f)
        return std::nullopt;
    const float t = glm::dot(e2, q) * invDet;
    if (t < 0.0f)
        return std::nullopt;
    return t;
}

std::optional<BodyHit> pickBody(const FrameSnapshot& frame, const Ray& ray) {
    std::optional<BodyHit> best;
    for (const BodySnapshot& body : frame.bodies) {
        if (!body.mesh)
            continue;
        // Intersect in body space: transform the ray once instead of every vertex.
        const Mat3f rt = body.rotation.transpose();
        Ray local;
        local.origin = toGlm(rt * (toEigen(ray.origin) - body.translation));
        local.dir = toGlm(rt * toEigen(ray.dir)); // rotation keeps it unit length
        const auto& v = body.mesh->vertices;
        for (const auto& tri : body.mesh->triangles) {
            if (tri[0] >= v.size() || tri[1] >= v.size() || tri[2] >= v.size())
                continue;
            auto t = intersectTriangle(local, toGlm(v[tri[0]]), toGlm(v[tri[1]]), toGlm(v[tri[2]]));
            if (t && (!best || *t < best->t)) {
                best = BodyHit{body.id, *t, ray.at(*t), local.at(*t)};
            }
        }
    }
    return best;
}

DragPlane::DragPlane(const glm::vec3& point, const glm::vec3& normal)
    : point_(point), normal_(glm::normalize(normal)) {}

std::optional<glm::vec3> DragPlane::intersect(const Ray& ray) const {
    const float denom = glm::dot(ray.dir, normal_);
    if (std::abs(denom) < 1e-6f)
        return std::nullopt;
    const float t = glm::dot(point_ - ray.origin, normal_) / denom;
    if (t < 0.0f)
        return std::nullopt;
    return ray.at(t);
}

std::optional<BodyHit> BodyDragger::begin(const FrameSnapshot& frame, const Ray& ray,
                                          const glm::vec3& cameraForward) {
    active_ = false;
    auto hit = pickBody(frame, ray);
    if (!hit)
        return std::nullopt;
    hit_ = *hit;
    plane_ = DragPlane(hit->worldPoint, -cameraForward);
    active_ = true;
    return hit;
}

std::optional<glm::vec3> BodyDragger::move(const Ray& ray) const {
    if (!active_)
        return std::nullopt;
    return plane_.intersect(ray);
}

} // namespace octo::render
