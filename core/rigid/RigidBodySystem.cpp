#include "rigid/RigidBodySystem.h"

#include "rigid/PointHash.h"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace octo {

int RigidBodySystem::addBody(RigidBody body) {
    auto p = std::make_unique<RigidBody>(std::move(body));
    p->id_ = nextId_++;
    if (p->isKinematic())
        p->followPath(time_);
    bodies_.push_back(std::move(p));
    ++topologyVersion_;
    return bodies_.back()->id_;
}

bool RigidBodySystem::removeBody(int id) {
    auto it = std::find_if(bodies_.begin(), bodies_.end(), [id](const auto& b) { return b->id() == id; });
    if (it == bodies_.end())
        return false;
    if (dragBody_ == id)
        endDrag();
    bodies_.erase(it);
    ++topologyVersion_;
    return true;
}

void RigidBodySystem::clear() {
    endDrag();
    bodies_.clear();
    ++topologyVersion_;
}

RigidBody* RigidBodySystem::body(int id) {
    for (auto& b : bodies_)
        if (b->id() == id)
            return b.get();
    return nullptr;
}

const RigidBody* RigidBodySystem::body(int id) const {
    for (const auto& b : bodies_)
        if (b->id() == id)
            return b.get();
    return nullptr;
}

size_t RigidBodySystem::totalSampleCount() const {
    size_t n = 0;
    for (const auto& b : bodies_)
        n += b->boundarySamples().size();
    return n;
}

void RigidBodySystem::gatherBoundary(std::vector<Vec3f>& positions, std::vector<Vec3f>& velocities,
                                     std::vector<uint32_t>& bodyIndex) const {
    const size_t n = totalSampleCount();
    positions.resize(n);
    velocities.resize(n);
    bodyIndex.resize(n);
    size_t k = 0;
    for (size_t i = 0; i < bodies_.size(); ++i) {
        const RigidBody& b = *bodies_[i];
        for (const Vec3f& s : b.boundarySamples()) {
            positions[k] = b.toWorld(s);
            velocities[k] = b.velocityAt(positions[k]);
            bodyIndex[k] = uint32_t(i);
            ++k;
        }
    }
}

std::vector<BodyLoad> RigidBodySystem::loadsFromSampleForces(std::span<const Vec3f> positions,
                                                             std::span<const Vec3f> sampleForces) const {
    if (positions.size() != totalSampleCount() || sampleForces.size() != positions.size())
        throw std::invalid_argument(
            "loadsFromSampleForces: expected one position and one force per boundary sample");
    std::vector<BodyLoad> loads(bodies_.size());
    size_t k = 0;
    for (size_t i = 0; i < bodies_.size(); ++i) {
        const RigidBody& b = *bodies_[i];
        // Accumulate in double: thousands of opposing contributions nearly cancel (buoyancy).
        Vec3d F = Vec3d::Zero(), T = Vec3d::Zero();
        const Vec3d c = b.position().cast<double>();
        for (size_t s = 0; s < b.boundarySamples().size(); ++s, ++k) {
            const Vec3d f = sampleForces[k].cast<double>();
            F += f;
            T += (positions[k].cast<double>() - c).cross(f);
        }
        loads[i] = {b.id(), F.cast<float>(), T.cast<float>()};
    }
    return loads;
}

int RigidBodySystem::bodyContaining(const Vec3f& p) const {
    for (const auto& b : bodies_) {
        const float r = b->shape().boundingRadius;
        if ((p - b->position()).squaredNorm() <= r * r && b->containsWorldPoint(p))
            return b->id();
    }
    return -1;
}

// ---------------------------------------------------------------------------------------------
// Time stepping

