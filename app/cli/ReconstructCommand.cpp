// octofluid-cli reconstruct: surface meshes from particle files written by any simulator.
#include "ArgParser.h"
#include "BenchReconstruct.h"
#include "Command.h"
#include "FramePattern.h"
#include "OutputSafety.h"

#include "common/Parameters.h"

#include "io/MeshWriter.h"
#include "io/ParticleIo.h"
#include "spatial/NeighborGrid.h"
#include "surface/SurfaceReconstructor.h"

#include <nlohmann/json.hpp>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace octo::cli {

namespace {

struct Options {
    std::string in, out, statsJson;
    bool statsGiven = false;  // --stats-json "" is refused, not ignored
    ParameterSet params;      // the table's surface parameters, as `run --set` takes them
    bool radiusGiven = false; // false: estimate particleRadius from the first frame
    bool normals = true;
    long long first = -1, last = -1;
    bool quiet = false;
};

/// The parameters reconstruct uses (SurfaceSettings); others are refused so a typo cannot pass.
const std::vector<std::string>& surfaceParameterNames() {
    static const std::vector<std::string> names{"particleRadius", "restDensity",        "lambdaMin",
                                                "leafSize",       "kernelRadiusFactor", "tLow",
                                                "tHigh",          "surfaceMethod",      "surfaceSEnlargement",
                                                "surfaceField",   "surfaceSmoothing"};
    return names;
}

void setSurfaceParameter(Options& o, const std::string& option, const std::string& name,
                         const std::string& value) {
    const auto& names = surfaceParameterNames();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string list;
        for (const std::string& n : names)
            list += (list.empty() ? "" : ", ") + n;
        throw UsageError(option + ": parameter '" + name + "' does not act on reconstruct (it takes " + list +
                         ")");
    }
    try {
        o.params.setFromString(name, value);
    } catch (const ParameterError& e) {
        throw UsageError(option + ": " + e.what());
    }
    if (name == "particleRadius")
        o.radiusGiven = true;
}

Options parse(const Args& args) {
    Options o;
    std::vector<std::string> positional;
    // --radius, --lambda, --leaf, --method, --s-enlargement and --rest-density are aliases of
    // table entries: same names in messages, same ranges as `run --set`.
    auto alias = [&](const char* option, const char* name) {
        return [&o, option, name](const std::string& v) { setSurfaceParameter(o, option, name, v); };
    };
    ArgParser()
        .option("--set",
                [&](const std::string& v) {
                    const auto eq = v.find('=');
                    if (eq == std::string::npos || eq == 0)
                        throw UsageError("--set: expected name=value, got '" + v + "'");
                    setSurfaceParameter(o, "--set", v.substr(0, eq), v.substr(eq + 1));
                })
        .option("--radius", alias("--radius", "particleRadius"))
        .option("--lambda", alias("--lambda", "lambdaMin"))
        .option("--leaf", alias("--leaf", "leafSize"))
        .option("--method", alias("--method", "surfaceMethod"))
        .option("--s-enlargement", alias("--s-enlargement", "surfaceSEnlargement"))
        .option("--rest-density", alias("--rest-density", "restDensity"))
        .option("--stats-json",
                [&](const std::string& v) {
                    o.statsJson = v;
                    o.statsGiven = true;
                })
        .option("--stats",
                [&](const std::string& v) {
                    o.statsJson = v;
                    o.statsGiven = true;
                })
        .option("--first",
                [&](const std::string& v) { o.first = parseWhole("--first", v, 0, kMaxFrameNumber); })
        .option("--last", [&](const std::string& v) { o.last = parseWhole("--last", v, 0, kMaxFrameNumber); })
        .flag("--no-normals", [&] { o.normals = false; })
        .flag("--quiet", o.quiet)
        .flag("-q", o.quiet)
        .positionals(positional)
        .parse(args);
    if (positional.size() != 2)
        throw UsageError("expected IN and OUT files (see octofluid-cli --help)");
    o.in = positional[0];
    o.out = positional[1];
    if (o.in.empty() || o.out.empty())
        throw UsageError(std::string(o.in.empty() ? "IN" : "OUT") + ": empty path");
    if (o.statsGiven && o.statsJson.empty())
        throw UsageError("--stats-json: empty path");
    if (o.first >= 0 && o.last >= 0 && o.last < o.first)
        throw UsageError("--last is before --first");
    try {
        o.params.validate();
    } catch (const ParameterError& e) {
        throw UsageError(e.what());
    }
    return o;
}

