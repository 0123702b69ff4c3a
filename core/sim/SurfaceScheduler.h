#pragma once
// When a Simulation builds its surface: once per frame (serial, or pipelined beside the next
// frame's physics), at once after an edit or a reset (forced), and never showing a surface of
// older settings (generations). Owns the SurfaceStage that builds it.
#include "common/Parameters.h"
#include "sim/FrameSnapshot.h"
#include "sim/SurfaceStage.h"

#include <cstdint>
#include <string>

namespace octo {

class SphSolver;
struct FluidState;

class SurfaceScheduler {
public:
    /// Reads surfaceEnabled, surfaceMethod and the surface settings from `params` (it outlives this).
    explicit SurfaceScheduler(const ParameterSet& params) : params_(params) {}

    /// The frame just ended: start its surface (serial: now; pipelined: beside the next frame).
    void startFrameSurface(const SphSolver& solver, uint64_t steps);
    /// The latest finished surface of the current settings (nullptr: none yet / off).
    FrameSurfacePtr current() const;
    /// The latest frame's surface when the surface is on (Simulation::frameSurface).
    FrameSurfacePtr frameSurface() const;
    /// Applies a forced rebuild (edit, reset, first frame) now, on this thread.
    void applyForced(const SphSolver& solver, uint64_t steps);
    /// Surfaces of older settings or particles are never shown again; the next one is forced.
    void invalidate();
    /// The surface of this very state (Simulation::surface): nullptr when off or failed.
    const SurfaceResult* surfaceNow(const SphSolver& solver, uint64_t steps);
    /// The latest frame's surface, its statistics and flags into `snap` (flags in the current order).
    void addToSnapshot(FrameSnapshot& snap, const FluidState& fluid);

    /// Solver time of the running frame, for the surface's share of it.
    void addPhysicsMs(double ms) { framePhysicsMs_ += ms; }
    void setDiagnostics(bool on) { diagnostics_ = on; }
    void setPipelined(bool pipelined);
    uint64_t builds() const { return builds_; }
    void wait() { stage_.wait(); }
    /// The last rebuild's failure (empty: none).
    const std::string& error() const { return error_; }

private:
    SurfaceJob makeJob(const SphSolver& solver, uint64_t steps);

    const ParameterSet& params_;
    SurfaceStage stage_;
    bool pipelined_ = false;
    bool diagnostics_ = false; // Simulation::setSurfaceDiagnostics
    bool forced_ = true;       // rebuild from the current state at the next snapshot()/surface()
    uint64_t generation_ = 0;  // bumped by Surface edits, resets: older surfaces are never shown
    uint64_t builds_ = 0;
    double framePhysicsMs_ = 0.0, lastFramePhysicsMs_ = 0.0; // solver time of the running / last frame
    std::string error_;
    FrameSurfacePtr held_; // keeps surfaceNow()'s result alive
};

} // namespace octo