void RigidBodySystem::step(float dt, std::span<const BodyLoad> loads) {
    if (!(dt > 0.0f) || !std::isfinite(dt))
        throw std::invalid_argument("RigidBodySystem::step: dt must be positive");
    const size_t n = bodies_.size();
    std::vector<Vec3f> force(n, Vec3f::Zero()), torque(n, Vec3f::Zero());
    for (const BodyLoad& l : loads)
        for (size_t i = 0; i < n; ++i)
            if (bodies_[i]->id() == l.bodyId) {
                force[i] += l.force;
                torque[i] += l.torque;
            }

    // Sub-steps: no body point may travel more than a quarter contact distance per sub-step (so
    // speculative contacts see every approach), and the drag spring stays well resolved.
    const float d0 = contact_.contactDistance;
    float travel = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        const RigidBody& b = *bodies_[i];
        float speed = b.linearVelocity().norm() + b.angularVelocity().norm() * b.shape().boundingRadius;
        if (!b.isKinematic())
            speed += (gravity_ + force[i] / b.mass()).norm() * dt;
        travel = std::max(travel, speed * dt);
    }
    int sub = std::max(1, int(std::ceil(travel / (0.25f * d0))));
    if (dragging())
        sub = std::max(sub, int(std::ceil(dt / (0.1f * drag_.responseTime))));
    sub = std::min(sub, int(contact_.maxSubsteps));
    lastSubsteps_ = sub;
    const float h = dt / float(sub);
    for (int k = 0; k < sub; ++k) {
        for (auto& b : bodies_)
            if (b->isKinematic())
                b->followPath(time_ + double(k) * h);
        substep(h, force, torque);
    }
    time_ += double(dt);
    for (auto& b : bodies_)
        if (b->isKinematic())
            b->followPath(time_);
}

void RigidBodySystem::substep(float h, std::span<const Vec3f> loadForce, std::span<const Vec3f> loadTorque) {
    for (size_t i = 0; i < bodies_.size(); ++i) {
        RigidBody& b = *bodies_[i];
        if (b.isKinematic())
            continue;
        b.applyForce(h, b.mass() * gravity_ + loadForce[i], loadTorque[i]);
    }
    Vec3f dragLoad = Vec3f::Zero();
    for (size_t i = 0; i < bodies_.size(); ++i)
        if (bodies_[i]->id() == dragBody_)
            dragLoad = loadForce[i];
    applyDrag(h, dragLoad);
    collectContacts(h, 0.5f * contact_.contactDistance);
    solveContacts(h);
    for (auto& b : bodies_)
        b->advancePose(h);
}

