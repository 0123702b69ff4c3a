// `octofluid-cli run`: runs a scene headless and prints one line of statistics per frame.
#include "Command.h"

#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "rigid/RigidBodySystem.h"
#include "sim/Simulation.h"
#include "surface/SurfaceSettings.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace octo::cli {
namespace {

struct RunOptions {
    std::string sceneName, sceneFile, exportDir, meshDir, statsJson;
    double particles = 0.0, radius = 0.0, fps = 0.0;
    long frames = -1;
    std::vector<std::string> sets;
};

double parseNumber(const std::string& option, const std::string& text, bool positive) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v) || (positive && !(v > 0.0)))
        throw std::invalid_argument(option + ": expected a " + (positive ? "positive " : "") +
                                    "number, got '" + text + "'");
    return v;
}

RunOptions parseRunOptions(const Args& args) {
    RunOptions o;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size())
                throw std::invalid_argument(a + ": missing value");
            return args[++i];
        };
        if (a == "--scene")
            o.sceneName = value();
        else if (a == "--scene-file")
            o.sceneFile = value();
        else if (a == "--particles")
            o.particles = parseNumber(a, value(), true);
        else if (a == "--radius")
            o.radius = parseNumber(a, value(), true);
        else if (a == "--frames") {
            const double f = parseNumber(a, value(), true);
            if (f != std::floor(f))
                throw std::invalid_argument("--frames: expected a whole number");
            o.frames = long(f);
        } else if (a == "--fps")
            o.fps = parseNumber(a, value(), true);
        else if (a == "--set")
            o.sets.push_back(value());
        else if (a == "--export-ply")
            o.exportDir = value();
        else if (a == "--export-mesh")
            o.meshDir = value();
        else if (a == "--stats-json")
            o.statsJson = value();
        else
            throw std::invalid_argument("unknown option '" + a + "' (see octofluid-cli --help)");
    }
    if (o.sceneName.empty() == o.sceneFile.empty())
        throw std::invalid_argument("give exactly one of --scene NAME or --scene-file FILE");
    if (o.particles > 0.0 && o.radius > 0.0)
        throw std::invalid_argument("give at most one of --particles and --radius");
    if (o.frames < 0)
        throw std::invalid_argument("--frames F is required");
    return o;
}

std::string jsonNumber(double v) {
    if (!std::isfinite(v))
        return "null";
    std::ostringstream s;
    s.precision(9);
    s << v;
    return s.str();
}

