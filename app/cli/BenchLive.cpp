// `octofluid-cli bench live`: the live loop's budget (issue 12). Dam break at the scene's default
// resolution and at ~100 k particles (--quick: ~8 k and the default), surface on, a few simulated
// frames per configuration: physics time Tps per frame, Tode (detection on the stage's grid
// with the solver's densities + octree + distance field), Tmc, the surface's share of the physics time, and
// the wall time per frame with the surface built serially (after each frame) or pipelined
// (beside the next frame's physics), on 2 threads and on 1.
#include "BenchLive.h"
#include "ArgParser.h"

#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"
#include "surface/SurfaceReconstructor.h"

#include <tbb/global_control.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace octo::cli {
namespace {

struct LiveRow {
    int threads = 0;
    bool pipelined = false;
    int frames = 0, steps = 0, surfaces = 0;
    double wallMs = 0.0, tpsMs = 0.0, odeMs = 0.0, detectMs = 0.0, mcMs = 0.0, surfaceMs = 0.0;
};

/// Advances `frames` frames; sums the physics (solver timers) and the surfaces of those frames.
LiveRow measure(Simulation& sim, int threads, bool pipelined, int frames) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, size_t(threads));
    sim.waitForSurface();
    sim.setSurfacePipelined(pipelined);
    LiveRow row;
    row.threads = threads;
    row.pipelined = pipelined;
    uint64_t lastStep = sim.frameSurface() ? sim.frameSurface()->step : ~0ull;
    auto collect = [&] {
        const FrameSurfacePtr s = sim.frameSurface();
        if (!s || s->step == lastStep)
            return;
        lastStep = s->step;
        ++row.surfaces;
        row.odeMs += s->odeMs();
        row.detectMs += s->result.stats.tDetectMs;
        row.mcMs += s->result.stats.tMcMs;
        row.surfaceMs += s->totalMs();
    };
    const auto t0 = std::chrono::steady_clock::now();
    for (int f = 0; f < frames; ++f) {
        sim.advanceFrame(sim.frameDuration());
        row.steps += sim.lastFrame().steps;
        row.tpsMs += sim.lastFrame().meanPhysicsMs * sim.lastFrame().steps;
        collect(); // serial: this frame's; pipelined: the previous frame's, when finished
    }
    sim.waitForSurface();
    row.wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    collect();
    row.frames = frames;
    return row;
}

void printRow(size_t particles, const LiveRow& r) {
    const double f = r.frames, s = std::max(1, r.surfaces);
    const double tps = r.tpsMs / f, surf = r.surfaceMs / s;
    std::printf("%9zu %7d %-9s %6d %7.1f %9.1f %8.1f %8.1f %7.1f %9.1f %7.1f %9.1f %8.2f\n", particles,
                r.threads, r.pipelined ? "pipelined" : "serial", r.frames, r.steps / f, tps, r.odeMs / s,
                r.detectMs / s, r.mcMs / s, surf, 100.0 * surf / tps, r.wallMs / f, 1e3 * r.steps / r.wallMs);
    std::fflush(stdout);
}

} // namespace

int runLiveBench(const Args& args) {
    bool quick = false;
    int frames = 4;
    std::vector<float> chosen; // --radius R (repeatable): these sizes instead of the defaults
    // The one argument parser: "--frames abc" used to become 1 (atoi), unknown options passed.
    try {
        std::vector<std::string> tables; // "live" itself
        ArgParser()
            .positionals(tables)
            .flag("--quick", quick)
            .option("--frames",
                    [&](const std::string& v) { frames = int(parseWhole("--frames", v, 1, 100000)); })
            .option(
                "--radius",
                [&](const std::string& v) { chosen.push_back(float(parseReal("--radius", v, 0.002, 0.2))); })
            .parse(args);
        if (tables != std::vector<std::string>{"live"})
            throw UsageError("bench live takes no other table");
    } catch (const UsageError& e) {
        std::cerr << "octofluid-cli bench live: error: " << e.what() << "\n";
        return 2;
    }
    const SceneDescription base = SceneLibrary::load("dam-break");
    std::vector<float> radii = chosen;
    if (radii.empty() && quick)
        radii = {base.radiusForParticleCount(8000), base.particleRadius};
    else if (radii.empty())
        radii = {base.particleRadius, base.radiusForParticleCount(100000)};
    const std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf(
        "Live loop benchmark (%s), scene dam-break, surface on (octree), %d frames of 1/%g s per row, "
        "%u hardware threads\n",
        date, frames, base.fps, std::thread::hardware_concurrency());
    std::printf("each size: 0.1 s warm-up (surface off), then the rows in turn on the same simulation\n");
    std::printf("%9s %7s %-9s %6s %7s %9s %8s %8s %7s %9s %7s %9s %8s\n", "particles", "threads", "surface",
                "frames", "st/fr", "Tps ms/fr", "Tode ms", "det ms", "Tmc ms", "Tsurf ms", "share%",
                "wall ms/fr", "steps/s");
    for (const float r : radii) {
        SceneDescription scene = base;
        scene.particleRadius = r;
        Simulation sim(scene);
        sim.setParameter("surfaceEnabled", 0.0);
        while (sim.time() < 0.1 - 1e-9)
            sim.advanceFrame(sim.frameDuration());
        sim.setParameter("surfaceEnabled", 1.0);
        sim.surface(); // first build: buffers grow here, not in the rows
        for (int threads : {2, 1})
            for (bool pipelined : {false, true})
                printRow(sim.fluidParticleCount(), measure(sim, threads, pipelined, frames));
    }
    std::printf(
        "Tps: solver time per frame; Tode: detection (the stage's grid, the solver's densities) + octree + "
        "distance field;\nshare: Tsurf / Tps (goal <= 5 %%); "
        "wall: per frame including the surface (pipelined: "
        "built beside the next frame).\n");
    return 0;
}

} // namespace octo::cli