void RigidBodySystem::applyDrag(float h, const Vec3f& fluidForce) {
    if (dragBody_ < 0)
        return;
    RigidBody* b = body(dragBody_);
    if (!b || b->isKinematic())
        return;
    if (!drag_.timeOptimal) {
        applySpringDrag(*b, h);
        return;
    }
    // The hand's force, beyond the body's weight, is bounded: m times twice the reference's
    // acceleration. Unbounded, it pressed a floating box through the water onto the floor as if
    // kinematic and squeezed the water out of the gap at 130-290 m/s, a blow-up
    // (test_drag_reach, pressedIntoTheFloorStaysBounded).
    const float tau = drag_.responseTime;
    const float maxForce = drag_.maxSpeed > 0.0f ? b->mass() * 4.0f * drag_.maxSpeed / tau
                                                 : std::numeric_limits<float>::infinity();
    // The hand holds the body: its weight and the fluid's force (held over the step) are
    // cancelled at the centre of mass, so the servo below sees neither.
    Vec3f hold = drag_.holdAgainstFluid ? Vec3f(-fluidForce) : Vec3f::Zero();
    if (hold.norm() > maxForce)
        hold *= maxForce / hold.norm();
    b->applyForce(h, drag_.compensateGravity ? Vec3f(hold - b->mass() * gravity_) : hold, Vec3f::Zero());
    // The grabbed point follows a reference velocity that approaches the cursor on the
    // minimum-time profile, changing by at most 2 maxSpeed / responseTime per second (speeding
    // up from rest in responseTime / 2), so the water is never jolted.
    const Vec3f p = b->toWorld(dragPoint_);
    const Vec3f r = p - b->position();
    Vec3f change = approachVelocity(dragTarget_ - p) - dragVelocity_;
    const float maxChange = 2.0f * drag_.maxSpeed / tau * h;
    if (drag_.maxSpeed > 0.0f && change.norm() > maxChange)
        change *= maxChange / change.norm();
    dragVelocity_ += change;
    // A stiff velocity servo on the point, a soft point constraint (Catto 2011, "Soft
    // constraints", the mouse joint): the impulse J = K^-1 dv with the point's effective mass
    // K = 1/m - [r]x I^-1 [r]x changes the point's velocity by dv, however far off centre it is;
    // the velocity error decays in tau / 16.
    const Vec3f dv = (dragVelocity_ - b->velocityAt(p)) * (1.0f - std::exp(-16.0f / tau * h));
    Mat3f rx;
    rx << 0.0f, -r.z(), r.y(), r.z(), 0.0f, -r.x(), -r.y(), r.x(), 0.0f;
    const Mat3f K = Mat3f::Identity() / b->mass() - rx * b->worldInverseInertia() * rx;
    Vec3f J = K.ldlt().solve(dv);
    const float servoForce = maxForce - hold.norm(); // the hand's budget left after holding
    if (J.norm() > servoForce * h)
        J *= servoForce * h / J.norm();
    b->applyForce(h, J / h, r.cross(J) / h);
    b->setAngularMomentum(b->angularMomentum() / (1.0f + h * drag_.angularDamping));
}

Vec3f RigidBodySystem::approachVelocity(const Vec3f& error) const {
    // The minimum-time approach of a point whose acceleration is bounded by a (the switching
    // curve of the double integrator's bang-bang control, Kirk 1970, "Optimal Control Theory"):
    // speed sqrt(2 a e) at the distance e, so it stops at the target. Braking at a =
    // maxSpeed / responseTime leaves the servo half its bound to follow the curve. Near the
    // target, where that curve's slope exceeds the servo's gain / 4, the speed falls linearly,
    // critically damped with the servo.
    const float e = error.norm();
    if (!(e > 0.0f))
        return Vec3f::Zero();
    const float tau = drag_.responseTime;
    float speed = 4.0f / tau * e;
    if (drag_.maxSpeed > 0.0f)
        speed = std::min({speed, std::sqrt(2.0f * drag_.maxSpeed / tau * e), drag_.maxSpeed});
    return error * (speed / e);
}

void RigidBodySystem::applySpringDrag(RigidBody& b, float h) {
    // Critically damped spring on the material point: F = m (ω² e − 2 ω v_p), i.e. k = m ω²,
    // c = 2 √(k m). Using the full mass (≥ the effective mass at an off-centre point) errs on the
    // over-damped side, so the point does not overshoot.
    const float w = 1.0f / drag_.responseTime;
    const Vec3f p = b.toWorld(dragPoint_);
    const Vec3f vp = b.velocityAt(p);
    // The same force as a velocity servo, F = 2 ω m (v_pull − v_p) with v_pull = ω e / 2, and v_pull
    // capped at maxSpeed: the spring's response follows the real-time factor (a slow simulation gets
    // a stiff spring), so a far cursor asked for ω e / 2 ~ 30 m/s through the water, whose splash cut
    // the step and the real-time factor 7x while the body crossed a tank (docs/BENCHMARKS.md §2).
    Vec3f pull = 0.5f * w * (dragTarget_ - p);
    if (drag_.maxSpeed > 0.0f && pull.norm() > drag_.maxSpeed)
        pull *= drag_.maxSpeed / pull.norm();
    Vec3f F = b.mass() * (2.0f * w) * (pull - vp);
    Vec3f Fcom = drag_.compensateGravity ? Vec3f(-b.mass() * gravity_) : Vec3f::Zero();
    b.applyForce(h, F + Fcom, (p - b.position()).cross(F));
    b.setAngularMomentum(b.angularMomentum() / (1.0f + h * drag_.angularDamping));
}