// Frame numbers of the files matching a pattern in its directory (listed once).
std::vector<long long> existingFrames(const FramePattern& pattern) {
    const std::filesystem::path dir = pattern.dir.empty() ? std::filesystem::path(".") : pattern.dir;
    std::vector<long long> frames;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (const auto f = pattern.match(e.path().filename().string()))
            frames.push_back(*f);
    if (ec)
        throw std::runtime_error(dir.string() + ": cannot list directory: " + ec.message());
    std::sort(frames.begin(), frames.end());
    return frames;
}

// The points sorted by the grid's cells of edge `cell` (setDomainFromPoints bounds its memory).
std::vector<Vec3f> sortIntoGrid(NeighborGrid& grid, const std::vector<Vec3f>& x, float cell) {
    grid.setDomainFromPoints(x, cell);
    grid.build(x);
    std::vector<Vec3f> xs;
    grid.gather(std::span<const Vec3f>(x), xs);
    return xs;
}

// Neighbour work a frame may cost, in candidate pairs (NeighborGrid::candidatePairs): about 8
// per particle for a fluid at cells of the kernel radius; 512 per particle is 64x that, and the
// floor lets small files through whatever their shape (2.5e7 pairs take ~0.1 s).
constexpr uint64_t kMaxPairsPerParticle = 512;
constexpr uint64_t kMinPairBudget = 25'000'000;
constexpr double kMaxLeavesPerAxis = double(1 << 20); // the surface lattice's own limit

uint64_t pairBudget(size_t particles) {
    return std::max<uint64_t>(kMinPairBudget, kMaxPairsPerParticle * uint64_t(particles));
}

// Largest extent of the points' box without the outer 0.1 % on each side of each axis.
double robustExtent(const std::vector<Vec3f>& x) {
    const size_t cut = x.size() / 1000;
    std::vector<float> c(x.size());
    double extent = 0.0;
    for (int a = 0; a < 3; ++a) {
        for (size_t i = 0; i < x.size(); ++i)
            c[i] = x[i][a];
        std::nth_element(c.begin(), c.begin() + std::ptrdiff_t(cut), c.end());
        const double lo = c[cut];
        std::nth_element(c.begin(), c.end() - std::ptrdiff_t(cut) - 1, c.end());
        extent = std::max(extent, double(c[c.size() - cut - 1]) - lo);
    }
    return extent;
}

// Widest particle box the radius estimate takes (a float lattice beyond it loses its digits).
constexpr double kMaxEstimateSpan = 1e30;

