// `octofluid-cli validate spheric2`: SPHERIC Test 2 (Issa & Violeau 2006), the dam break with a
// box of Kleefsman et al. 2005 (J. Comput. Phys. 206:363). Runs the scene (or reads the frames
// of an earlier `run --export-ply`), reads the water height at the wire gauges H1-H4 every frame,
// and prints each gauge's RMS against the experiment and the RMS pooled over all four.
#include "ArgParser.h"
#include "Command.h"
#include "OutputSafety.h"

#include "common/DataDirectory.h"
#include "common/Parameters.h"
#include "io/ParticleIo.h"
#include "scene/Scene.h"
#include "sim/HeightGauge.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace octo::cli {
namespace {

namespace fs = std::filesystem;

/// The goal for the pooled RMS (m), judged only at the reference spacing over the whole experiment.
constexpr double kGoalPooledRms = 0.04;
constexpr double kReferenceRadius = 0.00915, kGoalSeconds = 6.0;
/// Water height (m) at which a gauge counts the front as arrived (the lab's dry gauges read < 3 mm).
constexpr double kArrivalLevel = 0.02;

struct ValidateOptions {
    std::string caseName, csv, fromPly;
    double radius = 0.0, seconds = 6.0, fps = 0.0;
    std::vector<std::string> sets;
};

constexpr GaugeMethod kMethods[] = {GaugeMethod::Fill, GaugeMethod::TopParticle, GaugeMethod::WettedLength};
constexpr const char* kMethodNames[] = {"fill", "top", "wetted"};
constexpr int kMethodCount = 3;

ValidateOptions parseValidateOptions(const Args& args) {
    ValidateOptions o;
    const ParameterInfo& r = *findParameter("particleRadius");
    std::vector<std::string> cases;
    ArgParser()
        .option("--radius",
                [&](const std::string& v) { o.radius = parseReal("--radius", v, r.minValue, r.maxValue); })
        .option("--seconds", [&](const std::string& v) { o.seconds = parseReal("--seconds", v, 1e-3, 1e3); })
        .option("--fps", [&](const std::string& v) { o.fps = parseReal("--fps", v, 1.0, 1e4); })
        .option("--set", [&](const std::string& v) { o.sets.push_back(v); })
        .option("--csv", o.csv)
        .option("--from-ply", o.fromPly)
        .positionals(cases)
        .parse(args);
    if (cases.size() != 1 || cases[0] != "spheric2")
        throw UsageError(cases.empty() ? "give the case to validate: spheric2"
                                       : "unknown case '" + cases.back() + "' (known: spheric2)");
    o.caseName = cases[0];
    if (!o.fromPly.empty() && !o.sets.empty())
        throw UsageError("--set has no effect with --from-ply (the frames are already simulated)");
    return o;
}

/// Heights of every gauge by every method at one state of the particles.
struct GaugeSample {
    double time = 0.0;
    std::vector<float> heights[kMethodCount]; ///< [method][gauge]
};

GaugeSample readGauges(const std::vector<Vec3f>& positions, float r, float floorY,
                       const std::vector<GaugeLocation>& gauges, double time) {
    GaugeSample s;
    s.time = time;
    for (int m = 0; m < kMethodCount; ++m)
        for (const GaugeLocation& g : gauges)
            s.heights[m].push_back(gaugeHeight(positions, r, g.x, g.z, kMethods[m], floorY));
    return s;
}

class GaugeLog {
public:
    GaugeLog(const std::vector<GaugeLocation>& gauges, const GaugeSeries& experiment, const std::string& csv)
        : gauges_(gauges), experiment_(experiment) {
        for (int m = 0; m < kMethodCount; ++m)
            for (const GaugeLocation& g : gauges)
                series_[m].names.push_back(g.name);
        for (int m = 0; m < kMethodCount; ++m)
            series_[m].heights.resize(gauges.size());
        if (csv.empty())
            return;
        out_.open(csv);
        if (!out_)
            throw std::runtime_error("--csv: cannot write '" + csv + "'");
        out_ << "t_s";
        for (const char* m : kMethodNames)
            for (const GaugeLocation& g : gauges)
                out_ << "," << g.name << "_" << m << "_m";
        for (const GaugeLocation& g : gauges)
            out_ << "," << g.name << "_experiment_m";
        out_ << "\n";
    }