namespace {

using Bodies = std::vector<std::unique_ptr<RigidBody>>;

/// Every body's boundary samples in world space: body i's are world[offset[i]] to world[offset[i + 1] - 1].
void placeWorldSamples(const Bodies& bodies, std::vector<uint32_t>& offset, std::vector<Vec3f>& world) {
    const size_t n = bodies.size();
    offset.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i)
        offset[i + 1] = offset[i] + uint32_t(bodies[i]->boundarySamples().size());
    world.resize(offset[n]);
    for (size_t i = 0; i < n; ++i) {
        const RigidBody& b = *bodies[i];
        const auto& s = b.boundarySamples();
        for (size_t k = 0; k < s.size(); ++k)
            world[offset[i] + k] = b.toWorld(s[k]);
    }
}

/// Bodies against the container walls (walls are static, infinitely massive): calls
/// add(body, -1, point, normal, separation) for each sample closer than margin to a wall.
template <class Add>
void collectWallContacts(const Bodies& bodies, const Aabb& container, const std::vector<uint32_t>& offset,
                         const std::vector<Vec3f>& world, float rc, float margin, Add&& add) {
    for (size_t i = 0; i < bodies.size(); ++i) {
        const RigidBody& b = *bodies[i];
        if (b.isKinematic())
            continue;
        const Aabb wb = b.worldBounds();
        const Aabb inner(container.min.array() + (rc + margin), container.max.array() - (rc + margin));
        if ((wb.min.array() >= inner.min.array()).all() && (wb.max.array() <= inner.max.array()).all())
            continue;
        for (uint32_t k = offset[i]; k < offset[i + 1]; ++k) {
            const Vec3f& p = world[k];
            for (int axis = 0; axis < 3; ++axis) {
                const float lo = p[axis] - container.min[axis] - rc;
                const float hi = container.max[axis] - p[axis] - rc;
                if (lo < margin) {
                    Vec3f nrm = Vec3f::Zero();
                    nrm[axis] = 1.0f;
                    add(int(i), -1, p, nrm, lo);
                }
                if (hi < margin) {
                    Vec3f nrm = Vec3f::Zero();
                    nrm[axis] = -1.0f;
                    add(int(i), -1, p, nrm, hi);
                }
            }
        }
    }
}

/// Body pairs: each sample of body a against its nearest sample of body b within d0 + margin;
/// the sample spheres (radius d0/2) touch at distance d0. Calls add(a, b, point, normal, separation).
template <class Add>
void collectPairContacts(const Bodies& bodies, const std::vector<uint32_t>& offset,
                         const std::vector<Vec3f>& world, float d0, float margin, Add&& add) {
    const size_t n = bodies.size();
    const float reach = d0 + margin;
    PointHash hash(reach);
    for (size_t a = 0; a < n; ++a)
        for (size_t b = a + 1; b < n; ++b) {
            const RigidBody& A = *bodies[a];
            const RigidBody& B = *bodies[b];
            if (A.isKinematic() && B.isKinematic())
                continue;
            const float ra = A.shape().boundingRadius, rb = B.shape().boundingRadius;
            if ((A.position() - B.position()).norm() > ra + rb + reach)
                continue;
            hash.reset(reach);
            for (uint32_t k = offset[b]; k < offset[b + 1]; ++k)
                if ((world[k] - A.position()).norm() <= ra + reach)
                    hash.insert(world[k]);
            if (hash.size() == 0)
                continue;
            for (uint32_t k = offset[a]; k < offset[a + 1]; ++k) {
                const Vec3f& p = world[k];
                if ((p - B.position()).norm() > rb + reach)
                    continue;
                uint32_t j = 0;
                const float d2 = hash.nearestSquaredDistance(p, &j);
                if (!(d2 < reach * reach) || d2 <= 0.0f)
                    continue;
                const Vec3f& q = hash.points()[j];
                const float d = std::sqrt(d2);
                add(int(a), int(b), 0.5f * (p + q), (p - q) / d, d - d0);
            }
        }
}