// Median nearest-neighbour distance over a sample of particles.
float medianNearestDistance(const std::string& source, const std::vector<Vec3f>& x) {
    if (x.size() < 2)
        throw std::invalid_argument(source +
                                    ": cannot estimate the particle radius from fewer than 2 particles; "
                                    "pass --radius");
    Aabb box;
    for (const Vec3f& p : x)
        box.extend(p);
    // In double: two points at +-2e38 span more than a float holds.
    const Vec3d e = box.max.cast<double>() - box.min.cast<double>();
    if (!(e.maxCoeff() <= kMaxEstimateSpan)) {
        std::ostringstream s;
        s << source << ": cannot estimate the particle radius: the particles span " << e.maxCoeff()
          << " m (limit " << kMaxEstimateSpan << " m: far-flung coordinates?); pass --radius";
        throw std::invalid_argument(s.str());
    }
    if (!(e.maxCoeff() > 0.0))
        throw std::invalid_argument(source +
                                    ": cannot estimate the particle radius (all particles coincide); "
                                    "pass --radius");
    const float diag = std::max(float(e.maxCoeff()), 1e-6f);
    // Spacing if the box were full; the box without the outer 0.1 % per side and axis, so that
    // one far-flung particle does not make the cells hold the whole rest.
    const float guess = std::max(float(robustExtent(x)), 1e-6f) / std::cbrt(float(x.size()));
    NeighborGrid grid;
    const std::vector<Vec3f> xs = sortIntoGrid(grid, x, guess);
    // Clustered particles (most of them at one point) would make every sampled search scan them all.
    if (const uint64_t pairs = grid.candidatePairs(), budget = pairBudget(x.size()); pairs > budget) {
        std::ostringstream s;
        s << source << ": cannot estimate the particle radius: " << grid.maxOccupancy() << " of " << x.size()
          << " particles share one cell of " << grid.cellSize() << " m (" << pairs
          << " candidate pairs, limit " << budget << "): clustered or coincident particles; pass --radius";
        throw std::invalid_argument(s.str());
    }
    std::vector<float> d;
    const size_t step = std::max<size_t>(1, xs.size() / 2000);
    for (size_t k = 0; k < xs.size(); k += step) {
        // The search radius doubles from one cell to the box's size: at most ~40 rounds (the span
        // is at most 1e12 cells of the guess), never an unbounded loop (issue 30: points at
        // +-9e37 made the float radius inf, and inf * 2 <= inf looped forever).
        double best = std::numeric_limits<double>::infinity();
        const Vec3d xk = xs[k].cast<double>();
        double rad = grid.cellSize();
        for (int round = 0; round < 64 && std::isinf(best) && rad <= 4.0 * double(diag); ++round, rad *= 2.0)
            grid.forEachNeighbor(xs[k], float(rad), xs, [&](uint32_t j, const Vec3f& xj, float) {
                const double dj = (xj.cast<double>() - xk).norm();
                if (j != k && dj > 0.0 && dj <= rad)
                    best = std::min(best, dj);
            });
        if (std::isfinite(best))
            d.push_back(float(best));
    }
    if (d.empty()) {
        if (!(e.maxCoeff() > 0.0f))
            throw std::invalid_argument(source +
                                        ": cannot estimate the particle radius (all particles coincide); "
                                        "pass --radius");
        std::ostringstream s;
        s << source << ": cannot estimate the particle radius: no two particles are a finite distance apart "
          << "(the particles span [" << box.min.transpose() << "] .. [" << box.max.transpose()
          << "] m: far-flung coordinates?); pass --radius";
        throw std::invalid_argument(s.str());
    }
    std::nth_element(d.begin(), d.begin() + std::ptrdiff_t(d.size() / 2), d.end());
    return d[d.size() / 2];
}

// The particle radius of a file without one: half the spacing of the volume each particle fills.
// Half the median nearest-neighbour distance alone runs ~12 % short on a disordered fluid (SPH
// output: the nearest neighbour sits closer than the rest spacing), and with the file's densities
// V_j = m / rho_j then shrinks L by ~30 %: lambda ~0.7 in the bulk, every particle a surface particle
// (a cylinder-scene frame at r = 12.5 mm: estimate 11.1 mm, 11 904 of 11 904 flagged). Around sampled
// particles, count the particles within R = 4 d; the 90th-percentile count (an interior particle's:
// surface particles see a half-empty sphere) gives the volume per particle. Held to [d, 1.25 d] for
// the spacing, so a one-particle sheet (where a volume count means little) stays near d / 2.
float estimateParticleRadius(const std::string& source, const std::vector<Vec3f>& x) {
    const float d = medianNearestDistance(source, x);
    const float R = 4.0f * d;
    NeighborGrid grid;
    const std::vector<Vec3f> xs = sortIntoGrid(grid, x, R);
    std::vector<uint32_t> counts;
    // Far-flung outliers coarsen the grid (memory bound): then each count scans many more particles.
    const size_t samples = grid.cellSize() > 2.0f * R ? 200 : 2000;
    const size_t step = std::max<size_t>(1, xs.size() / samples);
    for (size_t k = 0; k < xs.size(); k += step) {
        uint32_t n = 0;
        grid.forEachNeighbor(xs[k], R, xs, [&](uint32_t, const Vec3f&, float) { ++n; });
        counts.push_back(n);
    }
    const auto q90 = counts.begin() + std::ptrdiff_t(counts.size() * 9 / 10);
    std::nth_element(counts.begin(), q90, counts.end());
    const double volumePerParticle = 4.0 / 3.0 * std::numbers::pi * double(R) * R * R / double(*q90);
    const float spacing = std::clamp(float(std::cbrt(volumePerParticle)), d, 1.25f * d);
    return 0.5f * spacing;
}

