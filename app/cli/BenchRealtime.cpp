// `octofluid-cli bench realtime` (issue 25): every built-in scene at the Interactive size (about
// 9 k particles, never finer than the file) and at the file's own radius (the Paper preset), with
// each pressure solver, surface on, as the CLI's `run` loop steps it: simulated seconds per wall
// second (x real time), steps, mean dt, mean iterations per step, the share of steps that met eta
// and the surface's share of the wall time. --quick: the Interactive size only, 0.5 s simulated.
#include "BenchRealtime.h"

#include "ArgParser.h"
#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace octo::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct RealtimeRow {
    double simulated = 0.0, wallS = 0.0, meanDt = 0.0, meanIterations = 0.0, metEta = 0.0, surfaceShare = 0.0;
    long long steps = 0;
    size_t particles = 0;
    std::string failure;
};

RealtimeRow measure(const std::string& scene, double radius, const std::string& solver, double seconds) {
    RealtimeRow row;
    std::vector<std::string> overrides{"pressureSolver=" + solver};
    if (radius > 0.0)
        overrides.push_back("particleRadius=" + std::to_string(radius));
    auto sim = Simulation::fromSceneName(scene, overrides);
    row.particles = sim->fluidParticleCount();
    const double frame = sim->frameDuration();
    double surfaceMs = 0.0, iterationSteps = 0.0, dtSum = 0.0;
    long long converged = 0;
    const auto t0 = Clock::now();
    try {
        while (sim->time() < seconds - 1e-9) {
            sim->advanceFrame(frame);
            const FrameStats& f = sim->lastFrame();
            row.steps += f.steps;
            iterationSteps += f.meanIterations * f.steps;
            dtSum += f.meanDt * f.steps;
            converged += f.converged ? f.steps : 0;
            if (const SurfaceResult* s = sim->surface())
                surfaceMs += s->stats.tTotalMs;
            if (f.blowUp && row.failure.empty())
                row.failure = "blow-up at t = " + std::to_string(sim->time()) + " s";
        }
    } catch (const SimulationError& e) {
        row.failure = e.what();
    }
    row.wallS = std::chrono::duration<double>(Clock::now() - t0).count();
    row.simulated = sim->time();
    if (row.steps > 0) {
        row.meanIterations = iterationSteps / double(row.steps);
        row.meanDt = dtSum / double(row.steps);
        row.metEta = double(converged) / double(row.steps);
    }
    row.surfaceShare = row.wallS > 0.0 ? 1e-3 * surfaceMs / row.wallS : 0.0;
    return row;
}

} // namespace

int runRealtimeBench(const Args& args) {
    bool quick = false;
    double seconds = 1.0;
    std::vector<std::string> positional, scenes;
    try {
        ArgParser parser;
        parser.flag("--quick", [&] { quick = true; });
        parser.option("--seconds",
                      [&](const std::string& v) { seconds = parseReal("--seconds", v, 0.01, 60.0); });
        parser.option("--scene", [&](const std::string& v) { scenes.push_back(v); });
        parser.positionals(positional).parse(args);
    } catch (const UsageError& e) {
        std::cerr << "octofluid-cli bench realtime: error: " << e.what() << "\n";
        return 2;
    }
    if (quick)
        seconds = std::min(seconds, 0.5);
    if (scenes.empty())
        scenes = SceneLibrary::names();
    std::printf("bench realtime: %.2f s simulated per row, surface on (x real time = simulated s / wall s)\n",
                seconds);
    std::printf("%-18s %-11s %-6s %9s %8s %9s %7s %8s %6s %6s %8s\n", "scene", "preset", "solver",
                "particles", "x real", "wall s", "steps", "dt ms", "iter", "eta", "surface");
    int rc = 0;
    for (const std::string& scene : scenes) {
        const SceneDescription d = SceneLibrary::load(scene);
        double interactive = 0.0;
        try {
            interactive = std::max(double(d.radiusForParticleCount(kInteractiveParticleCount)),
                                   double(d.particleRadius));
        } catch (const SceneError&) {
            interactive = d.particleRadius; // a mesh-only fluid keeps its file's radius
        }
        const std::vector<std::pair<const char*, double>> presets =
            quick ? std::vector<std::pair<const char*, double>>{{"interactive", interactive}}
                  : std::vector<std::pair<const char*, double>>{{"interactive", interactive},
                                                                {"paper", d.particleRadius}};
        for (const auto& [preset, radius] : presets)
            for (const char* solver : {"pcisph", "dfsph"}) {
                const RealtimeRow r = measure(scene, radius, solver, seconds);
                std::printf("%-18s %-11s %-6s %9zu %8.3f %9.2f %7lld %8.3f %6.2f %5.0f%% %7.1f%%",
                            scene.c_str(), preset, solver, r.particles,
                            r.wallS > 0.0 ? r.simulated / r.wallS : 0.0, r.wallS, r.steps, 1e3 * r.meanDt,
                            r.meanIterations, 100.0 * r.metEta, 100.0 * r.surfaceShare);
                if (!r.failure.empty()) {
                    std::printf("  (%s)", r.failure.c_str());
                    rc = 1;
                }
                std::printf("\n");
                std::fflush(stdout);
            }
    }
    return rc;
}

} // namespace octo::cli
