#pragma once
// All rigid bodies of a scene, their contacts with each other and with the container walls,
// and the interactive drag spring.
//
// Contact (impulses, not penalty springs; docs/ALGORITHMS.md §3.3): boundary samples act as
// spheres of radius contactDistance/2. Contact points are sample pairs of different bodies
// closer than contactDistance + margin, and samples closer than contactDistance/2 + margin to a
// container wall. They are resolved by sequential impulses (projected Gauss-Seidel on
// accumulated normal and Coulomb friction impulses, Catto 2005 "Iterative Dynamics with
// Temporal Coherence") with speculative contacts (a separated pair may close only its gap in
// one sub-step), so fast bodies do not tunnel and stiff springs cannot explode. Each step is
// split into sub-steps so that no body point moves more than a quarter contact distance per
// sub-step.
//
// Per fluid step the solver: (1) reads each body's boundarySamples() (body space) and
// rotation()/position()/linearVelocity()/angularVelocity() (or worldSamples()/velocityAt()),
// (2) computes the fluid's total force and torque (about position(), world axes) on each body,
// (3) calls step(dt, loads). Kinematic bodies ignore loads and follow their paths.
#include "rigid/RigidBody.h"

#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace octo {

/// Fluid (or other external) load on one body for one step: world force at the centre of mass
/// and world torque about the centre of mass.
struct BodyLoad {
    int bodyId = -1;
    Vec3f force = Vec3f::Zero();  ///< N
    Vec3f torque = Vec3f::Zero(); ///< N m
};

struct ContactSettings {
    float contactDistance = 0.02f;    ///< m; sample spheres touch at this distance (use d0)
    float friction = 0.4f;            ///< Coulomb μ between bodies and against walls
    float restitution = 0.0f;         ///< applied when the approach speed exceeds 0.5 m/s
    int iterations = 12;              ///< Gauss-Seidel sweeps per sub-step
    float maxSubsteps = 64;           ///< cap on sub-steps per step
    float penetrationRecovery = 0.2f; ///< fraction of penetration removed per sub-step
    float maxRecoverySpeed = 0.5f;    ///< m/s cap on the push-out velocity (no explosions)
};

/// The drag: a servo on the grabbed point's velocity (RigidBodySystem::applyDrag).
struct DragSettings {
    /// s; timeOptimal: the time to stop from maxSpeed (braking maxSpeed / responseTime, speeding
    /// up twice as hard); spring: ω = 1/responseTime, critically damped
    float responseTime = 0.12f;
    bool compensateGravity = true; ///< a dragged body is held against its weight
    /// The hand holds the body against the fluid: the fluid's force of the step is cancelled at
    /// the centre of mass (its torque is not), so the water neither slows nor lifts the body.
    /// timeOptimal: the hand's force beyond the weight is at most m 4 maxSpeed / responseTime.
    bool holdAgainstFluid = true;
    /// Approach on the minimum-time profile of bounded acceleration (true) or as the critically
    /// damped linear spring (false, the law before issue 25's reach).
    bool timeOptimal = true;
    float angularDamping = 4.0f; ///< 1/s; damps swinging while dragged
    /// m/s; the grab point approaches the cursor at most this fast (0 = no limit)
    float maxSpeed = 3.0f;
};

struct PickResult {
    int bodyId = -1;
    Vec3f bodyPoint = Vec3f::Zero(); ///< hit point in body space (pass to beginDrag)
    Vec3f worldPoint = Vec3f::Zero();
    float distance = 0.0f; ///< along the normalised ray
};

class RigidBodySystem {
public:
    RigidBodySystem() = default;

    // --- configuration ---
    void setGravity(const Vec3f& g) { gravity_ = g; }
    const Vec3f& gravity() const { return gravity_; }
    /// Container walls (bodies stay inside); empty Aabb (default) = no walls.
    void setContainer(const Aabb& box) { container_ = box; }
    const Aabb& container() const { return container_; }
    ContactSettings& contactSettings() { return contact_; }
    const ContactSettings& contactSettings() const { return contact_; }
    DragSettings& dragSettings() { return drag_; }

