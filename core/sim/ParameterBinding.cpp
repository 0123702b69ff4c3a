#include "sim/ParameterBinding.h"

#include "scene/Scene.h"

#include <algorithm>
#include <cmath>

namespace octo {

ParameterSet parametersForScene(const SceneDescription& scene, const std::vector<std::string>& overrides) {
    ParameterSet params;
    params.set("particleRadius", scene.particleRadius);
    params.set("gravityX", scene.gravity.x());
    params.set("gravityY", scene.gravity.y());
    params.set("gravityZ", scene.gravity.z());
    for (const auto& [name, value] : scene.parameters)
        params.setFromString(name, value);
    for (const std::string& o : overrides)
        params.parseAssignment(o);
    params.validate(); // after all assignments: minIterations <= maxIterations ...
    return params;
}

Vec3f gravityOf(const ParameterSet& params) {
    return Vec3f(params.getf(Param::gravityX), params.getf(Param::gravityY), params.getf(Param::gravityZ));
}

float numericalSoundSpeed(const ParameterSet& params, const Aabb& container, std::span<const Vec3f> positions,
                          float initialMaxSpeed) {
    float top = container.min.y();
    for (const Vec3f& x : positions)
        top = std::max(top, x.y());
    const float g = gravityOf(params).norm();
    return std::max(1.0f, 10.0f * std::max(std::sqrt(2.0f * g * (top - container.min.y())), initialMaxSpeed));
}

SphSolver::Config solverConfig(const ParameterSet& params, const SceneDescription& scene, float soundSpeed) {
    SphSolver::Config c = SphSolver::configFrom(params);
    c.soundSpeed = soundSpeed;
    c.domain = scene.container;
    // Centres may overlap the wall plane by up to r/2 (the wall gap is as compressible as
    // the fluid, eta); beyond that a particle has leaked and the safety net puts it back.
    c.containment = scene.container.enlarged(0.5f * c.particleRadius);
    c.escape = scene.container.enlarged(2.0f * c.particleRadius * float(params.geti(Param::boundaryLayers)));
    return c;
}

ParameterEffect effectOf(const std::string& name) {
    ParameterEffect e;
    const ParameterInfo* info = findParameter(name);
    if (!info)
        return e;
    e.surface = info->shapesSurface();
    e.reset = info->needsReset;
    e.solver = !info->needsReset && !e.surface;
    return e;
}

} // namespace octo
