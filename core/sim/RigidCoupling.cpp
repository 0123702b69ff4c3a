#include "sim/RigidCoupling.h"

#include "rigid/MeshProperties.h"
#include "sph/BoundaryModel.h"
#include "sph/FluidState.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace octo {

namespace {
/// True when the body has the second sample shell (createBodyShape: bodies at least 4 d0 thick).
bool twoShellBody(const RigidBody& b, float d0) {
    return meshBounds(b.mesh()).extent().minCoeff() >= 4.0f * d0;
}
} // namespace

void RigidCoupling::reset() {
    objects_.clear();
    version_ = ~uint64_t(0);
}

void RigidCoupling::syncTopology() {
    if (version_ == bodies_.topologyVersion())
        return;
    std::unordered_set<int> alive;
    for (const auto& b : bodies_.bodies())
        alive.insert(b->id());
    for (auto it = objects_.begin(); it != objects_.end();) {
        if (!alive.count(it->first)) {
            if (boundary_.isValid(it->second))
                boundary_.removeObject(it->second);
            it = objects_.erase(it);
        } else {
            ++it;
        }
    }
    for (const auto& b : bodies_.bodies())
        if (!objects_.count(b->id())) {
            // Kinematic bodies do not respond to the fluid (not dynamic objects); their drag is reported.
            // A body's surface is one or two shells of samples at spacing d0: Akinci's Psi
            // over-weights such a slab (it lacks the fluid side: ~43 % for one layer, ~18 % for
            // two), so the fluid would rest over-dense, i.e. farther than d0 from the body (a
            // dilated body). The same calibration as the container walls makes a fluid particle
            // resting at d0 on a flat face exactly rho0 dense (see planarWallPsiScale).
            const float d0 = b->shape().sampleSpacing;
            const bool twoShells = twoShellBody(*b, d0);
            const float scale =
                planarWallPsiScale(boundary_.supportRadius(), d0, twoShells ? 2 : 1, boundary_.kernelKind());
            const int obj = boundary_.addObject(b->boundarySamples(), b->isKinematic(), scale);
            if (b->isKinematic())
                boundary_.reportForces(obj); // its drag, for the statistics
            objects_[b->id()] = obj;
        }
    version_ = bodies_.topologyVersion();
    pushTransforms();
}

void RigidCoupling::pushTransforms(float stepAhead) {
    for (const auto& b : bodies_.bodies()) {
        const auto it = objects_.find(b->id());
        if (it == objects_.end())
            continue;
        // The solver predicts the samples at x + dt v: with the path's mean velocity over the
        // coming step they land where the body will be. With the velocity at the step's start a
        // body that starts at 400 m/s^2 (the cylinder scene) moved 3.5 mm the fluid had not seen,
        // and the next step's pressure turned that overlap into 300 m/s (issue 9).
        const auto [v, omega] = b->meanPathVelocity(bodies_.time(), double(stepAhead));
        boundary_.setObjectTransform(it->second, b->rotation(), b->position(), v, omega);
    }
}

void RigidCoupling::pushKinematicVelocities(float dt) {
    for (const auto& b : bodies_.bodies()) {
        const auto it = objects_.find(b->id());
        if (it == objects_.end() || !b->isKinematic())
            continue;
        const auto [v, omega] = b->meanPathVelocity(bodies_.time(), double(dt));
        boundary_.setObjectVelocity(it->second, v, omega);
    }
}

std::vector<BodyLoad> RigidCoupling::loads() const {
    std::vector<BodyLoad> out;
    const auto x = boundary_.positions();
    const auto f = boundary_.forces();
    for (const auto& b : bodies_.bodies()) {
        const auto it = objects_.find(b->id());
        if (it == objects_.end() || !boundary_.isValid(it->second))
            continue;
        const auto [first, count] = boundary_.objectRange(it->second);
        // Double sums: for a floating body thousands of large, opposing contributions cancel.
        Vec3d F = Vec3d::Zero(), T = Vec3d::Zero();
        const Vec3d c = b->position().cast<double>();
        for (uint32_t k = first; k < first + count; ++k) {
            const Vec3d fk = f[k].cast<double>();
            F += fk;
            T += (x[k].cast<double>() - c).cross(fk);
        }
        out.push_back({b->id(), F.cast<float>(), T.cast<float>()});
    }
    return out;
}

void RigidCoupling::advanceBodies(float dt) {
    lastKinematicWork_ = 0.0;
    if (bodies_.size() == 0) {
        lastLoads_.clear();
        bodies_.setTime(bodies_.time() + double(dt));
        return;
    }
    lastLoads_ = loads();
    // The work of a kinematic body is its load times its displacement over the step.
    std::vector<std::pair<Vec3f, Quatf>> before;
    for (const BodyLoad& l : lastLoads_)
        if (const RigidBody* b = bodies_.body(l.bodyId); b && b->isKinematic())
            before.emplace_back(b->position(), b->orientation());
    bodies_.step(dt, lastLoads_); // kinematic bodies ignore theirs
    size_t k = 0;
    for (const BodyLoad& l : lastLoads_)
        if (const RigidBody* b = bodies_.body(l.bodyId); b && b->isKinematic()) {
            const auto [x0, q0] = before[k++];
            lastKinematicWork_ -= double(l.force.dot(b->position() - x0)) +
                                  double(l.torque.dot(rotationVector(q0, b->orientation())));
        }
    pushTransforms();
}