// Checks a frame before the surface sizes its grids or runs its neighbour loops: the span in
// leaves (far-flung particles, or a tiny --leaf) and the neighbour work of clustered or
// coincident particles (20 k particles at one point took 3 s, 100 k 90 s). Each refusal names
// the file, the option or field and the bound.
void checkSurfaceWork(const std::string& source, const std::vector<Vec3f>& x, const SurfaceSettings& s) {
    Aabb box;
    for (const Vec3f& p : x)
        box.extend(p);
    const double L = s.effectiveLeafSize();
    const double margin = double(s.kernelRadiusFactor) * s.particleRadius + L;
    const Vec3d ext = box.max.cast<double>() - box.min.cast<double>();
    for (int a = 0; a < 3; ++a) {
        const double leaves = std::ceil((ext[a] + 2.0 * margin) / L);
        if (!(leaves <= kMaxLeavesPerAxis)) {
            std::ostringstream m;
            m << source << ": the particles span " << ext[a] << " m along "
              << "xyz"[a] << ", " << leaves << " leaves of leafSize L = " << L << " m (limit "
              << kMaxLeavesPerAxis
              << " per axis): raise --leaf (leafSize) or remove far-flung particles (box ["
              << box.min.transpose() << "] .. [" << box.max.transpose() << "] m)";
            throw std::invalid_argument(m.str());
        }
    }
    const float cell = std::max(s.supportFactor, s.kernelRadiusFactor) * s.particleRadius;
    NeighborGrid grid;
    grid.setDomainFromPoints(x, cell);
    grid.build(x);
    const uint64_t pairs = grid.candidatePairs();
    const uint64_t budget = pairBudget(x.size());
    if (pairs > budget) {
        std::ostringstream m;
        m << source << ": particles too clustered for particleRadius r = " << s.particleRadius
          << " m: " << grid.maxOccupancy() << " of " << x.size() << " particles share one neighbour cell of "
          << grid.cellSize() << " m (" << pairs << " candidate pairs, limit " << budget << " = "
          << kMaxPairsPerParticle << " per particle): coincident particles, or pass the file's real --radius";
        throw std::invalid_argument(m.str());
    }
}

nlohmann::json statsJson(const SurfaceStats& s, const SurfaceSettings& settings) {
    return nlohmann::json{{"particles", s.particles},
                          {"surfaceParticles", s.surfaceParticles},
                          {"cubes", s.cubes},
                          {"cubesUniform", s.cubesUniform},
                          {"cubesNarrow", s.cubesNarrow},
                          {"cubesSparse", s.cubesSparse},
                          {"cubesOctree", s.cubesOctree},
                          {"corners", s.corners},
                          {"vertices", s.vertices},
                          {"triangles", s.triangles},
                          {"tDetectMs", s.tDetectMs},
                          {"tOctreeMs", s.tOctreeMs},
                          {"tDistanceMs", s.tDistanceMs},
                          {"tAnisotropyMs", s.tAnisotropyMs},
                          {"tMcMs", s.tMcMs},
                          {"tSmoothMs", s.tSmoothMs},
                          {"tTotalMs", s.tTotalMs},
                          {"peakBytes", s.peakBytes},
                          {"method", surfaceMethodName(settings.method)},
                          {"particleRadius", settings.particleRadius},
                          {"leafSize", s.leafSize},
                          {"lambdaMin", settings.lambdaMin}};
}

struct FrameJob {
    long long frame;
    std::string in, out;
};

