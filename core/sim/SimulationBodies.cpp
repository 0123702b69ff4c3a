#include "sim/SimulationBodies.h"

#include "scene/Scene.h"
#include "sph/BoundaryModel.h"
#include "sph/FluidState.h"
#include "sph/TimeStepController.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace octo {

SimulationBodies::SimulationBodies(BoundaryModel& boundary)
    : boundary_(boundary), coupling_(system_, boundary) {}

void SimulationBodies::configure(const Aabb& container, const Vec3f& gravity, float r, float rho0) {
    if (!(r > 0.0f) || !(rho0 > 0.0f))
        throw std::invalid_argument("SimulationBodies: radius and density must be > 0");
    if (r != r_)
        shapes_.clear();
    r_ = r;
    rho0_ = rho0;
    system_.setContainer(container);
    system_.setGravity(gravity);
    // Sample spheres of radius r touch at d0: with the samples r inside the meshes (SceneBodies.h)
    // the meshes themselves touch each other and the container faces.
    system_.contactSettings().contactDistance = 2.0f * r;
}

void SimulationBodies::build(const std::vector<BodyDescription>& bodies, double time) {
    system_.clear();
    descriptions_.clear();
    stirs_.clear();
    resetForceMeans();
    coupling_.reset();
    system_.setTime(time);
    for (size_t i = 0; i < bodies.size(); ++i) {
        try {
            add(bodies[i]);
        } catch (const std::exception& e) { // name the scene entry: "field 'bodies[1]': body 'box' ..."
            throw SceneError("field 'bodies[" + std::to_string(i) + "]': " + e.what());
        }
    }
    coupling_.syncTopology();
}

int SimulationBodies::add(const BodyDescription& d) {
    auto shape = shapes_.shape(d, r_, &system_.container()); // too large: refused before sampling
    RigidBody body = makeRigidBody(d, shape, rho0_, system_.time());
    std::vector<const RigidBody*> others;
    for (const auto& b : system_.bodies())
        others.push_back(b.get());
    checkBodyPlacement(d, body, others, system_.container(), r_); // outside, too large, overlapping
    const int id = system_.addBody(std::move(body));
    descriptions_.emplace_back(id, d);
    return id;
}

bool SimulationBodies::remove(int id) {
    if (!system_.removeBody(id))
        return false;
    descriptions_.erase(std::remove_if(descriptions_.begin(), descriptions_.end(),
                                       [id](const auto& p) { return p.first == id; }),
                        descriptions_.end());
    return true;
}

const BodyDescription* SimulationBodies::description(int id) const {
    for (const auto& [i, d] : descriptions_)
        if (i == id)
            return &d;
    return nullptr;
}

std::vector<uint8_t> SimulationBodies::fluidInside(std::span<const Vec3f> x, int onlyBody) const {
    std::vector<uint8_t> drop(x.size(), 0);
    // A fluid particle rests at d0 from a flat layer of boundary samples (Akinci et al. 2012, eq.
    // 4-5, with the slab calibration of planarWallPsiScale), and the samples lie r inside the
    // mesh: at rest a fluid centre is r from the mesh surface. A layer closer than that starts
    // compressed (cubic spline, two sample shells: +2.7 % at 0.9 r, +16 % at 0.5 r; a body added
    // with fluid 0.75 d0 from its samples was thrown out at 176 m/s), so the cull removes what
    // lies inside the mesh or closer than r to it, by the exact distance to the mesh (the
    // distance to the samples, spaced d0, kept particles 0.41-1 r from a face between them).
    // What stays lies r to r + d0 from a face: a void under one layer, which gravity closes.
    // A layer exactly at the contact stays: a face on the lattice (a box placed at a multiple of
    // d0 from a wall) puts one there, and float rounding must not decide whether it is culled.
    const float contact = (1.0f - 1e-3f) * r_;
    std::vector<const RigidBody*> bodies;
    for (const auto& b : system_.bodies())
        if (onlyBody < 0 || b->id() == onlyBody)
            bodies.push_back(b.get());
    if (bodies.empty())
        return drop;
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, x.size(), 4096), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i < r.end(); ++i)
                for (const RigidBody* b : bodies) {
                    const float R = b->shape().boundingRadius + contact;
                    if ((x[i] - b->position()).squaredNorm() > R * R)
                        continue;
                    if (b->surfaceDistance(x[i], contact) < contact || b->containsWorldPoint(x[i])) {
                        drop[i] = 1;
                        break;
                    }
                }
        });
    return drop;
}

