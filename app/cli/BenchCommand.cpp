// `octofluid-cli bench`: the PCISPH solver table (dam break at three sizes, 2 threads and 1
// thread) and, with `reconstruct` / `all`, the surface reconstruction table.
#include "ArgParser.h"
#include "BenchLive.h"
#include "BenchRealtime.h"
#include "BenchReconstruct.h"
#include "Command.h"

#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

namespace octo::cli {
namespace {

struct BenchRow {
    size_t particles = 0;
    int threads = 0, steps = 0;
    double seconds = 0.0, iterations = 0.0, msNeighbors = 0.0, msNonPressure = 0.0, msPressure = 0.0;
    double maxError = 0.0;
    int restarts = 0;
};

/// Runs `steps` solver steps and sums the solver's own phase timers.
BenchRow measure(Simulation& sim, int threads, int steps) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, size_t(threads));
    BenchRow row;
    row.particles = sim.fluidParticleCount();
    row.threads = threads;
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) {
        sim.step();
        const SphSolver::StepResult& r = sim.solver().lastStep();
        row.iterations += r.iterations;
        row.msNeighbors += r.msNeighbors;
        row.msNonPressure += r.msNonPressure;
        row.msPressure += r.msPressure;
        row.maxError = std::max(row.maxError, double(r.maxDensityError));
        row.restarts += r.restarts;
    }
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.steps = steps;
    return row;
}

void printRow(const BenchRow& r) {
    const double msStep = 1e3 * r.seconds / r.steps;
    const double itStep = r.iterations / r.steps;
    const double nsPartIt = 1e6 * r.msPressure / (double(r.particles) * r.iterations);
    const double usPartStep = 1e3 * msStep / double(r.particles);
    std::printf("%9zu %7d %6d %9.2f %9.2f %8.2f %10.1f %10.3f %8.1f %8.1f %8.1f %8.3f\n", r.particles,
                r.threads, r.steps, r.steps / r.seconds, msStep, itStep, nsPartIt, usPartStep,
                r.msNeighbors / r.steps, r.msNonPressure / r.steps, r.msPressure / r.steps,
                100.0 * r.maxError);
    std::fflush(stdout);
}

