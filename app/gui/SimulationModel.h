#pragma once
// What the worker thread drives: the core Simulation (CoreSimulationModel) or, in tests, a
// synthetic stand-in (SyntheticModel). Keeps the GUI testable without
// the solver and isolates the one file that calls octo::Simulation.
#include "common/Parameters.h"
#include "sim/FrameSnapshot.h"

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace octo::app {

class SimulationModel {
public:
    virtual ~SimulationModel() = default;

    virtual void reset() = 0;
    /// One solver step (may throw on a blow-up).
    virtual void step() = 0;
    virtual void setParameter(const std::string& name, double value) = 0;
    virtual const ParameterSet& parameters() const = 0;
    virtual FrameSnapshotPtr snapshot() const = 0;
    virtual double time() const = 0;
    virtual uint64_t stepCount() const = 0;
    /// True when the latest step ended one of the scene's frames (1 / fps of simulated time): the
    /// recorder takes exactly these. A model without frames of its own makes every step a frame.
    virtual bool frameEnded() const { return true; }
    /// Simulated seconds per frame (the recording's frame rate is its inverse).
    virtual double frameDuration() const { return 1.0 / 60.0; }
    /// Non-empty when the state is broken (NaN/Inf, particles left the domain).
    virtual std::string healthProblem() const { return {}; }

    // Interaction; the default says "not available yet" so the GUI can tell the user.
    virtual bool supportsDrag() const { return false; }
    virtual void beginDrag(int bodyId, const Vec3f& bodySpacePoint) {}
    virtual void setDragTarget(const Vec3f& worldPoint) {}
    virtual void endDrag() {}
    /// Drag spring stiffness as its response time (s): shorter follows the cursor faster.
    virtual void setDragResponseTime(double seconds) {}
    virtual bool supportsStir() const { return false; }
    /// Stirs the fluid around the ray: a push of `strength` while the cursor holds still, the
    /// fluid dragged along at `cursorVelocity` (m/s, world) while it moves.
    virtual void stir(const Vec3f& rayOrigin, const Vec3f& rayDir, float radius, float strength,
                      const Vec3f& cursorVelocity) {}
    /// Re-runs the surface reconstruction on the current state (after a λmin / L edit while paused).
    virtual void reconstructNow() {}
    /// Octree leaves and baseline cell counts in the snapshots (octree overlay on).
    virtual void setSurfaceDiagnostics(bool) {}

    // Bodies dock: add a built-in shape ("box", "sphere", "cylinder", "armadillo") with its centre
    // at `position`, size (m) and density (kg/m^3); remove by id. Both throw with a message.
    virtual bool supportsBodies() const { return false; }
    virtual int addBody(const std::string& shape, const Vec3f& position, float size, float density) {
        throw std::runtime_error("adding bodies needs the core Simulation");
    }
    virtual void removeBody(int bodyId) {
        throw std::runtime_error("removing bodies needs the core Simulation");
    }

    virtual void exportParticles(const std::string& path) const = 0;
    virtual void exportMesh(const std::string& path) const;
};

/// Builds a model for a scene name ("dam-break") or a scene file path (ends in .json).
/// Throws with a message naming the scene when it cannot be built.
using ModelFactory = std::function<std::unique_ptr<SimulationModel>(
    const std::string& scene, const std::vector<std::string>& overrides)>;

/// The factory the application uses: the core Simulation for a built-in scene name or a scene
/// file. Tests that want the SyntheticModel pass a factory of their own.
ModelFactory defaultModelFactory();

/// Built-in scene names (the core SceneLibrary's files), as offered in the Scene dock.
const std::vector<std::string>& builtinSceneNames();

} // namespace octo::app