/// A contact's effective masses and tangent basis, and its restitution target speed.
template <class ContactT>
void prepareContact(ContactT& c, const Bodies& bodies, const ContactSettings& settings) {
    const RigidBody& A = *bodies[size_t(c.a)];
    const Mat3f IA = A.worldInverseInertia();
    Mat3f IB = Mat3f::Zero();
    float invMB = 0.0f;
    if (c.b >= 0) {
        IB = bodies[size_t(c.b)]->worldInverseInertia();
        invMB = bodies[size_t(c.b)]->inverseMass();
    }
    auto effMass = [&](const Vec3f& dir) {
        const Vec3f ra = c.rA.cross(dir), rb = c.rB.cross(dir);
        const float k = A.inverseMass() + invMB + ra.dot(IA * ra) + rb.dot(IB * rb);
        return k > 0.0f ? 1.0f / k : 0.0f;
    };
    c.t1 = c.n.unitOrthogonal();
    c.t2 = c.n.cross(c.t1);
    c.normalMass = effMass(c.n);
    c.tangentMass1 = effMass(c.t1);
    c.tangentMass2 = effMass(c.t2);
    if (settings.restitution > 0.0f) {
        const Vec3f vb = c.b >= 0 ? bodies[size_t(c.b)]->velocityAt(c.rB + bodies[size_t(c.b)]->position())
                                  : Vec3f::Zero();
        const float vn = (A.velocityAt(c.rA + A.position()) - vb).dot(c.n);
        if (vn < -0.5f)
            c.targetSpeed = std::max(c.targetSpeed, -settings.restitution * vn);
    }
}

} // namespace

void RigidBodySystem::collectContacts(float h, float margin) {
    contacts_.clear();
    const float d0 = contact_.contactDistance;
    const float rc = 0.5f * d0;
    placeWorldSamples(bodies_, sampleOffset_, worldSamples_);

    auto addContact = [&](int a, int b, const Vec3f& point, const Vec3f& normal, float separation) {
        Contact c;
        c.a = a;
        c.b = b;
        c.n = normal;
        c.rA = point - bodies_[size_t(a)]->position();
        c.rB = b >= 0 ? Vec3f(point - bodies_[size_t(b)]->position()) : Vec3f::Zero();
        // Speculative when separated (may close the gap in this sub-step), Baumgarte-like
        // recovery when penetrating, capped so deep overlaps separate gently.
        if (separation > 0.0f)
            c.targetSpeed = -separation / h;
        else
            c.targetSpeed =
                std::min(contact_.penetrationRecovery * (-separation) / h, contact_.maxRecoverySpeed);
        contacts_.push_back(c);
    };
    if (!container_.empty())
        collectWallContacts(bodies_, container_, sampleOffset_, worldSamples_, rc, margin, addContact);
    collectPairContacts(bodies_, sampleOffset_, worldSamples_, d0, margin, addContact);

    // Effective masses and tangent bases.
    for (Contact& c : contacts_)
        prepareContact(c, bodies_, contact_);
    lastContacts_ = contacts_.size();
}