// The frames to reconstruct: one file, or the existing files of a pattern within [--first, --last].
std::vector<FrameJob> planJobs(const Options& o, bool& sequence) {
    std::vector<FrameJob> jobs;
    const std::optional<FramePattern> inPattern = parseFramePattern("IN", o.in);
    const std::optional<FramePattern> outPattern = parseFramePattern("OUT", o.out);
    sequence = inPattern.has_value();
    if (sequence) {
        if (!outPattern)
            throw std::invalid_argument(
                "IN is a frame pattern, so OUT must be one too (e.g. surface_%04d.obj)");
        // The files that exist, within [--first, --last]: memory follows the files, not the range.
        std::vector<long long> frames = existingFrames(*inPattern);
        frames.erase(std::remove_if(frames.begin(), frames.end(),
                                    [&](long long f) {
                                        return (o.first >= 0 && f < o.first) || (o.last >= 0 && f > o.last);
                                    }),
                     frames.end());
        if (frames.empty())
            throw std::runtime_error("no input files match " + o.in +
                                     (o.first >= 0 || o.last >= 0 ? " in the --first/--last range" : ""));
        for (long long f : frames)
            jobs.push_back({f, inPattern->format(f), outPattern->format(f)});
    } else {
        if (outPattern)
            throw std::invalid_argument("OUT '" + o.out + "' is a frame pattern but IN '" + o.in +
                                        "' is one file; give both as patterns or neither");
        jobs.push_back({0, o.in, o.out});
    }
    return jobs;
}

// Fail early on a bad output extension, and never write over an input or another output
// (the mesh, --stats-json; compared by file identity, so hard links and ./ spellings count).
void checkOutputs(const Options& o, const std::vector<FrameJob>& jobs) {
    const std::string ext = std::filesystem::path(jobs[0].out).extension().string();
    if (ext != ".obj" && ext != ".ply" && ext != ".OBJ" && ext != ".PLY")
        throw std::invalid_argument(jobs[0].out + ": unknown mesh format (use .obj or .ply)");
    std::vector<RolePath> inputs, outputs;
    for (const FrameJob& job : jobs) {
        inputs.push_back({"IN", job.in});
        outputs.push_back({"OUT", job.out});
    }
    if (o.statsGiven)
        outputs.push_back({"--stats-json", o.statsJson});
    checkOutputsDistinct(inputs, outputs);
}

// The settings: the radius given, or estimated once from the first frame (and then held to the
// table's range).
SurfaceSettings resolveSettings(Options& o, const std::vector<FrameJob>& jobs) {
    if (!o.radiusGiven) {
        const ParticleData first = readParticles(jobs[0].in);
        const float r = estimateParticleRadius(jobs[0].in, first.positions);
        try {
            o.params.set("particleRadius", r);
        } catch (const ParameterError& e) {
            throw std::invalid_argument(jobs[0].in + ": estimated " + e.what() + "; pass --radius");
        }
        std::cerr << "reconstruct: estimated particle radius r = " << r
                  << " m (half the spacing of the volume per particle); pass --radius to override\n";
    }
    checkLeafSize("--leaf", o.params.get(Param::leafSize), o.params.get(Param::particleRadius));
    SurfaceSettings settings = surfaceSettingsFromParameters(o.params);
    settings.storeLeaves = false;
    settings.computeNormals = o.normals;
    settings.validate();
    if (const std::string w = settings.warning(); !w.empty())
        std::cerr << "reconstruct: warning: " << w << "\n";
    return settings;
}

// Reconstructs the frames (in parallel when there are many) and keeps each frame's stats.
class FrameRunner {
public:
    FrameRunner(const Options& o, const SurfaceSettings& settings, const std::vector<FrameJob>& jobs)
        : o_(o), settings_(settings), jobs_(jobs), stats_(jobs.size()) {}