    /// Records a sample and prints the progress line (simulation fill / experiment per gauge).
    void add(const GaugeSample& s, const std::string& extra) {
        for (int m = 0; m < kMethodCount; ++m) {
            series_[m].times.push_back(s.time);
            for (size_t g = 0; g < gauges_.size(); ++g)
                series_[m].heights[g].push_back(s.heights[m][g]);
        }
        std::printf("t %6.3f s", s.time);
        for (size_t g = 0; g < gauges_.size(); ++g)
            std::printf("  %s %.3f/%.3f", gauges_[g].name.c_str(), s.heights[0][g], experimentAt(g, s.time));
        std::printf("  %s\n", extra.c_str());
        std::fflush(stdout);
        if (!out_.is_open())
            return;
        out_ << s.time;
        for (int m = 0; m < kMethodCount; ++m)
            for (float h : s.heights[m])
                out_ << "," << h;
        for (size_t g = 0; g < gauges_.size(); ++g)
            out_ << "," << experimentAt(g, s.time);
        out_ << "\n";
        out_.flush();
        if (!out_)
            throw std::runtime_error("--csv: write failed (disk full?)");
    }

    /// `frames`: the frames asked for (samples at t = 0 and after each frame).
    /// `radius`: the run's particle radius (the goal is judged only at the reference one).
    void printSummary(long long frames, double radius) const {
        const double reached = series_[0].times.empty() ? 0.0 : series_[0].times.back();
        std::printf("\nRMS of the water height against Kleefsman et al. 2005 over 0 <= t <= %.3f s (%zu "
                    "samples per gauge)%s; arrival = first time at >= %.2f m\n",
                    reached, series_[0].times.size(),
                    (long long)series_[0].times.size() < frames + 1 ? ", stopped before --seconds" : "",
                    kArrivalLevel);
        std::printf("%-8s", "gauge");
        for (const GaugeLocation& g : gauges_)
            std::printf(" %8s", g.name.c_str());
        std::printf(" %8s   arrival s", "pooled");
        for (const GaugeLocation& g : gauges_)
            std::printf(" %5s", g.name.c_str());
        std::printf("\n");
        for (int m = 0; m < kMethodCount; ++m) {
            const GaugeComparison c = compareGauges(series_[m], experiment_, 0.0, reached);
            std::printf("%-8s", kMethodNames[m]);
            for (const GaugeError& e : c.gauges)
                std::printf(" %8.4f", e.rms);
            std::printf(" %8.4f m          ", c.pooledRms);
            for (size_t g = 0; g < gauges_.size(); ++g)
                printArrival(series_[m].firstTimeAtOrAbove(g, kArrivalLevel));
            std::printf("\n");
        }
        std::printf("%-8s%*s", "exp.", int(9 * gauges_.size() + 21), "");
        for (size_t g = 0; g < gauges_.size(); ++g)
            printArrival(
                experiment_.firstTimeAtOrAbove(experiment_.gaugeIndex(gauges_[g].name), kArrivalLevel));
        const double fill = compareGauges(series_[0], experiment_, 0.0, reached).pooledRms;
        std::printf("\ngoal: pooled RMS (fill) <= %.2f m at r = %g m over 0-%g s: ", kGoalPooledRms,
                    kReferenceRadius, kGoalSeconds);
        if (std::abs(radius - kReferenceRadius) <= 1e-6 && reached >= kGoalSeconds - 1e-6)
            std::printf("%s\n", fill <= kGoalPooledRms ? "met" : "not met");
        else
            std::printf("not judged (this run: r = %g m over 0-%.3f s)\n", radius, reached);
    }

private:
    /// A front's arrival time, "-" when the gauge never reached the level (firstTimeAtOrAbove < 0).
    static void printArrival(double t) {
        if (t < 0.0)
            std::printf(" %5s", "-");
        else
            std::printf(" %5.2f", t);
    }

    double experimentAt(size_t g, double t) const {
        return experiment_.at(experiment_.gaugeIndex(gauges_[g].name), t);
    }