int runScene(const Args& args) {
    const RunOptions o = parseRunOptions(args);
    SceneDescription scene =
        o.sceneFile.empty() ? SceneLibrary::load(o.sceneName) : loadSceneFile(o.sceneFile);
    if (o.particles > 0.0)
        scene.particleRadius = scene.radiusForParticleCount(o.particles);
    if (o.radius > 0.0)
        scene.particleRadius = float(o.radius);
    const double fps = o.fps > 0.0 ? o.fps : scene.fps;

    namespace fs = std::filesystem;
    auto prepareDirectory = [](const std::string& option, const std::string& dir) {
        if (dir.empty())
            return;
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec || !fs::is_directory(dir))
            throw std::runtime_error(option + ": cannot create directory '" + dir + "'");
        const fs::path probe = fs::path(dir) / ".octofluid-write-test";
        std::ofstream test(probe);
        if (!test)
            throw std::runtime_error(option + ": directory '" + dir + "' is not writable");
        test.close();
        fs::remove(probe, ec);
    };
    prepareDirectory("--export-ply", o.exportDir);
    prepareDirectory("--export-mesh", o.meshDir);
    std::ofstream stats;
    if (!o.statsJson.empty()) {
        stats.open(o.statsJson);
        if (!stats)
            throw std::runtime_error("--stats-json: cannot write '" + o.statsJson + "'");
    }

    std::vector<std::string> overrides = o.sets;
    // --particles / --radius set the scene radius; an explicit --set particleRadius wins.
    Simulation sim(scene, overrides);
    std::printf("scene %s: %zu fluid particles, %zu boundary particles (%zu on %zu bodies), r = %g m, %g fps, "
                "%ld frames\n",
                scene.name.c_str(), sim.fluidParticleCount(), sim.boundaryParticleCount(), sim.bodySampleCount(),
                sim.rigidBodies().size(),
                sim.parameters().get("particleRadius"), fps, o.frames);
    std::printf("%6s %9s %6s %10s %6s %9s %9s\n", "frame", "time s", "steps", "dt ms", "iter", "maxErr %",
                "Tps ms");
    std::fflush(stdout);

    const bool surfaceOn = sim.parameters().getb("surfaceEnabled");
    auto exportFrame = [&](long frame) {
        char name[64];
        if (!o.exportDir.empty()) {
            std::snprintf(name, sizeof name, "frame_%05ld.ply", frame);
            sim.exportParticles((fs::path(o.exportDir) / name).string());
        }
        if (!o.meshDir.empty() && surfaceOn) {
            std::snprintf(name, sizeof name, "mesh_%05ld.ply", frame);
            sim.exportMesh((fs::path(o.meshDir) / name).string());
        }
    };
    exportFrame(0);
    for (long f = 1; f <= o.frames; ++f) {
        sim.advanceFrame(1.0 / fps);
        const FrameStats& fr = sim.lastFrame();
        const size_t nan = sim.nonFiniteCount(), escaped = fr.escaped;
        // The surface of the frame's last state (the per-step rebuild is the GUI's job).
        const SurfaceResult* surface = surfaceOn ? sim.surface() : nullptr;
        std::printf("%6ld %9.4f %6d %10.4f %6.2f %9.3f %9.2f", f, sim.time(), fr.steps, 1e3 * fr.meanDt,
                    fr.meanIterations, 100.0 * fr.maxDensityError, fr.meanPhysicsMs);
        if (surface)
            std::printf("   surface: %llu of %zu particles, %llu cubes, %llu triangles, %.1f ms",
                        (unsigned long long)surface->stats.surfaceParticles, sim.fluidParticleCount(),
                        (unsigned long long)surface->stats.cubes, (unsigned long long)surface->stats.triangles,
                        surface->stats.tTotalMs);
        std::printf("%s%s\n", fr.converged ? "" : "  (eta not met)", fr.blowUp ? "  (blow-up)" : "");
        std::fflush(stdout);
        if (stats.is_open()) {
            stats << "{\"frame\":" << f << ",\"time\":" << jsonNumber(sim.time()) << ",\"steps\":" << fr.steps
                  << ",\"dt\":" << jsonNumber(fr.meanDt)
                  << ",\"iterations\":" << jsonNumber(fr.meanIterations)
                  << ",\"maxDensityError\":" << jsonNumber(fr.maxDensityError)
                  << ",\"fluidParticles\":" << sim.fluidParticleCount()
                  << ",\"boundaryParticles\":" << sim.boundaryParticleCount()
                  << ",\"tpsMs\":" << jsonNumber(fr.meanPhysicsMs) << ",\"nan\":" << nan
                  << ",\"escaped\":" << escaped << ",\"converged\":" << (fr.converged ? "true" : "false")
                  << ",\"contained\":" << fr.contained << ",\"maxSpeed\":" << jsonNumber(fr.maxSpeed)
                  << ",\"kineticEnergy\":" << jsonNumber(fr.kineticEnergy) << ",\"blowUp\":" << (fr.blowUp ? 1 : 0);
            // Rigid bodies: centre of mass, velocity, submerged fraction (docs/SCENES.md).
            const std::vector<BodyStats> bodies = sim.bodyStats();
            if (!bodies.empty()) {
                auto vec = [](const Vec3f& v) {
                    return "[" + jsonNumber(v.x()) + "," + jsonNumber(v.y()) + "," + jsonNumber(v.z()) + "]";
                };
                stats << ",\"bodies\":[";
                for (size_t b = 0; b < bodies.size(); ++b) {
                    const BodyStats& bs = bodies[b];
                    std::string name;
                    for (char c : bs.name) name += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
                    stats << (b ? "," : "") << "{\"id\":" << bs.id << ",\"name\":\"" << name << "\""
                          << ",\"kinematic\":" << (bs.kinematic ? "true" : "false")
                          << ",\"position\":" << vec(bs.position) << ",\"velocity\":" << vec(bs.velocity)
                          << ",\"submerged\":" << jsonNumber(bs.submergedFraction)
                          << ",\"fluidLevel\":" << jsonNumber(bs.fluidLevel) << "}";
                }
                stats << "]";
            }
            if (surface) {
                const SurfaceStats& t = surface->stats;
                stats << ",\"surfaceParticles\":" << t.surfaceParticles << ",\"cubes\":" << t.cubes
                      << ",\"cubesUniform\":" << t.cubesUniform << ",\"triangles\":" << t.triangles
                      << ",\"tDetectMs\":" << jsonNumber(t.tDetectMs) << ",\"tOctreeMs\":" << jsonNumber(t.tOctreeMs)
                      << ",\"tDistanceMs\":" << jsonNumber(t.tDistanceMs) << ",\"tMcMs\":" << jsonNumber(t.tMcMs)
                      << ",\"tTotalMs\":" << jsonNumber(t.tTotalMs) << ",\"peakBytes\":" << t.peakBytes;
                // Surface (solver-side detection + reconstruction) over the frame's physics time.
                if (const FrameSurfacePtr fs = sim.frameSurface(); fs && fr.steps > 0)
                    stats << ",\"surfaceShare\":" << jsonNumber(fs->totalMs() / (fr.meanPhysicsMs * fr.steps));
            }
            stats << "}\n";
            stats.flush();
            if (!stats)
                throw std::runtime_error("--stats-json: write to '" + o.statsJson + "' failed");
        }
        exportFrame(f);
        if (nan > 0)
            throw std::runtime_error(std::to_string(nan) + " particles have non-finite values at frame " +
                                     std::to_string(f));
    }
    return 0;
}

int runCommand(const Args& args) {
    try {
        return runScene(args);
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::cerr << "octofluid-cli run: error: " << e.what() << "\n";
        return 1;
    }
}

const CommandRegistrar registerRun(
    "run",
    {"run --scene NAME | --scene-file FILE [--particles N | --radius R] --frames F [--fps 60] [--set "
     "name=value ...] "
     "[--export-ply DIR] [--export-mesh DIR] [--stats-json FILE]",
     "Runs a scene headless; prints time, steps, dt, PCISPH iterations, max density error and Tps per frame.",
     runCommand});

} // namespace
} // namespace octo::cli