float RigidCoupling::maxBodySpeed() const {
    float s = 0.0f;
    for (const auto& b : bodies_.bodies())
        s = std::max(s, b->linearVelocity().norm() + b->angularVelocity().norm() * b->shape().boundingRadius);
    return s;
}

int RigidCoupling::objectOf(int bodyId) const {
    const auto it = objects_.find(bodyId);
    return it == objects_.end() ? -1 : it->second;
}

size_t RigidCoupling::sampleCount() const {
    return bodies_.totalSampleCount();
}

namespace {
/// A vertical column over (x, z) in the annulus R <= |(x, z) - c| <= Ro around a body, inside the
/// container and clear of the other bodies' bounding circles.
struct LevelAnnulus {
    Vec3f c;
    float R, Ro;
    Aabb container;
    std::vector<std::pair<Vec3f, float>> others; ///< centre, bounding radius

    bool holds(float x, float z) const {
        const float d2 = (x - c.x()) * (x - c.x()) + (z - c.z()) * (z - c.z());
        if (d2 < R * R || d2 > Ro * Ro || x < container.min.x() || x > container.max.x() ||
            z < container.min.z() || z > container.max.z())
            return false;
        for (const auto& [o, Rb] : others)
            if ((x - o.x()) * (x - o.x()) + (z - o.z()) * (z - o.z()) < Rb * Rb)
                return false;
        return true;
    }
    /// Fraction of a particle's d0 x d0 column footprint centred at (x, z) that lies in the
    /// annulus (4 x 4 midpoints): a particle at the edge counts in part, so the count does not
    /// jump as particles cross it (whole counts made a 0.15 m box's level jitter by ~3 mm at r =
    /// 12.5 mm).
    float share(float x, float z, float d0) const {
        int in = 0;
        for (int i = 0; i < 4; ++i)
            for (int k = 0; k < 4; ++k)
                in += holds(x + (float(i) - 1.5f) * 0.25f * d0, z + (float(k) - 1.5f) * 0.25f * d0);
        return float(in) / 16.0f;
    }
    /// Horizontal area, by midpoint cells of edge `cell` (error ~ cell * perimeter).
    double area(float cell) const {
        const int n = int(std::ceil(2.0f * Ro / cell));
        size_t inside = 0;
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < n; ++k)
                inside += holds(c.x() - Ro + (float(i) + 0.5f) * cell, c.z() - Ro + (float(k) + 0.5f) * cell);
        return double(inside) * double(cell) * double(cell);
    }
};
} // namespace

float RigidCoupling::localFluidLevel(int bodyId, const FluidState& fluid, float r) const {
    const RigidBody* b = bodies_.body(bodyId);
    if (!b || bodies_.container().empty())
        return -std::numeric_limits<float>::infinity();
    // The level the fluid's volume fills, not the top particle + r: the particles of the free
    // surface lack neighbours above, so they pack closer than d0 until their kernel sums reach
    // rho0, and their tops lie ~r/2 below the fluid's volume (a pool at rest, r = 8.5 mm: 4.6 mm;
    // bodies floated that much too high against it: -11 % of the draft of a 0.3 rho0 box). By
    // the vertical momentum balance the pressure at a depth is the weight of the fluid above it,
    // so this level is the one Archimedes' draft refers to. Each particle holds d0^3 (m = rho0 d0^3).
    const float h = 4.0f * r, d0 = 2.0f * r;
    LevelAnnulus ring{b->position(),
                      b->shape().boundingRadius,
                      b->shape().boundingRadius + 3.0f * h,
                      bodies_.container(),
                      {}};
    for (const auto& o : bodies_.bodies())
        if (o->id() != bodyId)
            ring.others.emplace_back(o->position(), o->shape().boundingRadius);
    double count = 0.0;
    const float reach = ring.Ro + d0;
    for (const Vec3f& x : fluid.positions)
        if (std::abs(x.x() - ring.c.x()) < reach && std::abs(x.z() - ring.c.z()) < reach)
            count += ring.share(x.x(), x.z(), d0);
    const double area = ring.area(0.125f * d0);
    if (!(count > 0.0) || !(area > 0.0))
        return -std::numeric_limits<float>::infinity();
    return bodies_.container().min.y() + float(count * double(d0) * double(d0) * double(d0) / area);
}

double RigidCoupling::submergedFraction(int bodyId, const FluidState& fluid, float r) const {
    const RigidBody* b = bodies_.body(bodyId);
    if (!b)
        return 0.0;
    const float level = localFluidLevel(bodyId, fluid, r);
    if (!std::isfinite(level))
        return 0.0;
    return b->fractionBelow(level);
}

} // namespace octo
