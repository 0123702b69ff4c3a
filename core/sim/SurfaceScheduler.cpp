#include "sim/SurfaceScheduler.h"

#include "sph/SphSolver.h"

#include <chrono>

namespace octo {

/// A copy of the frame's particles and the solver's densities for the stage. The stage detects
/// the surface particles on the grid it builds for the octree anyway, with these densities (no
/// second grid, no extra density pass). Its pass runs in 8-float lanes: lambda over the solver's
/// cached neighbour lists was slower (`bench live`: 17.0 vs 14.5 ms at 96 k particles, 5.2 vs
/// 4.3 ms at 30 k) and needed the lists refreshed at the frame's end on the physics thread.
SurfaceJob SurfaceScheduler::makeJob(const SphSolver& solver, uint64_t steps) {
    const auto t0 = std::chrono::steady_clock::now();
    SurfaceJob job;
    job.settings = surfaceSettingsFromParameters(params_);
    // What only the octree overlay and the #Cube comparison read: ~3 ms (baseline cell counts)
    // + ~1-2 ms (275 k leaves kept and copied) of a ~45 ms surface at 30 k particles.
    job.settings.storeLeaves = diagnostics_;
    job.settings.countBaselines = diagnostics_;
    const FluidState& st = solver.state();
    job.time = solver.time();
    job.step = steps;
    job.generation = generation_;
    job.positions = st.positions;
    job.densities = st.densities;
    job.velocities = st.velocities;
    job.ids = st.ids;
    job.copyMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return job;
}

void SurfaceScheduler::startFrameSurface(const SphSolver& solver, uint64_t steps) {
    lastFramePhysicsMs_ = framePhysicsMs_;
    framePhysicsMs_ = 0.0;
    if (!params_.getb(Param::surfaceEnabled) || forced_)
        return; // forced: snapshot()/surface() rebuild from the current state anyway
    ++builds_;
    if (pipelined_) {
        stage_.submit(makeJob(solver, steps));
    } else {
        stage_.build(makeJob(solver, steps));
    }
}

FrameSurfacePtr SurfaceScheduler::current() const {
    FrameSurfacePtr f = stage_.latest();
    return f && f->generation == generation_ ? f : nullptr;
}

FrameSurfacePtr SurfaceScheduler::frameSurface() const {
    return params_.getb(Param::surfaceEnabled) ? current() : nullptr;
}

void SurfaceScheduler::applyForced(const SphSolver& solver, uint64_t steps) {
    if (!forced_ || !params_.getb(Param::surfaceEnabled))
        return;
    forced_ = false;
    stage_.cancelQueued();
    ++builds_;
    stage_.build(makeJob(solver, steps));
}

void SurfaceScheduler::invalidate() {
    ++generation_;
    forced_ = true;
    stage_.cancelQueued();
}

void SurfaceScheduler::setPipelined(bool pipelined) {
    pipelined_ = pipelined;
    if (!pipelined)
        stage_.wait();
}

const SurfaceResult* SurfaceScheduler::surfaceNow(const SphSolver& solver, uint64_t steps) {
    if (!params_.getb(Param::surfaceEnabled))
        return nullptr;
    applyForced(solver, steps);
    FrameSurfacePtr f = current();
    if (!f || f->step != steps) {
        stage_.wait(); // a pipelined build of this very state may be in progress
        f = current();
    }
    if (!f || f->step != steps) {
        stage_.cancelQueued();
        ++builds_;
        f = stage_.build(makeJob(solver, steps));
    }
    held_ = f;
    error_ = f->error;
    return f->error.empty() ? &f->result : nullptr;
}

void SurfaceScheduler::addToSnapshot(FrameSnapshot& snap, const FluidState& st) {
    const FrameSurfacePtr fs = frameSurface();
    if (!fs)
        return;
    const SurfaceResult& r = fs->result;
    const SurfaceStats& t = r.stats;
    error_ = fs->error;
    snap.surfaceTime = fs->time;
    snap.surfaceStep = fs->step;
    snap.surfaceSerial = fs->serial;
    if (!fs->flagById.empty()) { // flags mapped to the current order by particle id
        snap.lambda.resize(st.size());
        snap.surfaceFlag.resize(st.size());
        const uint32_t* ids = st.ids.data();
        const size_t known = fs->flagById.size();
        for (size_t i = 0; i < st.size(); ++i) {
            const uint32_t id = ids[i];
            snap.surfaceFlag[i] = id < known ? fs->flagById[id] : 0;
            snap.lambda[i] = id < known ? fs->lambdaById[id] : 1.0f;
        }
    }
    snap.surfaceMesh = r.mesh;
    snap.octreeNodes.reserve(r.leaves.size());
    for (const OctreeLeaf& leaf : r.leaves)
        snap.octreeNodes.push_back({leaf.min, leaf.edge, leaf.depth, NodeClass(uint8_t(leaf.cls))});
    const std::string method = params_.choice(Param::surfaceMethod);
    snap.stats.insert(snap.stats.end(), {{"surface time", fs->time},
                                         {"#FPsurface", double(t.surfaceParticles)},
                                         {"#Cube(" + method + ")", double(t.cubes)},
                                         {"#Cube(uniform)", double(t.cubesUniform)}});
    if (fs->baselinesCounted) // with the diagnostics only (the method's own count is always there)
        snap.stats.insert(snap.stats.end(), {{"#Cube(narrow)", double(t.cubesNarrow)},
                                             {"#Cube(sparse)", double(t.cubesSparse)}});
    snap.stats.insert(
        snap.stats.end(),
        {{"#Triangles", double(t.triangles)},
         {"Tode ms", fs->odeMs()},
         {"Tdetect ms", t.tDetectMs},
         {"Tmc ms", t.tMcMs},
         {"Tsurface ms", fs->totalMs()},
         {"Tps frame ms", lastFramePhysicsMs_},
         {"surface share %", lastFramePhysicsMs_ > 0.0 ? 100.0 * fs->totalMs() / lastFramePhysicsMs_ : 0.0},
         {"surface MiB", double(t.peakBytes) / (1024.0 * 1024.0)}});
}

} // namespace octo