    std::vector<SurfaceStats> runAll() {
        // Many frames: one frame per task (each reconstruction is parallel inside as well).
        if (jobs_.size() >= 4)
            tbb::parallel_for(tbb::blocked_range<size_t>(0, jobs_.size(), 1),
                              [&](const tbb::blocked_range<size_t>& r) {
                                  for (size_t k = r.begin(); k < r.end(); ++k)
                                      process(k);
                              });
        else
            for (size_t k = 0; k < jobs_.size(); ++k)
                process(k);
        return std::move(stats_);
    }

private:
    // A std::bad_alloc names the file, its size and the options that set the work (it said
    // "IN: std::bad_alloc"; issue 30).
    OutOfMemoryError outOfMemory(const FrameJob& job, const std::string& doing) const {
        std::ostringstream m;
        m.precision(3);
        m << job.in << ": out of memory " << doing << " (--radius r = " << settings_.particleRadius
          << " m, --leaf ";
        if (settings_.leafSize > 0.0f)
            m << settings_.leafSize << " m";
        else
            m << "auto";
        m << "): choose a larger --radius or --leaf, or a smaller file, or free memory (std::bad_alloc)";
        return OutOfMemoryError(m.str());
    }

    ParticleData readFrame(const FrameJob& job) const {
        try {
            return readParticles(job.in);
        } catch (const std::bad_alloc&) {
            throw outOfMemory(job, "reading the file");
        }
    }

    void reconstructFrame(const FrameJob& job, const ParticleData& data, SurfaceReconstructor& rec) const {
        const auto it = data.scalars.find("density");
        std::span<const float> rho;
        if (it != data.scalars.end() && it->second.size() == data.positions.size())
            rho = it->second;
        // Isolated: while this thread waits inside the reconstruction's own parallel loops it must
        // not pick up another frame, which would reuse this thread's reconstructor.
        try {
            std::span<const Vec3f>
                vel; // interpolated onto the mesh (PLY: vx vy vz speed) when the file has them
            if (data.velocities.size() == data.positions.size())
                vel = data.velocities;
            tbb::this_task_arena::isolate([&] { rec.reconstruct(data.positions, rho, settings_, vel); });
        } catch (const std::bad_alloc&) {
            throw outOfMemory(job, "reconstructing the surface of " + std::to_string(data.positions.size()) +
                                       " particles");
        } catch (const std::exception& e) {
            throw std::runtime_error(job.in + ": " + e.what()); // name the frame
        }
    }

    void report(const FrameJob& job, const SurfaceStats& s, size_t particles) {
        if (s.triangles == 0) { // written, but said (--lambda 0 or a huge leaf gave no word)
            std::lock_guard lock(printMutex_);
            std::cerr << "reconstruct: warning: " << job.in << ": the surface is empty (0 triangles; "
                      << s.surfaceParticles << " of " << particles
                      << " particles flagged with lambdaMin = " << settings_.lambdaMin
                      << ", leafSize L = " << s.leafSize << " m)\n";
        }
        if (!o_.quiet) {
            std::lock_guard lock(printMutex_);
            if (jobs_.size() > 1) // progress through a sequence (frames finish in any order)
                std::printf("[%zu/%zu] ", ++done_, jobs_.size());
            std::printf("%s -> %s: %llu particles, %llu surface, %llu cubes (uniform %llu), %llu triangles, "
                        "%.1f ms\n",
                        job.in.c_str(), job.out.c_str(), (unsigned long long)s.particles,
                        (unsigned long long)s.surfaceParticles, (unsigned long long)s.cubes,
                        (unsigned long long)s.cubesUniform, (unsigned long long)s.triangles, s.tTotalMs);
            std::fflush(stdout);
        }
    }

    void process(size_t k) {
        const FrameJob& job = jobs_[k];
        const ParticleData data = readFrame(job);
        if (data.positions.empty())
            throw FileFormatError(job.in + ": no particles");
        checkSurfaceWork(job.in, data.positions, settings_);
        SurfaceReconstructor& rec = reconstructors_.local();
        reconstructFrame(job, data, rec);
        writeMesh(job.out, rec.result().mesh);
        stats_[k] = rec.result().stats;
        report(job, stats_[k], data.positions.size());
    }

    const Options& o_;
    const SurfaceSettings& settings_;
    const std::vector<FrameJob>& jobs_;
    std::vector<SurfaceStats> stats_;
    std::mutex printMutex_;
    size_t done_ = 0; // frames written (under printMutex_)
    tbb::enumerable_thread_specific<SurfaceReconstructor> reconstructors_;
};

