// `octofluid-cli run`: runs a scene headless and prints one line of statistics per frame.
#include "ArgParser.h"
#include "Command.h"
#include "OutputSafety.h"

#include "common/Parameters.h"

#include "rigid/RigidBodySystem.h"
#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"
#include "surface/SurfaceSettings.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>

namespace octo::cli {
namespace {

struct RunOptions {
    std::string sceneName, sceneFile, exportDir, meshDir, statsJson;
    double particles = 0.0, radius = 0.0, fps = 0.0;
    long long frames = -1;
    std::vector<std::string> sets;
    bool statsGiven = false, exportGiven = false, meshGiven = false; // "" is refused, not ignored
};

/// Exit code of a run whose energy check or speed limit flagged a blow-up (FrameStats::blowUp):
/// every frame was still run and written; README and docs/INPUT.md document it.
constexpr int kExitBlowUp = 3;

constexpr long long kMaxFrames = 1'000'000'000;

RunOptions parseRunOptions(const Args& args) {
    RunOptions o;
    const ParameterInfo& r = *findParameter("particleRadius");
    ArgParser()
        .option("--scene", o.sceneName)
        .option("--scene-file", o.sceneFile)
        .option("--particles",
                [&](const std::string& v) { o.particles = parseReal("--particles", v, 1.0, 1e12); })
        .option("--radius",
                [&](const std::string& v) { o.radius = parseReal("--radius", v, r.minValue, r.maxValue); })
        .option("--frames",
                [&](const std::string& v) { o.frames = parseWhole("--frames", v, 1, kMaxFrames); })
        .option("--fps", [&](const std::string& v) { o.fps = parseReal("--fps", v, 1e-3, 1e6); })
        .option("--set", [&](const std::string& v) { o.sets.push_back(v); })
        .option("--export-ply",
                [&](const std::string& v) {
                    o.exportDir = v;
                    o.exportGiven = true;
                })
        .option("--export-mesh",
                [&](const std::string& v) {
                    o.meshDir = v;
                    o.meshGiven = true;
                })
        .option("--stats-json",
                [&](const std::string& v) {
                    o.statsJson = v;
                    o.statsGiven = true;
                })
        .parse(args);
    if ((o.exportGiven && o.exportDir.empty()) || (o.meshGiven && o.meshDir.empty()) ||
        (o.statsGiven && o.statsJson.empty()))
        throw UsageError(std::string(o.statsGiven && o.statsJson.empty()    ? "--stats-json"
                                     : o.exportGiven && o.exportDir.empty() ? "--export-ply"
                                                                            : "--export-mesh") +
                         ": empty path");
    if (o.sceneName.empty() == o.sceneFile.empty())
        throw UsageError("give exactly one of --scene NAME or --scene-file FILE");
    if (o.particles > 0.0 && o.radius > 0.0)
        throw UsageError("give at most one of --particles and --radius");
    if (o.frames < 0)
        throw UsageError("--frames F is required");
    return o;
}

/// The radius for about n particles, refused (with the counts the table's radius range allows)
/// when it falls outside that range.
float radiusForParticles(const SceneDescription& scene, double n) {
    const ParameterInfo& info = *findParameter("particleRadius");
    const float r = scene.radiusForParticleCount(n);
    if (r >= info.minValue && r <= info.maxValue)
        return r;
    const double v = scene.fluidVolume();
    auto count = [&](double radius) { return v / std::pow(2.0 * radius, 3.0); };
    std::ostringstream s;
    s.precision(3);
    s << "--particles " << n << ": the scene's " << v << " m^3 of fluid at " << n
      << " particles means r = " << r << " m, outside particleRadius " << ParameterSet::rangeText(info)
      << "; this scene takes about " << (long long)std::ceil(count(info.maxValue)) << " to "
      << (long long)std::floor(count(info.minValue)) << " particles";
    throw UsageError(s.str());
}

/// A float as the double with the same shortest decimal form (0.9f -> 0.9, not 0.8999999761581421).
double tidy(float v) {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf - 1, v).ptr;
    *end = '\0';
    return std::strtod(buf, nullptr); // inf / nan stay so and are written as null
}

/// One --stats-json line. Adding a field is one line; names are stable (README).
nlohmann::ordered_json frameJson(Simulation& sim, long long frame, size_t nan, size_t escaped,
                                 const SurfaceResult* surface) {
    const FrameStats& fr = sim.lastFrame();
    nlohmann::ordered_json j;
    j["frame"] = frame;
    j["time"] = sim.time();
    j["steps"] = fr.steps;
    j["dt"] = fr.meanDt;
    j["iterations"] = fr.meanIterations;
    j["maxDensityError"] = fr.maxDensityError;
    j["fluidParticles"] = sim.fluidParticleCount();
    j["boundaryParticles"] = sim.boundaryParticleCount();
    j["tpsMs"] = fr.meanPhysicsMs;
    j["nan"] = nan;
    j["escaped"] = escaped;
    j["converged"] = fr.converged;
    j["contained"] = fr.contained;
    j["maxSpeed"] = fr.maxSpeed;
    j["kineticEnergy"] = fr.kineticEnergy;
    j["energyGrowth"] = fr.energyGrowth;
    j["blowUp"] = fr.blowUp;
    // Rigid bodies: centre of mass, velocity, submerged fraction (docs/SCENES.md).
    const std::vector<BodyStats> bodies = sim.bodyStats();
    if (!bodies.empty()) {
        auto vec = [](const Vec3f& v) {
            return nlohmann::ordered_json::array({tidy(v.x()), tidy(v.y()), tidy(v.z())});
        };
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const BodyStats& b : bodies)
            list.push_back({{"id", b.id},
                            {"name", b.name},
                            {"kinematic", b.kinematic},
                            {"position", vec(b.position)},
                            {"velocity", vec(b.velocity)},
                            {"submerged", b.submergedFraction},
                            {"fluidLevel", tidy(b.fluidLevel)},
                            {"fluidForce", vec(b.fluidForce)}});
        j["bodies"] = std::move(list);
    }
    if (surface) {
        const SurfaceStats& t = surface->stats;
        j["surfaceParticles"] = t.surfaceParticles;
        j["cubes"] = t.cubes;
        j["cubesUniform"] = t.cubesUniform;
        j["triangles"] = t.triangles;
        j["tDetectMs"] = t.tDetectMs;
        j["tOctreeMs"] = t.tOctreeMs;
        j["tDistanceMs"] = t.tDistanceMs;
        j["tMcMs"] = t.tMcMs;
        j["tTotalMs"] = t.tTotalMs;
        j["peakBytes"] = t.peakBytes;
        // Surface (solver-side detection + reconstruction) over the frame's physics time.
        if (const FrameSurfacePtr fs = sim.frameSurface(); fs && fr.steps > 0)
            j["surfaceShare"] = fs->totalMs() / (fr.meanPhysicsMs * fr.steps);
    }
    return j;
}

