#pragma once
// The whole simulated world behind one facade: scene, PCISPH fluid, boundaries, rigid
// bodies and the surface reconstruction. The CLI and the GUI's worker thread both drive it.
// Not thread-safe: one thread owns it (the worker); others only read published snapshots.
#include "common/Parameters.h"
#include "sim/FrameSnapshot.h"
#include "sim/SimulationBodies.h"
#include "sim/SurfaceStage.h"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace octo {

struct SceneDescription; // core/scene/Scene.h
class SphSolver;         // core/sph/SphSolver.h
class BoundaryModel;     // core/sph/BoundaryModel.h
struct SurfaceResult;    // core/surface/SurfaceSettings.h

/// Thrown by step() when the solver produced NaN/Inf; the last good state is kept.
class SimulationError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Statistics of the latest step (see README for the stable JSON names).
struct StepStats {
    double time = 0.0;            ///< simulated time after the step (s)
    double dt = 0.0;              ///< time step used (s)
    int iterations = 0;           ///< PCISPH corrections in this step
    double maxDensityError = 0.0; ///< max_i (rho*_i - rho0)/rho0 at the last iteration (fraction)
    double physicsMs = 0.0;       ///< wall time of the solver step
    bool converged = true;        ///< density error <= eta within maxIterations
    size_t contained = 0;         ///< particles the container safety net put back (normally 0)
    size_t escaped = 0;           ///< of those, particles found beyond the walls' outer face
    double maxSpeed = 0.0;        ///< max fluid particle speed after the step (m/s)
    double kineticEnergy = 0.0;   ///< fluid + dynamic bodies' kinetic energy after the step (J)
    double energyGrowth = 0.0;    ///< energy above its reference (J; see blowUpMessage), 0 while driven
    bool blowUp = false; ///< energy grew without a source, or speed beyond any source (blowUpMessage)
};

/// Aggregate of the steps of the latest advanceFrame() call.
struct FrameStats {
    int steps = 0;
    double meanDt = 0.0;          ///< s
    double meanIterations = 0.0;  ///< PCISPH corrections per step
    double maxDensityError = 0.0; ///< max over the frame's steps (fraction)
    double meanPhysicsMs = 0.0;   ///< wall time per step
    bool converged = true;        ///< every step met eta within maxIterations
    size_t contained = 0;         ///< safety-net corrections summed over the frame's steps
    size_t escaped = 0;           ///< escapes through the walls summed over the frame's steps
    double maxSpeed = 0.0;        ///< max fluid particle speed over the frame's steps (m/s)
    double kineticEnergy = 0.0;   ///< kinetic energy at the end of the frame (J)
    double energyGrowth = 0.0;    ///< max over the frame's steps of StepStats::energyGrowth (J)
    bool blowUp = false;          ///< some step of the frame flagged a blow-up
};

class Simulation {
public:
    /// Builds the scene; parameters start from the scene's "parameters" over the defaults,
    /// then `overrides` (name=value) on top. Throws on invalid scenes/parameters.
    explicit Simulation(const SceneDescription& scene, const std::vector<std::string>& overrides = {});
    ~Simulation();
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    /// Built-in scene by name ("dam-break", "tank", "drop", ...), see SceneLibrary.
    static std::unique_ptr<Simulation> fromSceneName(const std::string& name,
                                                     const std::vector<std::string>& overrides = {});
    static std::unique_ptr<Simulation> fromSceneFile(const std::string& path,
                                                     const std::vector<std::string>& overrides = {});