size_t SimulationBodies::cullFluid(std::vector<Vec3f>& x, std::vector<Vec3f>& v) const {
    if (system_.size() == 0)
        return 0;
    const std::vector<uint8_t> drop = fluidInside(x);
    size_t k = 0;
    for (size_t i = 0; i < x.size(); ++i)
        if (!drop[i]) {
            x[k] = x[i];
            if (!v.empty())
                v[k] = v[i];
            ++k;
        }
    const size_t removed = x.size() - k;
    x.resize(k);
    if (!v.empty())
        v.resize(k);
    return removed;
}

float SimulationBodies::timeStepLimit(float cfl, float dtMax) const {
    const float d0 = 2.0f * r_;
    const float travel = cfl * d0;
    float dt = dtMax;
    for (const auto& b : system_.bodies()) {
        const float R = b->shape().boundingRadius;
        if (b->isKinematic()) {
            // Look ahead: the pose change over dt (the path may start or speed up within it).
            const double t = system_.time();
            const RigidBody& k = *b;
            for (int halvings = 0; halvings < 30; ++halvings) {
                RigidBody probe = k;
                probe.followPath(t + double(dt));
                const float angle =
                    Eigen::AngleAxisf(probe.orientation() * k.orientation().conjugate()).angle();
                const float moved = (probe.position() - k.position()).norm() + std::abs(angle) * R;
                const float speedNow = k.linearVelocity().norm() + k.angularVelocity().norm() * R;
                if (moved <= travel && speedNow * dt <= travel)
                    break;
                dt *= 0.5f;
            }
        } else {
            const float speed = b->linearVelocity().norm() + b->angularVelocity().norm() * R;
            if (speed > 0.0f)
                dt = std::min(dt, travel / speed);
        }
    }
    return std::min(dt, accelerationLimit(cfl));
}

float SimulationBodies::accelerationLimit(float cfl) const {
    // Explicit coupling (Akinci et al. 2012, section 4): the fluid's step sees a body's samples at
    // x + dt v, the body then moves with the step's fluid load to x + dt v + dt^2 a. That dt^2 a is
    // a gap or an overlap no pressure iteration saw; the next step corrects it with a pressure
    // ~ 1/dt^2, which is the load of the next step: the lag that makes explicit coupling of light
    // bodies unstable, the motivation of strong coupling (Gissler et al. 2019, "Interlinked SPH
    // pressure solvers for strong fluid-rigid coupling", ACM TOG 38(1) 5). The fluid's force bound,
    // applied to each body's own acceleration from the last loads (gravity and the fluid's force
    // and torque; contacts are resolved inside RigidBodySystem::step), keeps that lag below
    // cfl^2 d0 at every sample. It cannot run away as the fluid's total bound did: a load ~ e/dt^2
    // from a residual compression e gives dt_bound / dt ~ cfl / sqrt(e rho0 A d0 / m), > 1 unless
    // e exceeds cfl^2 m / (rho0 A d0) (0.16 x 3 for a 0.5 rho0 box 6 d0 wide).
    float dt = std::numeric_limits<float>::infinity();
    const float d0 = 2.0f * r_;
    for (const BodyLoad& l : coupling_.lastLoads()) {
        const RigidBody* b = system_.body(l.bodyId);
        if (!b || b->isKinematic())
            continue;
        const Vec3f linear = system_.gravity() + l.force / b->mass();
        const Vec3f angular = b->worldInverseInertia() * l.torque;
        const float accel = linear.norm() + angular.norm() * b->shape().boundingRadius;
        dt = std::min(dt, TimeStepController::forceLimit(cfl, d0, accel));
    }
    return dt;
}

void SimulationBodies::sync(float stepAhead) {
    coupling_.syncTopology();
    coupling_.pushTransforms(stepAhead);
}