// Sums a sequence's stats over its frames (peakBytes: the largest frame).
void addStats(SurfaceStats& total, const SurfaceStats& s) {
    total.particles += s.particles;
    total.surfaceParticles += s.surfaceParticles;
    total.cubes += s.cubes;
    total.cubesUniform += s.cubesUniform;
    total.cubesNarrow += s.cubesNarrow;
    total.cubesSparse += s.cubesSparse;
    total.cubesOctree += s.cubesOctree;
    total.corners += s.corners;
    total.vertices += s.vertices;
    total.triangles += s.triangles;
    total.tDetectMs += s.tDetectMs;
    total.tOctreeMs += s.tOctreeMs;
    total.tDistanceMs += s.tDistanceMs;
    total.tAnisotropyMs += s.tAnisotropyMs;
    total.tMcMs += s.tMcMs;
    total.tSmoothMs += s.tSmoothMs;
    total.tTotalMs += s.tTotalMs;
    total.peakBytes = std::max(total.peakBytes, s.peakBytes);
    total.leafSize = s.leafSize;
}

nlohmann::json sequenceStatsJson(const std::vector<FrameJob>& jobs, const std::vector<SurfaceStats>& stats,
                                 const SurfaceSettings& settings) {
    SurfaceStats total;
    nlohmann::json frames = nlohmann::json::array();
    for (size_t k = 0; k < jobs.size(); ++k) {
        nlohmann::json f = statsJson(stats[k], settings);
        f["frame"] = jobs[k].frame;
        frames.push_back(f);
        addStats(total, stats[k]);
    }
    nlohmann::json j = statsJson(total, settings); // sums over frames (peakBytes: the largest frame)
    j["frameCount"] = jobs.size();
    j["frames"] = frames;
    return j;
}

void writeStatsJson(const std::string& path, const nlohmann::json& j) {
    std::ofstream f(path);
    if (!f)
        throw std::runtime_error(path + ": cannot open for writing");
    f << j.dump(2) << "\n";
    f.close(); // flushes: a full disk shows here, not at the destructor
    if (!f)
        throw std::runtime_error(path + ": write failed (disk full?)");
}

int run(const Args& args) {
    // `reconstruct --bench [--quick]`: the benchmark table (also reachable as `bench reconstruct`).
    if (!args.empty() && args[0] == "--bench")
        return runReconstructBench(Args(args.begin() + 1, args.end()));
    Options o;
    try {
        o = parse(args);
    } catch (const UsageError& e) {
        std::cerr << "octofluid-cli reconstruct: " << e.what() << "\n";
        return 2;
    }
    bool sequence = false;
    const std::vector<FrameJob> jobs = planJobs(o, sequence);
    checkOutputs(o, jobs);
    const SurfaceSettings settings = resolveSettings(o, jobs);
    const std::vector<SurfaceStats> stats = FrameRunner(o, settings, jobs).runAll();
    if (o.statsGiven)
        writeStatsJson(o.statsJson,
                       sequence ? sequenceStatsJson(jobs, stats, settings) : statsJson(stats[0], settings));
    return 0;
}

const CommandRegistrar registrar(
    "reconstruct",
    Command{
        "reconstruct IN.ply|IN.vtk OUT.obj|OUT.ply [--radius r] [--lambda 0.75] [--leaf L] "
        "[--method octree|uniform|narrow|sparse] [--s-enlargement f] [--set name=value ...] "
        "[--stats-json FILE] [--first N --last M]",
        "Surface mesh from particles (adaptive octree, Shao 2016). IN/OUT may be frame patterns like "
        "frame_%04d.ply; without --radius it is estimated as half the spacing of the volume per particle. "
        "The options are the parameter table's (same names and ranges as run --set): --radius = "
        "particleRadius, --lambda = lambdaMin, --leaf = leafSize, --method = surfaceMethod, "
        "--s-enlargement = surfaceSEnlargement.",
        run});

} // namespace
} // namespace octo::cli