    /// Rebuilds the scene from its description with the current parameters.
    void reset();
    /// One solver step. Returns its statistics.
    const StepStats& step();
    /// Steps until the simulated time reaches the next multiple of frameDuration (the last
    /// steps are evened out to land on it); returns steps taken. Statistics in lastFrame().
    /// The frame's surface is then started (see frameSurface()).
    int advanceFrame(double frameDuration);
    /// One step of the live loop: like step(), but the steps land exactly on the frames of the
    /// scene (1 / fps of simulated time, the last steps of a frame evened out); after the step
    /// that ends a frame the frame's surface is started. Returns the step's statistics.
    const StepStats& frameStep();
    /// True when the latest step ended a frame (frameStep / advanceFrame).
    bool frameEnded() const;
    /// Simulated seconds per frame (1 / scene fps).
    double frameDuration() const;
    const FrameStats& lastFrame() const;

    /// Sets a parameter (validated; throws ParameterError). Parameters that need a reset trigger
    /// one at the next step; others act from the next step on.
    void setParameter(const std::string& name, double value);
    const ParameterSet& parameters() const;

    const SceneDescription& scene() const;
    double time() const;
    uint64_t stepCount() const;
    const StepStats& lastStep() const;
    size_t fluidParticleCount() const;
    size_t boundaryParticleCount() const;
    Aabb domain() const;

    /// Count of non-finite positions/velocities now.
    size_t nonFiniteCount() const;
    /// Escapes since the last reset: particles the solver found beyond the outer face of the
    /// container walls (wall plane + boundaryLayers * 2r), counted before the safety net put them
    /// back. (After the net every particle is inside, so a count taken afterwards proves nothing.)
    size_t escapedCount() const;

    /// A fresh immutable snapshot of the current state (copies arrays).
    FrameSnapshotPtr snapshot() const;

    /// Writes the fluid particles (positions, velocities, density, pressure) as binary PLY.
    void exportParticles(const std::string& path) const;

    // --- surface ---
    /// The surface of the current particles (octree of Shao et al. 2016, or the baseline chosen by
    /// "surfaceMethod"), built now unless the latest frame surface is of this very state and of
    /// the current settings; nullptr when "surfaceEnabled" is off. lambda / surfaceFlag are in
    /// the current particle order.
    const SurfaceResult* surface();
    /// The surface of the latest finished frame (built once per frame by frameStep/advanceFrame,
    /// or at once after a Surface parameter edit / reconstructNow / reset); nullptr when none is
    /// ready or the surface is off. snapshot() shows this one, never one of older settings.
    FrameSurfacePtr frameSurface() const;
    /// Diagnostics of the surface for the octree overlay and the #Cube comparison: keep the
    /// octree's leaves (snapshot().octreeNodes) and count the narrow-band and sparse-grid cells.
    /// Off by default: they cost ~10 % of a surface and the live loop does not need them.
    /// Takes effect with the next surface (reconstructNow() for the current frame).
    void setSurfaceDiagnostics(bool on);
    /// Pipelined: a frame's surface is built on a thread of its own beside the next frame's
    /// physics (one frame of latency, the physics never waits); serial (default): at the end of
    /// the frame, before the next step.
    void setSurfacePipelined(bool pipelined);
    /// Surface builds started since construction (frames, edits, reconstructNow).
    uint64_t surfaceBuilds() const;
    /// Waits for a pipelined surface in progress (tests, benchmarks, exports).
    void waitForSurface();
    /// Forces the next snapshot()/surface() to rebuild from the current state at once (after a
    /// lambdaMin / L edit while paused); a surface of older settings is never shown again.
    void reconstructNow();
    /// Writes the current surface mesh as OBJ or binary PLY (by extension); throws when the
    /// surface is off or the file cannot be written.
    void exportMesh(const std::string& path);
    /// Non-empty when the surface settings are risky (L > 2r/sqrt(3)) or the last rebuild failed.
    std::string surfaceWarning() const;
    // --- surface end ---