void SimulationBodies::beforeStep(FluidState& fluid, float dt) {
    sync(dt);
    if (stirs_.empty())
        return;
    const std::vector<Stir> stirs = std::move(stirs_);
    stirs_.clear();
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, fluid.size(), 4096), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i < r.end(); ++i) {
                const Vec3f x = fluid.positions[i];
                for (const Stir& s : stirs) {
                    const Vec3f rel = x - s.origin;
                    const float t = rel.dot(s.dir);
                    if (t < 0.0f)
                        continue;
                    const Vec3f radial = rel - t * s.dir;
                    const float d2 = radial.squaredNorm(), R2 = s.radius * s.radius;
                    if (d2 >= R2)
                        continue;
                    const float w = (1.0f - d2 / R2) * (1.0f - d2 / R2);
                    Vec3f& v = fluid.velocities[i];
                    if (s.acceleration > 0.0f) {
                        const Vec3f out = d2 > 1e-12f ? Vec3f(radial / std::sqrt(d2)) : Vec3f::Zero();
                        v += (dt * s.acceleration * w) * (0.5f * s.dir + 0.5f * out);
                    } else {
                        v += w * (s.velocity - v);
                    }
                }
            }
        });
}

void SimulationBodies::afterStep(float dt) {
    coupling_.advanceBodies(dt);
    for (const BodyLoad& l : coupling_.lastLoads())
        // try_emplace with zero: a default-constructed Eigen vector is uninitialised (the NaN
        // fluidForce of every new body).
        forceImpulse_.try_emplace(l.bodyId, Vec3d::Zero()).first->second +=
            double(dt) * l.force.cast<double>();
    forceSpan_ += double(dt);
}

void SimulationBodies::resetForceMeans() {
    forceImpulse_.clear();
    forceSpan_ = 0.0;
}

std::optional<std::pair<int, Vec3f>> SimulationBodies::pick(const Vec3f& origin, const Vec3f& dir) const {
    if (!origin.allFinite() || !dir.allFinite())
        return std::nullopt;
    const auto hit = system_.pickBody(origin, dir);
    if (!hit)
        return std::nullopt;
    return std::make_pair(hit->bodyId, hit->bodyPoint);
}

void SimulationBodies::beginDrag(int id, const Vec3f& p) {
    const RigidBody* b = system_.body(id);
    if (!b)
        throw std::invalid_argument("beginDrag: no body with id " + std::to_string(id));
    if (b->isKinematic())
        throw std::invalid_argument("beginDrag: body " + std::to_string(id) + " is kinematic");
    if (!system_.beginDrag(id, p))
        throw std::invalid_argument("beginDrag: invalid grab point");
}

void SimulationBodies::stir(const Vec3f& origin, const Vec3f& dir, float radius, const Vec3f& velocity) {
    if (!origin.allFinite() || !velocity.allFinite() || !(dir.squaredNorm() > 0.0f) || !(radius > 0.0f))
        return;
    stirs_.push_back({origin, dir.normalized(), radius, velocity, 0.0f});
}

void SimulationBodies::stir(const Vec3f& origin, const Vec3f& dir, float radius, float strength) {
    if (!origin.allFinite() || !(dir.squaredNorm() > 0.0f) || !(radius > 0.0f) || !(strength > 0.0f))
        return;
    stirs_.push_back({origin, dir.normalized(), radius, Vec3f::Zero(), 20.0f * std::min(strength, 50.0f)});
}

std::vector<BodySnapshot> SimulationBodies::snapshot() const {
    std::vector<BodySnapshot> out;
    out.reserve(system_.size());
    for (const auto& b : system_.bodies()) {
        BodySnapshot s;
        s.id = b->id();
        s.name = b->name();
        s.rotation = b->rotation();
        s.translation = b->position(); // centre of mass = origin of the body-space mesh
        s.velocity = b->linearVelocity();
        s.density = b->density();
        s.kinematic = b->isKinematic();
        s.mesh = b->meshPtr();
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<BodyStats> SimulationBodies::stats(const FluidState& fluid) const {
    std::vector<BodyStats> out;
    for (const auto& b : system_.bodies()) {
        BodyStats s;
        s.id = b->id();
        s.name = b->name();
        s.kinematic = b->isKinematic();
        s.position = b->position();
        s.velocity = b->linearVelocity();
        s.fluidLevel = coupling_.localFluidLevel(b->id(), fluid, r_);
        s.submergedFraction = std::isfinite(s.fluidLevel) ? b->fractionBelow(s.fluidLevel) : 0.0;
        const auto f = forceImpulse_.find(b->id());
        if (f != forceImpulse_.end() && forceSpan_ > 0.0)
            s.fluidForce = (f->second / forceSpan_).cast<float>();
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace octo
