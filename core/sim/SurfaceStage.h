#pragma once
// The surface stage of the live loop: builds one frame's surface (Marrone detection on the grid
// it builds anyway, with the solver's densities; octree, distance field, marching cubes) from an
// immutable copy of the frame's particles, either right away on the caller's thread (serial) or
// on its own thread beside the next frame's physics (pipelined). The physics never waits in the
// pipelined mode: a job that is still queued when the next frame's job arrives is replaced
// (newest frame wins), so the surface shown lags the particles by at most one frame as long as a
// surface takes less than a frame.
#include "surface/SurfaceReconstructor.h"
#include "surface/SurfaceSettings.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace octo {

/// A frame's particles for the stage (copies: the physics goes on while it is built).
struct SurfaceJob {
    double time = 0.0;       ///< simulated time of the frame
    uint64_t step = 0;       ///< solver steps at that time
    uint64_t generation = 0; ///< settings / scene generation (results of older ones are dropped)
    std::vector<Vec3f> positions;
    std::vector<float> densities;
    std::vector<Vec3f>
        velocities;            ///< empty or one per particle: interpolated onto the mesh (mesh.velocities)
    std::vector<uint32_t> ids; ///< stable particle ids (FluidState::ids)
    SurfaceSettings settings;
    double copyMs = 0.0; ///< copying the frame's particles for the stage (on the physics thread)
};

/// One finished frame surface. result.lambda / surfaceFlag are in the job's particle order;
/// flagById / lambdaById are indexed by particle id, to colour later particle states.
struct FrameSurface {
    uint64_t serial = 0; ///< unique in the process, increasing (a renderer re-uploads when it changes)
    double time = 0.0;
    uint64_t step = 0;
    uint64_t generation = 0;
    SurfaceResult result;
    std::vector<uint8_t> flagById;
    std::vector<float> lambdaById;
    double copyMs = 0.0;           ///< the job's copy of the frame's particles (physics thread)
    double buildMs = 0.0;          ///< wall time of the reconstruction (detection included)
    bool baselinesCounted = false; ///< the settings' countBaselines (narrow/sparse counts filled)
    std::string error;             ///< non-empty: the build failed (result empty)
    /// Tode of the paper (detection + octree + distance field), ms.
    double odeMs() const {
        return result.stats.tDetectMs + result.stats.tOctreeMs + result.stats.tDistanceMs;
    }
    double totalMs() const { return copyMs + buildMs; }
};
using FrameSurfacePtr = std::shared_ptr<const FrameSurface>;

class SurfaceStage {
public:
    SurfaceStage();
    ~SurfaceStage(); ///< finishes the running job, drops a queued one, joins the thread
    SurfaceStage(const SurfaceStage&) = delete;
    SurfaceStage& operator=(const SurfaceStage&) = delete;

    /// Builds on the calling thread (after the running background job, if any) and returns it.
    FrameSurfacePtr build(SurfaceJob job);
    /// Queues the job for the background thread and returns at once (replaces a queued job).
    void submit(SurfaceJob job);
    /// Drops a queued job that has not started.
    void cancelQueued();
    /// Blocks until nothing is queued or running.
    void wait();
    /// True while a job is queued or running.
    bool busy() const;
    /// The newest finished surface of either path (nullptr before the first one).
    FrameSurfacePtr latest() const;
    /// Jobs finished since construction (both paths).
    uint64_t finished() const;

private:
    FrameSurfacePtr run(SurfaceJob& job); // the reconstructor is used by one thread at a time
    void loop();

    SurfaceReconstructor reconstructor_;
    std::mutex buildMutex_; // serialises run()

    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::optional<SurfaceJob> queued_;
    bool running_ = false, stop_ = false;
    FrameSurfacePtr latest_;
    uint64_t finished_ = 0;
    std::thread thread_; // started on the first submit()
};

} // namespace octo