void RigidBodySystem::solveContacts(float h) {
    if (contacts_.empty())
        return;
    const size_t n = bodies_.size();
    std::vector<Vec3f> v(n), w(n);
    std::vector<Mat3f> invI(n);
    std::vector<float> invM(n);
    for (size_t i = 0; i < n; ++i) {
        v[i] = bodies_[i]->linearVelocity();
        w[i] = bodies_[i]->angularVelocity();
        invI[i] = bodies_[i]->worldInverseInertia();
        invM[i] = bodies_[i]->inverseMass();
    }
    auto relVel = [&](const Contact& c) {
        Vec3f r = v[size_t(c.a)] + w[size_t(c.a)].cross(c.rA);
        if (c.b >= 0)
            r -= v[size_t(c.b)] + w[size_t(c.b)].cross(c.rB);
        return r;
    };
    auto apply = [&](const Contact& c, const Vec3f& P) {
        v[size_t(c.a)] += invM[size_t(c.a)] * P;
        w[size_t(c.a)] += invI[size_t(c.a)] * c.rA.cross(P);
        if (c.b >= 0) {
            v[size_t(c.b)] -= invM[size_t(c.b)] * P;
            w[size_t(c.b)] -= invI[size_t(c.b)] * c.rB.cross(P);
        }
    };
    const float mu = contact_.friction;
    for (int it = 0; it < contact_.iterations; ++it) {
        for (Contact& c : contacts_) {
            // Normal: accumulated impulse clamped to push only.
            const float vn = relVel(c).dot(c.n);
            float dl = c.normalMass * (c.targetSpeed - vn);
            const float old = c.lambdaN;
            c.lambdaN = std::max(0.0f, old + dl);
            dl = c.lambdaN - old;
            if (dl != 0.0f)
                apply(c, dl * c.n);
            // Coulomb friction, box-clamped per tangent.
            const float limit = mu * c.lambdaN;
            const Vec3f vr = relVel(c);
            const float o1 = c.lambdaT1, o2 = c.lambdaT2;
            c.lambdaT1 = std::clamp(o1 - c.tangentMass1 * vr.dot(c.t1), -limit, limit);
            c.lambdaT2 = std::clamp(o2 - c.tangentMass2 * vr.dot(c.t2), -limit, limit);
            apply(c, (c.lambdaT1 - o1) * c.t1 + (c.lambdaT2 - o2) * c.t2);
        }
    }
    for (size_t i = 0; i < n; ++i) {
        RigidBody& b = *bodies_[i];
        if (b.isKinematic())
            continue;
        b.v_ = v[i];
        b.omega_ = w[i];
        b.L_ = b.worldInertia() * w[i];
    }
}

// ---------------------------------------------------------------------------------------------
// Interaction

std::optional<PickResult> RigidBodySystem::pickBody(const Vec3f& origin, const Vec3f& dir) const {
    if (!(dir.squaredNorm() > 0.0f))
        return std::nullopt;
    const Vec3f d = dir.normalized();
    std::optional<PickResult> best;
    for (const auto& b : bodies_) {
        const Vec3f o = b->toBody(origin);
        const Vec3f db = b->rotation().transpose() * d;
        const float maxT = best ? best->distance : std::numeric_limits<float>::max();
        if (auto hit = b->shape().bvh.raycast(o, db, maxT)) {
            PickResult r;
            r.bodyId = b->id();
            r.bodyPoint = hit->point;
            r.worldPoint = b->toWorld(hit->point);
            r.distance = hit->t;
            best = r;
        }
    }
    return best;
}

bool RigidBodySystem::beginDrag(int bodyId, const Vec3f& bodySpacePoint) {
    const RigidBody* b = body(bodyId);
    if (!b || b->isKinematic() || !bodySpacePoint.allFinite())
        return false;
    dragBody_ = bodyId;
    dragPoint_ = bodySpacePoint;
    dragTarget_ = b->toWorld(bodySpacePoint);
    dragVelocity_ = b->velocityAt(dragTarget_);
    return true;
}

void RigidBodySystem::setDragTarget(const Vec3f& worldPoint) {
    if (worldPoint.allFinite())
        dragTarget_ = worldPoint;
}

void RigidBodySystem::endDrag() {
    dragBody_ = -1;
}

} // namespace octo