/// What an out-of-memory message says about the simulation's size: its particles and the fields
/// that set them (from the scene's budget estimate before the simulation exists, then its counts).
std::string sizeNote(const SceneDescription& scene, const std::vector<std::string>& overrides,
                     const Simulation* sim) {
    double r = scene.particleRadius;
    int layers = 2;
    try { // the values Simulation uses; a bad value is reported by Simulation itself
        ParameterSet p;
        p.set("particleRadius", scene.particleRadius);
        for (const auto& [name, value] : scene.parameters)
            p.setFromString(name, value);
        for (const std::string& a : overrides)
            p.parseAssignment(a);
        r = p.get(Param::particleRadius);
        layers = p.geti(Param::boundaryLayers);
    } catch (const std::exception&) {
    }
    const SceneBudget b = scene.budget(float(r), layers);
    std::ostringstream s;
    s.precision(3);
    s << (sim ? double(sim->fluidParticleCount()) : b.fluidParticles) << " fluid + "
      << (sim ? double(sim->boundaryParticleCount()) : b.wallParticles)
      << " boundary particles at field 'particleRadius' r = " << r << " m in field 'container' (["
      << scene.container.min.transpose() << "] .. [" << scene.container.max.transpose() << "] m), estimated "
      << b.bytes / double(1 << 20) << " MiB";
    return s.str();
}

int runSceneIn(const Args& args, std::string& where);

/// runSceneIn, with a std::bad_alloc turned into a message naming the scene, its size and the
/// stage (a bare "std::bad_alloc" named nothing; issue 30).
int runScene(const Args& args) {
    std::string where = "reading the scene";
    try {
        return runSceneIn(args, where);
    } catch (const std::bad_alloc&) {
        throw OutOfMemoryError(
            where + "; choose a larger particleRadius (--radius, --particles), a smaller container "
                    "or fewer fluid shapes, or free memory (std::bad_alloc)");
    }
}

namespace fs = std::filesystem;

void prepareDirectory(const std::string& option, const std::string& dir) {
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
}

