#pragma once
// The rigid bodies of a Simulation: the RigidBodySystem (contacts, drag spring, kinematic
// paths), the two-way coupling to the fluid's BoundaryModel (RigidCoupling, Akinci 2012), the
// shapes built for the current particle radius, the interactive tools (pick, drag, stir) and
// the per-body statistics. Simulation owns one and calls it around every solver step:
//   beforeStep(fluid, dt)  -> topology + poses into the boundary model, pending stir
//   solver step            -> fluid forces on the body boundary particles
//   afterStep(dt)          -> RigidBodySystem::step with those loads, poses back.
// Not thread-safe (one owner thread, like Simulation).
#include "common/Types.h"
#include "rigid/RigidBodySystem.h"
#include "scene/SceneBodies.h"
#include "sim/FrameSnapshot.h"
#include "sim/RigidCoupling.h"

#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace octo {

class BoundaryModel;
struct FluidState;

/// Per-body statistics of a frame (run --stats-json "bodies").
struct BodyStats {
    int id = -1;
    std::string name;
    bool kinematic = false;
    Vec3f position = Vec3f::Zero(); ///< centre of mass (m)
    Vec3f velocity = Vec3f::Zero(); ///< m/s
    /// Fraction of the body's volume below the local free-surface height around it
    /// (RigidCoupling::localFluidLevel), in [0, 1].
    double submergedFraction = 0.0;
    float fluidLevel = 0.0f; ///< that local level (m); -inf when no fluid is near
    /// The fluid's force on the body (N): its time mean over the last frame, or over the steps
    /// of the frame in progress; a kinematic body's drag too. Gravity and contacts not included.
    Vec3f fluidForce = Vec3f::Zero();
};

class SimulationBodies {
public:
    explicit SimulationBodies(BoundaryModel& boundary);

    /// Container (contact walls), gravity, particle radius r (samples at 2r, contact distance
    /// 2r) and fluid rest density. Call before build/add; shapes are rebuilt when r changes.
    void configure(const Aabb& container, const Vec3f& gravity, float particleRadius, float restDensity);
    void setGravity(const Vec3f& g) { system_.setGravity(g); }
    /// Removes all bodies and adds the scene's, at simulated time `time`. Call after the boundary
    /// model was cleared (the coupling forgets its objects).
    void build(const std::vector<BodyDescription>& bodies, double time);

    /// Adds a body between steps; returns its id. Throws SceneError & co. naming the problem.
    int add(const BodyDescription& body);
    /// Removes a body between steps; false when the id is unknown.
    bool remove(int id);
    size_t size() const { return system_.size(); }

    /// Removes fluid particles that lie inside a body's mesh or closer than r (the rest contact
    /// distance of fluid at a face) to its surface (the scene's fluid boxes may overlap the bodies).
    size_t cullFluid(std::vector<Vec3f>& positions, std::vector<Vec3f>& velocities) const;
    /// 1 for each fluid particle that cullFluid would remove, judged against body `onlyBody`
    /// (a body added while the fluid exists) or, with -1, against every body.
    std::vector<uint8_t> fluidInside(std::span<const Vec3f> positions, int onlyBody = -1) const;

    /// Largest dt (<= dtMax) with which no body point travels more than cfl * d0, looking ahead
    /// along kinematic paths (a path that starts moving within the step counts), and with which
    /// no dynamic body's acceleration from the last fluid loads exceeds the force bound
    /// (accelerationLimit).
    float timeStepLimit(float cflFactor, float dtMax) const;
    /// The force bound cfl sqrt(d0 / |a|) on every dynamic body's acceleration at its bounding
    /// radius, |g + F/m| + |I^-1 T| R, with the fluid's force F and torque T of the last step
    /// (+infinity without dynamic bodies or before the first step).
    float accelerationLimit(float cflFactor) const;

    /// Before the solver step of length dt: boundary objects and poses; pending stir requests.
    void beforeStep(FluidState& fluid, float dt);
    /// Boundary objects and poses now (after add/remove between steps); kinematic bodies with their
    /// path's mean velocities over the next stepAhead seconds (RigidCoupling::pushTransforms).
    void sync(float stepAhead = 0.0f);
    /// After the solver step: integrate the bodies with the fluid's loads (summed over time for
    /// the frame's mean force, see resetForceMeans).
    void afterStep(float dt);
    /// Starts the time means of the fluid forces over (BodyStats::fluidForce).
    void resetForceMeans();
    /// Keeps the rigid system's clock equal to the solver's (after a reset).
    void setTime(double t) { system_.setTime(t); }

    // --- interaction (between steps) ---
    /// Nearest body hit by the ray: (id, hit point in body space).
    std::optional<std::pair<int, Vec3f>> pick(const Vec3f& origin, const Vec3f& dir) const;
    /// Throws std::invalid_argument for an unknown or kinematic body.
    void beginDrag(int id, const Vec3f& bodySpacePoint);
    void setDragTarget(const Vec3f& world) { system_.setDragTarget(world); }
    void endDrag() { system_.endDrag(); }
    /// Fluid particles within `radius` of the ray (t >= 0) get their velocity blended toward
    /// `velocity` at the next step (weight (1 - d^2/radius^2)^2 at distance d from the ray).
    void stir(const Vec3f& origin, const Vec3f& dir, float radius, const Vec3f& velocity);
    /// Same, as an acceleration of 20 m/s^2 * strength at the ray (falling to 0 at radius),
    /// half along the ray, half away from it, for the next step.
    void stir(const Vec3f& origin, const Vec3f& dir, float radius, float strength);

    // --- read ---
    RigidBodySystem& system() { return system_; }
    const RigidBodySystem& system() const { return system_; }
    const RigidCoupling& coupling() const { return coupling_; }
    RigidCoupling& coupling() { return coupling_; }
    std::vector<BodySnapshot> snapshot() const;
    std::vector<BodyStats> stats(const FluidState& fluid) const;
    /// The description a body was made from (nullptr when unknown).
    const BodyDescription* description(int id) const;
    size_t sampleCount() const { return system_.totalSampleCount(); }

private:
    struct Stir {
        Vec3f origin, dir;
        float radius;
        Vec3f velocity;
        float acceleration; ///< > 0: acceleration form
    };
    BoundaryModel& boundary_;
    RigidBodySystem system_;
    RigidCoupling coupling_;
    BodyShapeCache shapes_;
    std::vector<std::pair<int, BodyDescription>> descriptions_;
    std::vector<Stir> stirs_;
    float r_ = 0.01f, rho0_ = 1000.0f;
    // Time integral of each body's fluid force since resetForceMeans (body id -> N s), and its span.
    std::unordered_map<int, Vec3d> forceImpulse_;
    double forceSpan_ = 0.0;
};

} // namespace octo
