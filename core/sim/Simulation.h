#pragma once
// The whole simulated world behind one facade: scene, PCISPH fluid, boundaries, (later) rigid
// bodies and the surface reconstruction. The CLI and the GUI's worker thread both drive it.
// Not thread-safe: one thread owns it (the worker); others only read published snapshots.
#include "common/Parameters.h"
#include "sim/FrameSnapshot.h"

#include <memory>
#include <string>
#include <vector>

namespace octo {

struct SceneDescription; // core/scene/Scene.h

/// Statistics of the latest step (see README for the stable JSON names).
struct StepStats {
    double time = 0.0;            ///< simulated time after the step (s)
    double dt = 0.0;              ///< time step used (s)
    int iterations = 0;           ///< PCISPH corrections in this step
    double maxDensityError = 0.0; ///< max_i (rho*_i - rho0)/rho0 at the last iteration (fraction)
    double physicsMs = 0.0;       ///< wall time of the solver step
    bool converged = true;        ///< density error <= eta within maxIterations
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
    /// Steps until the simulated time reaches the next multiple of frameDuration; returns steps taken.
    int advanceFrame(double frameDuration);

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

    /// Count of non-finite positions/velocities, and of particles outside the domain.
    size_t nonFiniteCount() const;
    size_t escapedCount() const;

    /// A fresh immutable snapshot of the current state (copies arrays).
    FrameSnapshotPtr snapshot() const;

    /// Writes the fluid particles (positions, velocities, density, pressure) as binary PLY.
    void exportParticles(const std::string& path) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace octo