// Refuses an export directory whose frame files (prefix + 5 digits + ".ply") would write over
// one of the files.
void checkExportDir(const std::vector<RolePath>& files, const std::string& dir, const char* prefix,
                    const std::string& option) {
    if (dir.empty())
        return;
    std::error_code ec;
    for (const RolePath& f : files) {
        const fs::path p(f.path);
        const std::string name = p.filename().string();
        const bool frameName = name.rfind(prefix, 0) == 0 && name.size() == std::strlen(prefix) + 9 &&
                               name.substr(name.size() - 4) == ".ply";
        if (frameName && fs::exists(dir, ec) &&
            fs::equivalent(p.parent_path().empty() ? "." : p.parent_path(), dir, ec))
            throw std::invalid_argument(option + " '" + dir + "' would write over the " + f.role + " '" +
                                        f.path + "'; refusing to overwrite it");
    }
}

// No output may be an input (the scene file, its meshes) or another output: --stats-json onto
// the scene file used to overwrite it with exit 0. Frame files are checked by their names.
void checkRunOutputs(const RunOptions& o, const SceneDescription& scene) {
    std::vector<RolePath> inputs;
    if (!o.sceneFile.empty())
        inputs.push_back({"scene file", o.sceneFile});
    for (const FluidMesh& m : scene.fluidMeshes)
        inputs.push_back({"fluid mesh", m.meshPath});
    for (const BodyDescription& b : parseBodiesJson(scene.bodiesJson, scene.sourcePath))
        if (!b.meshPath.empty())
            inputs.push_back({"body mesh", b.meshPath});
    std::vector<RolePath> outputs;
    if (o.statsGiven)
        outputs.push_back({"--stats-json", o.statsJson});
    checkOutputsDistinct(inputs, outputs);
    std::vector<RolePath> all = inputs;
    all.insert(all.end(), outputs.begin(), outputs.end());
    checkExportDir(all, o.exportDir, "frame_", "--export-ply");
    checkExportDir(all, o.meshDir, "mesh_", "--export-mesh");
}

void printRunHeader(const SceneDescription& scene, const Simulation& sim, double fps, long long frames) {
    std::printf(
        "scene %s: %zu fluid particles, %zu boundary particles (%zu on %zu bodies), r = %g m, %g fps, "
        "%lld frames\n",
        scene.name.c_str(), sim.fluidParticleCount(), sim.boundaryParticleCount(), sim.bodySampleCount(),
        sim.rigidBodies().size(), sim.parameters().get(Param::particleRadius), fps, frames);
    std::printf("%6s %9s %6s %10s %6s %9s %9s\n", "frame", "time s", "steps", "dt ms", "iter", "maxErr %",
                "Tps ms");
    std::fflush(stdout);
}

// A leaf far below r hangs the surface (leafSize=1e-6 at r = 20 mm: > 60 s, 950 MB).
void checkSurfaceLeaf(const Simulation& sim) {
    try {
        checkLeafSize("--set leafSize", sim.parameters().get(Param::leafSize),
                      sim.parameters().get(Param::particleRadius));
    } catch (const UsageError& e) {
        throw UsageError(std::string(e.what()) + " (--set surfaceEnabled=false runs without a surface)");
    }
}

void exportFrame(const RunOptions& o, Simulation& sim, bool surfaceOn, long long frame) {
    char name[64];
    if (!o.exportDir.empty()) {
        std::snprintf(name, sizeof name, "frame_%05lld.ply", frame);
        sim.exportParticles((fs::path(o.exportDir) / name).string());
    }
    if (!o.meshDir.empty() && surfaceOn) {
        std::snprintf(name, sizeof name, "mesh_%05lld.ply", frame);
        sim.exportMesh((fs::path(o.meshDir) / name).string());
    }
}

void printFrameLine(const Simulation& sim, long long f, const SurfaceResult* surface) {
    const FrameStats& fr = sim.lastFrame();
    std::printf("%6lld %9.4f %6d %10.4f %6.2f %9.3f %9.2f", f, sim.time(), fr.steps, 1e3 * fr.meanDt,
                fr.meanIterations, 100.0 * fr.maxDensityError, fr.meanPhysicsMs);
    if (surface)
        std::printf("   surface: %llu of %zu particles, %llu cubes, %llu triangles, %.1f ms",
                    (unsigned long long)surface->stats.surfaceParticles, sim.fluidParticleCount(),
                    (unsigned long long)surface->stats.cubes, (unsigned long long)surface->stats.triangles,
                    surface->stats.tTotalMs);
    std::printf("%s%s\n", fr.converged ? "" : "  (eta not met)", fr.blowUp ? "  (blow-up)" : "");
    std::fflush(stdout);
}

