// Simulation's rigid-body calls (two-way coupled after Akinci 2012; between steps).
#include "sim/SimulationImpl.h"

#include "scene/SceneBodies.h"

#include <cmath>
#include <stdexcept>

namespace octo {

int Simulation::addBody(const BodyDescription& body) {
    Impl& s = *impl_;
    if (s.resetPending)
        s.build();
    const int id = s.bodies.add(body);
    s.bodies.sync(); // its boundary object and pose now (snapshot, counts)
    // Fluid inside the new body (or closer than r to its surface) would be crushed out of it by
    // the boundary pressure in the first steps: remove it, as the scene set-up does.
    const size_t before = s.solver->particleCount();
    s.solver->removeParticles(s.bodies.fluidInside(s.solver->state().positions, id));
    if (s.solver->particleCount() != before)
        s.surface.invalidate();
    s.monitor.forgetReference(); // the body brings its own energy
    return id;
}

int Simulation::addBody(const std::string& shape, const Vec3f& position, float size, float density) {
    if (!(size > 0.0f) || !std::isfinite(size))
        throw std::invalid_argument("addBody: size must be > 0");
    if (!(density > 0.0f) || !std::isfinite(density))
        throw std::invalid_argument("addBody: density must be > 0");
    if (!position.allFinite())
        throw std::invalid_argument("addBody: position must be finite");
    BodyDescription d;
    d.position = position;
    d.density = density;
    if (shape == "box") {
        d.shape = BodyDescription::Shape::Box;
        d.size = Vec3f::Constant(size);
    } else if (shape == "sphere") {
        d.shape = BodyDescription::Shape::Sphere;
        d.radius = 0.5f * size;
    } else if (shape == "cylinder") {
        d.shape = BodyDescription::Shape::Cylinder;
        d.radius = 0.5f * size;
        d.height = size;
    } else if (shape == "armadillo") {
        d.shape = BodyDescription::Shape::Mesh;
        d.name = "armadillo";
        d.meshPath = resolveMeshPath("armadillo.obj", impl_->scene.sourcePath);
        FluidMesh probe;
        probe.meshPath = d.meshPath;
        d.meshScale = size / fluidMeshBounds(probe).extent().maxCoeff();
    } else {
        throw std::invalid_argument("addBody: unknown shape '" + shape +
                                    "' (box, sphere, cylinder, armadillo)");
    }
    return addBody(d);
}

void Simulation::removeBody(int id) {
    Impl& s = *impl_;
    if (!s.bodies.remove(id))
        throw std::invalid_argument("removeBody: no body with id " + std::to_string(id));
    s.bodies.sync();
    s.monitor.forgetReference();
}

std::optional<std::pair<int, Vec3f>> Simulation::pickBody(const Vec3f& origin, const Vec3f& dir) const {
    return impl_->bodies.pick(origin, dir);
}

int Simulation::pickBody(const Vec3f& origin, const Vec3f& dir, Vec3f* bodySpaceHit) const {
    const auto hit = impl_->bodies.pick(origin, dir);
    if (!hit)
        return -1;
    if (bodySpaceHit)
        *bodySpaceHit = hit->second;
    return hit->first;
}

void Simulation::beginDrag(int id, const Vec3f& bodySpacePoint) {
    impl_->bodies.beginDrag(id, bodySpacePoint);
}
void Simulation::setDragTarget(const Vec3f& worldPoint) {
    impl_->bodies.setDragTarget(worldPoint);
}
void Simulation::endDrag() {
    impl_->bodies.endDrag();
}

void Simulation::stir(const Vec3f& origin, const Vec3f& dir, float radius, const Vec3f& velocity) {
    impl_->monitor.stirred();
    impl_->bodies.stir(origin, dir, radius, velocity);
}
void Simulation::stir(const Vec3f& origin, const Vec3f& dir, float radius, float strength) {
    impl_->monitor.stirred();
    impl_->bodies.stir(origin, dir, radius, strength);
}

std::vector<BodySnapshot> Simulation::bodies() const {
    return impl_->bodies.snapshot();
}
std::vector<BodyStats> Simulation::bodyStats() const {
    std::vector<BodyStats> out = impl_->bodies.stats(impl_->solver->state());
    impl_->frames.useFrameVelocities(out); // the last frame's mean (advanceFrame), else the current one
    return out;
}
const RigidBodySystem& Simulation::rigidBodies() const {
    return impl_->bodies.system();
}
RigidBodySystem& Simulation::rigidBodies() {
    return impl_->bodies.system();
}
size_t Simulation::bodySampleCount() const {
    return impl_->bodies.sampleCount();
}

} // namespace octo