    /// Non-empty after a blow-up (message for the GUI); cleared by reset().
    const std::string& status() const;
    /// Blow-up checks (StepStats::blowUp). Energy: E = kinetic + gravitational potential energy of
    /// the fluid and the dynamic bodies + the potential energy of cohesion and adhesion - the work
    /// done since the reset by the forces without a potential (the tension's curvature term,
    /// vorticity confinement) and by moving kinematic bodies (-(F.dx + T.dtheta) per step from the
    /// fluid's load and the body's displacement dx, rotation dtheta) may only fall, apart from numerical
    /// noise, while nothing drives the system. A step flags a blow-up when E exceeds its minimum since the
    /// last reset or the last driven step (a drag or a stir, which may add energy) by more than 1 % of M |g|
    /// H (M fluid mass, H container height) + 5 % of |U| (U the attraction's potential energy);
    /// StepStats::energyGrowth is the excess. Speed: also while driven, a fluid particle faster than 5
    /// (sqrt(2 |g| H) + v_sources) + 1 m/s (v_sources: the fastest body point since the reset, the speed
    /// sqrt(2 |U| / M) the attraction could give, the initial fluid speed or the fastest fluid particle right
    /// after a stir) flags one. Non-empty (a one-line message) after such a step; cleared by reset().
    const std::string& blowUpMessage() const;
    /// The solver and the boundary model (walls = object 0), e.g. for rigid-body coupling.
    SphSolver& solver();
    BoundaryModel& boundary();

    // --- rigid bodies (two-way coupled after Akinci 2012; call between steps) ---------------
    /// Adds a body (dynamic or kinematic) at the current time; returns its id (never reused).
    /// Throws SceneError / InvalidMeshError / FileFormatError naming the problem (e.g. a body
    /// thinner than 4r, an open mesh).
    int addBody(const BodyDescription& body);
    /// GUI shortcut: shape "box" (edge = size), "sphere" (diameter = size), "cylinder"
    /// (diameter = height = size) or "armadillo" (largest extent = size), centre of mass at
    /// `position`, density in kg/m^3.
    int addBody(const std::string& shape, const Vec3f& position, float size, float density);
    /// Removes a body; throws std::invalid_argument for an unknown id.
    void removeBody(int id);
    /// Nearest body hit by the ray (dir need not be normalised): (id, hit point in body space).
    std::optional<std::pair<int, Vec3f>> pickBody(const Vec3f& rayOrigin, const Vec3f& rayDir) const;
    /// Same; returns the id or -1 and writes the body-space hit point.
    int pickBody(const Vec3f& rayOrigin, const Vec3f& rayDir, Vec3f* bodySpaceHit) const;
    /// Starts moving the body's point (body space) toward the drag target on the minimum-time
    /// profile, the body held against its weight and the fluid's force (RigidBodySystem::applyDrag).
    /// Throws std::invalid_argument for an unknown or kinematic body.
    void beginDrag(int id, const Vec3f& bodySpacePoint);
    /// World position the grabbed point is pulled toward.
    void setDragTarget(const Vec3f& worldPoint);
    /// Releases the body; it keeps its velocity and falls / floats freely.
    void endDrag();
    /// Fluid particles within `radius` of the ray get their velocity blended toward `velocity`
    /// at the next step (weight (1 - d^2/radius^2)^2 at distance d from the ray).
    void stir(const Vec3f& rayOrigin, const Vec3f& rayDir, float radius, const Vec3f& velocity);
    /// Same as an acceleration, 20 m/s^2 * strength at the ray, during the next step.
    void stir(const Vec3f& rayOrigin, const Vec3f& rayDir, float radius, float strength);
    /// The bodies now (same data as snapshot()->bodies).
    std::vector<BodySnapshot> bodies() const;
    /// Per-body position, velocity and submerged fraction (run --stats-json).
    std::vector<BodyStats> bodyStats() const;
    const RigidBodySystem& rigidBodies() const;
    /// Direct access, e.g. for tests; add/remove bodies through addBody/removeBody.
    RigidBodySystem& rigidBodies();
    /// Boundary samples of all bodies (part of boundaryParticleCount()).
    size_t bodySampleCount() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace octo