/// Cost of the forces beyond the paper's PCISPH (issue 11): the dam break at ~100k (--quick 25k)
/// with every force off, then surface tension, adhesion, vorticity confinement, all three, and the
/// velocity filter (issue 9) on.
/// The runs advance in turns of a few steps, so load changes on the shared machine hit all alike;
/// the cost is wall time per particle and step (the forces change dt and iterations a little too).
void runForcesTable(bool quick) {
    struct Variant {
        const char* name;
        std::vector<std::string> set;
    };
    const std::vector<Variant> variants = {
        {"off", {}},
        {"tension", {"surfaceTension=0.5"}},
        {"adhesion", {"adhesion=1"}},
        {"vorticity", {"vorticityConfinement=0.5"}},
        {"all three", {"surfaceTension=0.5", "adhesion=1", "vorticityConfinement=0.5"}},
        {"filter", {"velocityFilter=0.8"}},
    };
    SceneDescription scene = SceneLibrary::load("dam-break");
    scene.parameters.clear(); // the scene's own force defaults: each variant sets its own
    scene.particleRadius =
        scene.radiusForParticleCount(quick ? 8000 : 100000); // quick: keeps `bench solver --quick` short
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    std::vector<std::unique_ptr<Simulation>> sims;
    for (const Variant& v : variants) {
        std::vector<std::string> set = {"surfaceEnabled=false", "surfaceTension=0", "adhesion=0",
                                        "vorticityConfinement=0", "velocityFilter=0"};
        set.insert(set.end(), v.set.begin(), v.set.end());
        sims.push_back(std::make_unique<Simulation>(scene, set));
    }
    const int warmup = 30, chunk = 5, chunks = quick ? 6 : 8;
    std::vector<double> wall(sims.size(), 0.0), nonPressure(sims.size(), 0.0), iterations(sims.size(), 0.0);
    for (int c = 0; c < warmup / chunk + chunks; ++c)
        for (size_t k = 0; k < sims.size(); ++k) {
            const auto t0 = std::chrono::steady_clock::now();
            double np = 0.0, it = 0.0;
            for (int s = 0; s < chunk; ++s) {
                sims[k]->step();
                np += sims[k]->solver().lastStep().msNonPressure;
                it += sims[k]->solver().lastStep().iterations;
            }
            if (c < warmup / chunk)
                continue;
            wall[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            nonPressure[k] += np;
            iterations[k] += it;
        }
    const int steps = chunk * chunks;
    std::printf(
        "\nForces beyond PCISPH (issue 11): dam-break, %zu particles, 2 threads, %d warm-up + %d measured "
        "steps each, interleaved\n",
        sims.front()->fluidParticleCount(), warmup, steps);
    std::printf("%-10s %10s %10s %8s %9s %12s   (tension gamma 0.5, adhesion beta 1, vorticity eps 0.5, "
                "velocity filter eps4 0.8)\n",
                "forces", "us/p-step", "nonp ms", "iter/st", "vs off", "nonp extra");
    const double n = double(sims.front()->fluidParticleCount());
    const double msStepOff = 1e3 * wall[0] / steps;
    for (size_t k = 0; k < sims.size(); ++k) {
        const double us = 1e6 * wall[k] / steps / n;
        std::printf("%-10s %10.3f %10.2f %8.2f %8.1f%% %11.1f%%\n", variants[k].name, us,
                    nonPressure[k] / steps, iterations[k] / steps, 100.0 * (wall[k] / wall[0] - 1.0),
                    100.0 * (nonPressure[k] - nonPressure[0]) / steps / msStepOff);
    }
    std::printf(
        "vs off: wall time per step (includes the forces' effect on the iteration count);\n"
        "nonp extra: the non-pressure pass's extra time as a share of the off step (the forces' own cost).\n"
        "goal: each force costs <= 25 %% more than off\n");
    std::fflush(stdout);
}

int runSolverBench(bool quick) {
    const SceneDescription base = SceneLibrary::load("dam-break");
    const std::vector<double> sizes =
        quick ? std::vector<double>{8000, 25000} : std::vector<double>{25000, 100000, 400000};
    const std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf(
        "PCISPH solver benchmark (%s), scene dam-break, eta = max density error, %u hardware threads\n", date,
        std::thread::hardware_concurrency());
    std::printf(
        "each size: warm-up steps, then the same number of steps with 2 threads, then with 1 thread\n");
    std::printf("%9s %7s %6s %9s %9s %8s %10s %10s %8s %8s %8s %8s\n", "particles", "threads", "steps",
                "steps/s", "ms/step", "iter/st", "ns/p-iter", "us/p-step", "nbr ms", "nonp ms", "pres ms",
                "maxErr%");
    for (double n : sizes) {
        SceneDescription scene = base;
        scene.particleRadius = scene.radiusForParticleCount(n);
        Simulation sim(scene);
        // Enough steps for a stable mean, few enough that the 400k row stays well under a minute.
        const int steps = std::max(8, int((quick ? 5e5 : 4e6) / n));
        const int warmup = std::max(30, steps); // past the start-up transient of the dt control
        {
            tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
            for (int s = 0; s < warmup; ++s)
                sim.step();
        }
        printRow(measure(sim, 2, steps));
        printRow(measure(sim, 1, steps));
    }
    std::printf(
        "ns/p-iter: pressure-iteration time (density + pressure force passes) per particle and iteration;\n"
        "us/p-step: wall time per fluid particle per step (neighbour search, forces, all iterations).\n");
    runForcesTable(quick);
    return 0;
}

/// Cost of the two-way coupling (issue 3): dam-break-bodies (3 bodies) against the same dam
/// break without its bodies, same particle count, same simulated interval, same run. The
/// interval covers the surge hitting the bodies (it reaches them at about 0.2 s).
int runBodiesBench(bool quick) {
    const SceneDescription with = SceneLibrary::load("dam-break-bodies");
    SceneDescription without = with;
    without.bodiesJson.clear();
    const double n = quick ? 25000 : 100000;
    const double simulated = quick ? 0.3 : 0.4; // s
    const float r = with.radiusForParticleCount(n);
    std::printf(
        "Rigid-body coupling benchmark: dam-break-bodies (3 bodies) vs the same dam break without bodies,\n"
        "r = %g m, %.2f s simulated each, 2 threads, surface reconstruction off\n",
        r, simulated);
    std::printf("%-18s %9s %8s %7s %9s %9s %8s %9s\n", "scene", "particles", "body SP", "steps", "wall s",
                "ms/step", "iter/st", "dt ms");
    // Both simulations advance in turns by 20 ms of simulated time, so a load change on the
    // shared machine hits both alike.
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    std::unique_ptr<Simulation> sims[2];
    for (int k = 0; k < 2; ++k) {
        SceneDescription scene = k == 0 ? without : with;
        scene.particleRadius = r;
        sims[k] = std::make_unique<Simulation>(scene, std::vector<std::string>{"surfaceEnabled=false"});
    }
    double wall[2] = {0.0, 0.0}, msStep[2] = {0.0, 0.0}, iterations[2] = {0.0, 0.0};
    int steps[2] = {0, 0};
    for (double t = 0.02; t <= simulated + 1e-9; t += 0.02)
        for (int k = 0; k < 2; ++k) {
            Simulation& sim = *sims[k];
            const auto t0 = std::chrono::steady_clock::now();
            while (sim.time() < t - 1e-9) {
                sim.step();
                iterations[k] += sim.lastStep().iterations;
                ++steps[k];
            }
            wall[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
    for (int k = 0; k < 2; ++k) {
        const Simulation& sim = *sims[k];
        msStep[k] = 1e3 * wall[k] / steps[k];
        std::printf("%-18s %9zu %8zu %7d %9.2f %9.2f %8.2f %9.4f\n",
                    k == 0 ? "dam-break" : "dam-break-bodies", sim.fluidParticleCount(),
                    sim.bodySampleCount(), steps[k], wall[k], msStep[k], iterations[k] / steps[k],
                    1e3 * sim.time() / steps[k]);
    }
    std::printf("coupling cost ratio (wall time for the same simulated interval): %.3f  (per step: %.3f; "
                "target <= 1.25)\n",
                wall[1] / wall[0], msStep[1] / msStep[0]);
    return 0;
}

int benchCommand(const Args& args) {
    std::string what = "solver";
    bool quick = false;
    // `bench live` has options of its own (--frames, --radius ...) and parses them itself.
    if (std::find(args.begin(), args.end(), "live") != args.end())
        return runLiveBench(args);
    if (!args.empty() && args[0] == "realtime") // options of its own: --quick, --seconds, --scene
        return runRealtimeBench(Args(args.begin() + 1, args.end()));
    std::vector<std::string> tables;
    Args rest; // options of the reconstruct table (--runs, --threads, --json, --method, --size, --scene)
    try {
        ArgParser parser;
        parser.flag("--quick", [&] {
            quick = true;
            rest.push_back("--quick");
        });
        for (const char* o : {"--runs", "--threads", "--json", "--method", "--size", "--scene"})
            parser.option(o, [&rest, o](const std::string& v) { rest.insert(rest.end(), {o, v}); });
        parser.positionals(tables).parse(args);
        if (tables.size() > 1)
            throw UsageError("give one table (solver, forces, bodies, reconstruct, live or all)");
        if (!tables.empty()) {
            what = tables[0];
            if (what != "solver" && what != "forces" && what != "reconstruct" && what != "bodies" &&
                what != "all")
                throw UsageError("unknown table '" + what +
                                 "' (solver, forces, bodies, reconstruct, live or all)");
        }
    } catch (const UsageError& e) {
        std::cerr << "octofluid-cli bench: error: " << e.what() << "\n";
        return 2;
    }
    try {
        int rc = 0;
        if (what == "solver" || what == "all")
            rc = runSolverBench(quick);
        if (what == "forces")
            runForcesTable(quick);
        if (rc == 0 && (what == "bodies" || what == "all"))
            rc = runBodiesBench(quick);
        if (rc == 0 && (what == "reconstruct" || what == "all"))
            rc = runReconstructBench(rest);
        return rc;
    } catch (const std::exception& e) {
        std::cerr << "octofluid-cli bench: error: " << e.what() << "\n";
        return 1;
    }
}

const CommandRegistrar registerBench(
    "bench",
    {"bench [solver|forces|bodies|reconstruct|live|realtime|all] [--quick] (live: [--frames F] [--radius R "
     "...]; "
     "realtime: [--seconds S] [--scene NAME ...])",
     "Solver table: dam break at ~25k/100k/400k particles, 2 and 1 threads "
     "(--quick: 8k/25k), then each new force (tension, adhesion, vorticity) on and off at ~100k (--quick: "
     "8k; `forces`: only this table); bodies: coupling cost of dam-break-bodies vs the same "
     "dam break without bodies at ~100k (--quick: 25k); reconstruct: the surface "
     "reconstruction table; live: physics vs surface per frame, serial vs pipelined; realtime: every "
     "built-in scene at the Interactive size and the file's radius, each pressure solver, surface on: "
     "x real time, steps, mean dt, iterations, eta met.",
     benchCommand});

} // namespace
} // namespace octo::cli