    // --- bodies (call between steps) ---
    /// Takes the body, assigns a new stable id (never reused) and returns it.
    int addBody(RigidBody body);
    /// Removes the body; false if the id is unknown. Ends a drag on it.
    bool removeBody(int id);
    void clear();
    RigidBody* body(int id);
    const RigidBody* body(int id) const;
    /// Bodies in insertion order; pointers stay valid until the body is removed.
    const std::vector<std::unique_ptr<RigidBody>>& bodies() const { return bodies_; }
    size_t size() const { return bodies_.size(); }
    /// Incremented by every add/remove: the solver rebuilds its boundary arrays when it changes.
    uint64_t topologyVersion() const { return topologyVersion_; }
    size_t totalSampleCount() const;
    /// All bodies' boundary samples in world space, concatenated in bodies() order, with their
    /// material velocities and the index (into bodies()) of their body. Resizes the outputs.
    void gatherBoundary(std::vector<Vec3f>& positions, std::vector<Vec3f>& velocities,
                        std::vector<uint32_t>& bodyIndex) const;
    /// Sums forces acting on the boundary samples (same order as gatherBoundary; e.g. the
    /// reaction of the fluid's pressure and friction forces, Akinci 2012 eq. 11-12) into one load
    /// per body: F = Σ f_k, τ = Σ (x_k − c) × f_k about the centre of mass c.
    std::vector<BodyLoad> loadsFromSampleForces(std::span<const Vec3f> positions,
                                                std::span<const Vec3f> sampleForces) const;
    /// Id of a body whose mesh contains the world point, or -1 (bounding-sphere culled).
    int bodyContaining(const Vec3f& worldPoint) const;

    // --- time stepping ---
    /// Advances all bodies by dt: kinematic bodies to their path at time()+dt, dynamic bodies
    /// under gravity, the given loads (held constant over the step; unknown ids are ignored),
    /// the drag spring and contacts.
    void step(float dt, std::span<const BodyLoad> loads = {});
    double time() const { return time_; }
    void setTime(double t) { time_ = t; }
    int lastSubsteps() const { return lastSubsteps_; }
    size_t lastContactCount() const { return lastContacts_; }

    // --- interaction ---
    /// Nearest body hit by the ray (dir need not be normalised).
    std::optional<PickResult> pickBody(const Vec3f& rayOrigin, const Vec3f& rayDir) const;
    /// Starts pulling the body's material point bodyPoint (body space) toward the target (which
    /// starts at that point's current world position). Returns false for unknown/kinematic ids.
    bool beginDrag(int bodyId, const Vec3f& bodySpacePoint);
    void setDragTarget(const Vec3f& worldPoint);
    void endDrag();
    bool dragging() const { return dragBody_ >= 0; }

private:
    struct Contact {
        int a = -1, b = -1;                             ///< indices into bodies_; b = -1: wall (static)
        Vec3f rA = Vec3f::Zero(), rB = Vec3f::Zero();   ///< contact point relative to the centres of mass
        Vec3f n = Vec3f::UnitY();                       ///< unit normal from b toward a
        Vec3f t1 = Vec3f::UnitX(), t2 = Vec3f::UnitZ(); ///< tangent basis
        float normalMass = 0, tangentMass1 = 0, tangentMass2 = 0;
        float targetSpeed = 0; ///< required normal separation speed (m/s)
        float lambdaN = 0, lambdaT1 = 0, lambdaT2 = 0;
    };
    void substep(float h, std::span<const Vec3f> loadForce, std::span<const Vec3f> loadTorque);
    void collectContacts(float h, float margin);
    void solveContacts(float h);
    void applyDrag(float h, const Vec3f& fluidForce);
    void applySpringDrag(RigidBody& b, float h);
    Vec3f approachVelocity(const Vec3f& error) const;

    std::vector<std::unique_ptr<RigidBody>> bodies_;
    int nextId_ = 0;
    uint64_t topologyVersion_ = 0;
    Vec3f gravity_{0.0f, -9.81f, 0.0f};
    Aabb container_;
    ContactSettings contact_;
    DragSettings drag_;
    double time_ = 0.0;
    int lastSubsteps_ = 0;
    size_t lastContacts_ = 0;

    int dragBody_ = -1;
    Vec3f dragPoint_ = Vec3f::Zero();
    Vec3f dragTarget_ = Vec3f::Zero();
    Vec3f dragVelocity_ = Vec3f::Zero(); ///< the grabbed point's reference velocity (timeOptimal)

    // scratch reused between steps
    std::vector<Vec3f> worldSamples_;
    std::vector<uint32_t> sampleOffset_;
    std::vector<Contact> contacts_;
};

} // namespace octo
