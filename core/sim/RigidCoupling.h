#pragma once
// Two-way rigid-fluid coupling after Akinci, Ihmsen, Akinci, Solenthaler & Teschner 2012,
// "Versatile rigid-fluid coupling for incompressible SPH", ACM TOG 31(4) 62, section 4.
//
// Every rigid body of a RigidBodySystem is one object of the fluid's BoundaryModel (its
// body-space boundary samples; Psi_k = rho0 / sum_l W_kl over the object's own samples, eq. 4-5,
// invariant under the body's rigid motion, times the one-layer slab calibration that the
// container walls also use, planarWallPsiScale). Per fluid step:
//   1. syncTopology(): objects follow RigidBodySystem::topologyVersion() (bodies added/removed
//      between steps);
//   2. pushTransforms(): object pose and material velocities from the bodies;
//   3. the PCISPH step (boundary in the density and in every pressure iteration; pressure
//      force F_i<-k = -m_i Psi_k ((p_i + p_k) / rho_i^2) grad W_ik, eq. 10 with the fluid's
//      pressure mirrored into the body (Pcisph_Solenthaler2009), and friction, eq. 11; the solver adds the
//      reactions F_k<-i = -F_i<-k to the boundary particles of the bodies);
//   4. advanceBodies(dt): per body F = sum_k F_k<-i, tau = sum_k (x_k - c) x F_k<-i about its
//      centre of mass c (eq. 12-13), then RigidBodySystem::step(dt, loads) with gravity,
//      contacts and the drag spring, then pushTransforms() again.
// Kinematic bodies follow their path; their objects report the fluid's forces (drag) without
// responding to them.
#include "common/Types.h"
#include "rigid/RigidBodySystem.h"

#include <span>
#include <unordered_map>
#include <vector>

namespace octo {

class BoundaryModel;
struct FluidState;

class RigidCoupling {
public:
    RigidCoupling(RigidBodySystem& bodies, BoundaryModel& boundary) : bodies_(bodies), boundary_(boundary) {}

    /// Adds/removes boundary objects so there is exactly one per body. Cheap when nothing changed.
    void syncTopology();
    /// Places every body's boundary object at the body's pose with its velocities; a kinematic
    /// body's with its path's mean velocities over the next stepAhead seconds (when > 0).
    void pushTransforms(float stepAhead = 0.0f);
    /// Kinematic bodies' objects take their path's mean velocities over the next dt seconds at
    /// their current pose (SphSolver::setBoundaryMotion: a restarted, shorter step).
    void pushKinematicVelocities(float dt);
    /// Fluid loads of the last solver step, one per body (sums in double).
    std::vector<BodyLoad> loads() const;
    /// Loads of the last step, then RigidBodySystem::step(dt, loads), then pushTransforms().
    void advanceBodies(float dt);
    /// The loads advanceBodies applied (kinematic bodies' included: they ignore them).
    const std::vector<BodyLoad>& lastLoads() const { return lastLoads_; }
    /// Work (J) the kinematic bodies did on the fluid in the step advanceBodies closed:
    /// -(F . dx + T . dtheta) with the fluid's load F, T and the body's displacement dx, rotation
    /// dtheta over the step.
    double lastKinematicWork() const { return lastKinematicWork_; }
    /// Largest speed of any body's boundary sample, |v| + |omega| * boundingRadius (m/s).
    float maxBodySpeed() const;

    /// Boundary object of a body (-1 when unknown).
    int objectOf(int bodyId) const;
    /// Forgets all objects (after the boundary model was cleared and rebuilt).
    void reset();
    /// Boundary samples of all bodies.
    size_t sampleCount() const;

    /// Fraction of the body's volume below the local free-surface height around it (see
    /// localFluidLevel), in [0, 1].
    double submergedFraction(int bodyId, const FluidState& fluid, float particleRadius) const;
    /// Local free-surface height around a body: the level the fluid's volume fills in the
    /// columns of the annulus [R, R + 3h] around the body's centre (R = bounding radius, h = 4r)
    /// that lie in the container and outside the other bodies' bounding circles: container
    /// floor + count * d0^3 / area, d0^3 being a particle's volume at rest density. Meant for a
    /// body in a pool (the fluid in those columns reaches the floor). -infinity when no fluid is
    /// near or without a container.
    float localFluidLevel(int bodyId, const FluidState& fluid, float particleRadius) const;

private:
    RigidBodySystem& bodies_;
    BoundaryModel& boundary_;
    std::unordered_map<int, int> objects_; ///< body id -> boundary object
    uint64_t version_ = ~uint64_t(0);
    std::vector<BodyLoad> lastLoads_;
    double lastKinematicWork_ = 0.0;
};

} // namespace octo