    const std::vector<GaugeLocation>& gauges_;
    const GaugeSeries& experiment_;
    GaugeSeries series_[kMethodCount];
    std::ofstream out_;
};

/// Frames of 1/fps that reach `seconds` (a frame's worth of rounding is not another frame).
long long frameCount(double seconds, double fps) {
    return (long long)std::ceil(seconds * fps - 1e-6);
}

std::string shortNumber(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string secondsSince(std::chrono::steady_clock::time_point t0) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f s wall", s);
    return buf;
}

/// Simulates the scene from t = 0 to `seconds`, reading the gauges at t = 0 and every frame.
void simulate(const ValidateOptions& o, SceneDescription scene, double fps,
              const std::vector<GaugeLocation>& gauges, GaugeLog& log) {
    if (o.radius > 0.0)
        scene.particleRadius = float(o.radius);
    Simulation sim(scene, o.sets);
    const float r = float(sim.parameters().get(Param::particleRadius));
    const float floorY = scene.container.min.y();
    std::printf("spheric2: %zu fluid particles, r = %g m, solver %s, %g fps, %g s\n",
                sim.fluidParticleCount(), r, sim.parameters().choice(Param::pressureSolver).c_str(), fps,
                o.seconds);
    const auto t0 = std::chrono::steady_clock::now();
    log.add(readGauges(sim.solver().state().positions, r, floorY, gauges, sim.time()), "");
    for (long long k = 1; k <= frameCount(o.seconds, fps); ++k) {
        sim.advanceFrame(1.0 / fps);
        if (sim.nonFiniteCount() > 0)
            throw std::runtime_error("non-finite particles at t = " + std::to_string(sim.time()) + " s");
        const std::string extra = std::to_string(sim.stepCount()) + " steps, " + secondsSince(t0);
        log.add(readGauges(sim.solver().state().positions, r, floorY, gauges, sim.time()), extra);
    }
}

/// Reads DIR/frame_00000.ply, frame_00001.ply, ... (frame k at t = k / fps) up to `seconds` or the
/// first missing frame.
void readFrames(const ValidateOptions& o, const SceneDescription& scene, double fps,
                const std::vector<GaugeLocation>& gauges, GaugeLog& log) {
    const float r = o.radius > 0.0 ? float(o.radius) : scene.particleRadius;
    std::printf("spheric2: frames of %s, r = %g m, %g fps, %g s\n", o.fromPly.c_str(), r, fps, o.seconds);
    for (long long k = 0; k <= frameCount(o.seconds, fps); ++k) {
        char name[32];
        std::snprintf(name, sizeof name, "frame_%05lld.ply", k);
        const fs::path path = fs::path(o.fromPly) / name;
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) {
            if (k == 0)
                throw std::runtime_error("--from-ply: no '" + path.string() + "'");
            break;
        }
        const ParticleData frame = readParticles(path.string());
        log.add(readGauges(frame.positions, r, scene.container.min.y(), gauges, double(k) / fps), name);
    }
}

int validate(const ValidateOptions& o) {
    const fs::path dir = fs::path(dataDirectory()) / "validation";
    const std::vector<RolePath> inputs{
        {"scene file", (dir / "spheric-test2.json").string()},
        {"probe table", (dir / "kleefsman_probes.csv").string()},
        {"experiment's heights", (dir / "kleefsman_heights_0p01s.csv").string()}};
    if (!o.csv.empty())
        checkOutputsDistinct(inputs, {{"--csv", o.csv}});
    const SceneDescription scene = loadSceneFile(inputs[0].path);
    const std::vector<GaugeLocation> gauges = readHeightGauges(inputs[1].path);
    const GaugeSeries experiment = readGaugeCsv(inputs[2].path);
    if (o.seconds > experiment.times.back())
        throw UsageError("--seconds " + shortNumber(o.seconds) + ": the experiment ends at " +
                         shortNumber(experiment.times.back()) + " s");
    const double fps = o.fps > 0.0 ? o.fps : scene.fps;
    GaugeLog log(gauges, experiment, o.csv);
    if (o.fromPly.empty())
        simulate(o, scene, fps, gauges, log);
    else
        readFrames(o, scene, fps, gauges, log);
    log.printSummary(frameCount(o.seconds, fps), o.radius > 0.0 ? o.radius : double(scene.particleRadius));
    return 0;
}

int validateCommand(const Args& args) {
    ValidateOptions o;
    try {
        o = parseValidateOptions(args);
        return validate(o);
    } catch (const UsageError& e) {
        std::fflush(stdout);
        std::cerr << "octofluid-cli validate: error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::cerr << "octofluid-cli validate: error: " << e.what() << "\n";
        return 1;
    }
}

const CommandRegistrar registerValidate(
    "validate",
    {"validate spheric2 [--radius R] [--seconds 6] [--fps F] [--set name=value ...] [--csv OUT] [--from-ply "
     "DIR]",
     "SPHERIC Test 2 (Kleefsman et al. 2005 dam break with a box; scene share/octofluid/validation/"
     "spheric-test2.json, r = 9.15 mm is the reference resolution): water height at the gauges H1-H4 every "
     "frame (one line each: simulation / experiment), then each gauge's RMS against the experiment and the "
     "pooled RMS over [0, S], for three gauge readings: 'fill' (highest level where the SPH fill fraction is "
     ">= 1/2), 'top' (highest particle within 4r, plus r) and 'wetted' (length of the vertical line where "
     "the "
     "fill fraction is >= 1/2). --from-ply DIR reads the frames of `run "
     "--export-ply DIR` (frame k at k/fps) instead of simulating; --csv writes every sample.",
     validateCommand});

} // namespace
} // namespace octo::cli