// Runs frames 1..o.frames (frame 0 is exported), printing and writing each frame's statistics.
int runFrames(const RunOptions& o, Simulation& sim, double fps, std::ofstream& stats,
              const std::string& source, const std::string& simSize, std::string& where) {
    const bool surfaceOn = sim.parameters().getb(Param::surfaceEnabled);
    // The initial surface: bad surface settings fail before any physics is spent.
    if (surfaceOn && !sim.surface())
        throw std::runtime_error("frame 0: " + sim.surfaceWarning() +
                                 " (--set surfaceEnabled=false runs without a surface)");
    exportFrame(o, sim, surfaceOn, 0);
    long long firstBlowUp = 0;
    std::string blowUpWhy;
    for (long long f = 1; f <= o.frames; ++f) {
        where = source + ": out of memory at frame " + std::to_string(f) + " (" + simSize + ")";
        sim.advanceFrame(1.0 / fps);
        const FrameStats& fr = sim.lastFrame();
        const size_t nan = sim.nonFiniteCount(), escaped = fr.escaped;
        // The surface of the frame's last state (the per-step rebuild is the GUI's job).
        const SurfaceResult* surface = surfaceOn ? sim.surface() : nullptr;
        printFrameLine(sim, f, surface);
        if (stats.is_open()) {
            // Non-finite numbers are written as null (nlohmann's dump).
            stats << frameJson(sim, f, nan, escaped, surface).dump() << "\n";
            stats.flush();
            if (!stats)
                throw std::runtime_error("--stats-json: write to '" + o.statsJson + "' failed (disk full?)");
        }
        // A surface asked for (surfaceEnabled) but not built is an error, not a silent gap: exit 0
        // means every requested output exists. This frame's statistics are written first.
        if (surfaceOn && !surface)
            throw std::runtime_error("frame " + std::to_string(f) + ": " + sim.surfaceWarning() +
                                     " (--set surfaceEnabled=false runs without a surface)");
        exportFrame(o, sim, surfaceOn, f);
        if (nan > 0)
            throw std::runtime_error(std::to_string(nan) + " particles have non-finite values at frame " +
                                     std::to_string(f));
        if (fr.blowUp && firstBlowUp == 0) {
            firstBlowUp = f;
            blowUpWhy = sim.blowUpMessage();
        }
    }
    if (firstBlowUp > 0) {
        std::fflush(stdout);
        std::cerr << "octofluid-cli run: blow-up flagged at frame " << firstBlowUp
                  << (blowUpWhy.empty() ? "" : ": " + blowUpWhy) << " (exit " << kExitBlowUp << ")\n";
        return kExitBlowUp;
    }
    return 0;
}

int runSceneIn(const Args& args, std::string& where) {
    const RunOptions o = parseRunOptions(args);
    where = (o.sceneFile.empty() ? "built-in scene '" + o.sceneName + "'" : o.sceneFile) +
            ": out of memory reading the scene";
    SceneDescription scene =
        o.sceneFile.empty() ? SceneLibrary::load(o.sceneName) : loadSceneFile(o.sceneFile);
    const std::string source = o.sceneFile.empty() ? "built-in scene '" + scene.name + "'" : o.sceneFile;
    if (o.particles > 0.0)
        scene.particleRadius = radiusForParticles(scene, o.particles);
    if (o.radius > 0.0)
        scene.particleRadius = float(o.radius);
    const double fps = o.fps > 0.0 ? o.fps : scene.fps;

    checkRunOutputs(o, scene);
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
    where = source + ": out of memory building the simulation (" + sizeNote(scene, overrides, nullptr) + ")";
    Simulation sim(scene, overrides);
    const std::string simSize = sizeNote(scene, overrides, &sim);
    where = source + ": out of memory at frame 0 (" + simSize + ")";
    printRunHeader(scene, sim, fps, o.frames);
    if (sim.parameters().getb(Param::surfaceEnabled))
        checkSurfaceLeaf(sim);
    return runFrames(o, sim, fps, stats, source, simSize, where);
}

int runCommand(const Args& args) {
    try {
        return runScene(args);
    } catch (const std::bad_alloc&) { // while formatting the message: nothing left to name
        std::fflush(stdout);
        std::cerr << "octofluid-cli run: error: " << kOutOfMemoryMessage << "\n";
        return 1;
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
