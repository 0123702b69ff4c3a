// octofluid-cli reconstruct: surface meshes from particle files written by any simulator.
#include "ArgParser.h"
#include "BenchReconstruct.h"
#include "Command.h"

#include "common/Parameters.h"

#include "io/MeshWriter.h"
#include "io/ParticleIo.h"
#include "sph/NeighborGrid.h"
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
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace octo::cli {

namespace {

constexpr long long kMaxFrameNumber = 999'999'999'999;

struct Options {
    std::string in, out, statsJson;
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
        .option("--stats-json", o.statsJson)
        .option("--stats", o.statsJson)
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
    if (o.first >= 0 && o.last >= 0 && o.last < o.first)
        throw UsageError("--last is before --first");
    try {
        o.params.validate();
    } catch (const ParameterError& e) {
        throw UsageError(e.what());
    }
    return o;
}

bool isPattern(const std::string& s) {
    return std::regex_search(s, std::regex("%0?[0-9]*d"));
}

std::string formatFrame(const std::string& pattern, long frame) {
    std::vector<char> buf(pattern.size() + 32);
    std::snprintf(buf.data(), buf.size(), pattern.c_str(), frame);
    return buf.data();
}

// Frame numbers of the files matching a %d / %0Nd pattern in its directory.
std::vector<long> existingFrames(const std::string& pattern) {
    const std::filesystem::path p(pattern);
    const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
    const std::string name = p.filename().string();
    std::smatch m;
    const std::regex spec("%(0?)([0-9]*)d");
    if (!std::regex_search(name, m, spec))
        throw std::invalid_argument("the frame pattern must be in the file name");
    auto quote = [](const std::string& s) {
        std::string q;
        for (char c : s) {
            if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos)
                q += '\\';
            q += c;
        }
        return q;
    };
    const std::string digits = m[2].length() ? "([0-9]{" + m[2].str() + ",})" : "([0-9]+)";
    const std::regex re(quote(m.prefix().str()) + digits + quote(m.suffix().str()));
    std::vector<long> frames;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        std::smatch fm;
        const std::string fn = e.path().filename().string();
        if (std::regex_match(fn, fm, re))
            if (fm[1].length() <= 12) // frame numbers beyond kMaxFrameNumber are not ours
                frames.push_back(std::stol(fm[1].str()));
    }
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

// Median nearest-neighbour distance over a sample of particles.
float medianNearestDistance(const std::string& source, const std::vector<Vec3f>& x) {
    if (x.size() < 2)
        throw std::invalid_argument(source +
                                    ": cannot estimate the particle radius from fewer than 2 particles; "
                                    "pass --radius");
    Aabb box;
    for (const Vec3f& p : x)
        box.extend(p);
    const Vec3f e = box.extent();
    const float diag = std::max(e.maxCoeff(), 1e-6f);
    const float guess = diag / std::cbrt(float(x.size())); // spacing if the box were full
    NeighborGrid grid;
    const std::vector<Vec3f> xs = sortIntoGrid(grid, x, guess);
    std::vector<float> d;
    const size_t step = std::max<size_t>(1, xs.size() / 2000);
    for (size_t k = 0; k < xs.size(); k += step) {
        float best = std::numeric_limits<float>::max();
        for (float rad = grid.cellSize(); best == std::numeric_limits<float>::max() && rad <= 4.0f * diag;
             rad *= 2.0f)
            grid.forEachNeighbor(xs[k], rad, xs, [&](uint32_t j, const Vec3f&, float r2) {
                if (j != k && r2 > 0.0f)
                    best = std::min(best, std::sqrt(r2));
            });
        if (best < std::numeric_limits<float>::max())
            d.push_back(best);
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
                          {"tMcMs", s.tMcMs},
                          {"tTotalMs", s.tTotalMs},
                          {"peakBytes", s.peakBytes},
                          {"method", surfaceMethodName(settings.method)},
                          {"particleRadius", settings.particleRadius},
                          {"leafSize", s.leafSize},
                          {"lambdaMin", settings.lambdaMin}};
}

struct FrameJob {
    long frame;
    std::string in, out;
};

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
    std::vector<FrameJob> jobs;
    const bool sequence = isPattern(o.in);
    if (sequence) {
        if (!isPattern(o.out))
            throw std::invalid_argument(
                "IN is a frame pattern, so OUT must be one too (e.g. surface_%04d.obj)");
        // The files that exist, within [--first, --last]: memory follows the files, not the range.
        std::vector<long> frames = existingFrames(o.in);
        frames.erase(std::remove_if(frames.begin(), frames.end(),
                                    [&](long f) {
                                        return (o.first >= 0 && f < o.first) || (o.last >= 0 && f > o.last);
                                    }),
                     frames.end());
        if (frames.empty())
            throw std::runtime_error("no input files match " + o.in +
                                     (o.first >= 0 || o.last >= 0 ? " in the --first/--last range" : ""));
        for (long f : frames)
            jobs.push_back({f, formatFrame(o.in, f), formatFrame(o.out, f)});
    } else {
        jobs.push_back({0, o.in, o.out});
    }
    // Fail early on a bad output extension, and never write a mesh over an input file.
    {
        const std::string ext = std::filesystem::path(jobs[0].out).extension().string();
        if (ext != ".obj" && ext != ".ply" && ext != ".OBJ" && ext != ".PLY")
            throw std::invalid_argument(jobs[0].out + ": unknown mesh format (use .obj or .ply)");
        std::set<std::filesystem::path> inputs;
        for (const FrameJob& job : jobs)
            inputs.insert(std::filesystem::weakly_canonical(job.in));
        for (const FrameJob& job : jobs)
            if (inputs.count(std::filesystem::weakly_canonical(job.out)))
                throw std::invalid_argument(job.out +
                                            ": is an input file; refusing to overwrite it with a mesh");
    }

    // The radius: given, or estimated once from the first frame (and then held to the table's range).
    if (!o.radiusGiven) {
        const ParticleData first = readParticles(jobs[0].in);
        const float r = estimateParticleRadius(jobs[0].in, first.positions);
        std::cerr << "reconstruct: estimated particle radius r = " << r
                  << " m (half the spacing of the volume per particle); pass --radius to override\n";
        try {
            o.params.set("particleRadius", r);
        } catch (const ParameterError& e) {
            throw std::invalid_argument(std::string("estimated ") + e.what() + "; pass --radius");
        }
    }
    SurfaceSettings settings = surfaceSettingsFromParameters(o.params);
    settings.storeLeaves = false;
    settings.computeNormals = o.normals;
    settings.validate();
    if (const std::string w = settings.warning(); !w.empty())
        std::cerr << "reconstruct: warning: " << w << "\n";

    std::vector<SurfaceStats> stats(jobs.size());
    std::mutex printMutex;
    size_t done = 0; // frames written (under printMutex)
    tbb::enumerable_thread_specific<SurfaceReconstructor> reconstructors;
    auto process = [&](size_t k) {
        const FrameJob& job = jobs[k];
        const ParticleData data = readParticles(job.in);
        if (data.positions.empty())
            throw FileFormatError(job.in + ": no particles");
        SurfaceReconstructor& rec = reconstructors.local();
        const auto it = data.scalars.find("density");
        std::span<const float> rho;
        if (it != data.scalars.end() && it->second.size() == data.positions.size())
            rho = it->second;
        // Isolated: while this thread waits inside the reconstruction's own parallel loops it must
        // not pick up another frame, which would reuse this thread's reconstructor.
        try {
            tbb::this_task_arena::isolate([&] { rec.reconstruct(data.positions, rho, settings); });
        } catch (const std::exception& e) {
            throw std::runtime_error(job.in + ": " + e.what()); // name the frame
        }
        writeMesh(job.out, rec.result().mesh);
        stats[k] = rec.result().stats;
        if (!o.quiet) {
            std::lock_guard lock(printMutex);
            const SurfaceStats& s = stats[k];
            if (jobs.size() > 1) // progress through a sequence (frames finish in any order)
                std::printf("[%zu/%zu] ", ++done, jobs.size());
            std::printf("%s -> %s: %llu particles, %llu surface, %llu cubes (uniform %llu), %llu triangles, "
                        "%.1f ms\n",
                        job.in.c_str(), job.out.c_str(), (unsigned long long)s.particles,
                        (unsigned long long)s.surfaceParticles, (unsigned long long)s.cubes,
                        (unsigned long long)s.cubesUniform, (unsigned long long)s.triangles, s.tTotalMs);
            std::fflush(stdout);
        }
    };
    // Many frames: one frame per task (each reconstruction is parallel inside as well).
    if (jobs.size() >= 4)
        tbb::parallel_for(tbb::blocked_range<size_t>(0, jobs.size(), 1),
                          [&](const tbb::blocked_range<size_t>& r) {
                              for (size_t k = r.begin(); k < r.end(); ++k)
                                  process(k);
                          });
    else
        for (size_t k = 0; k < jobs.size(); ++k)
            process(k);

    if (!o.statsJson.empty()) {
        nlohmann::json j;
        if (!sequence) {
            j = statsJson(stats[0], settings);
        } else {
            SurfaceStats total;
            nlohmann::json frames = nlohmann::json::array();
            for (size_t k = 0; k < jobs.size(); ++k) {
                const SurfaceStats& s = stats[k];
                nlohmann::json f = statsJson(s, settings);
                f["frame"] = jobs[k].frame;
                frames.push_back(f);
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
                total.tMcMs += s.tMcMs;
                total.tTotalMs += s.tTotalMs;
                total.peakBytes = std::max(total.peakBytes, s.peakBytes);
                total.leafSize = s.leafSize;
            }
            j = statsJson(total, settings); // sums over frames (peakBytes: the largest frame)
            j["frameCount"] = jobs.size();
            j["frames"] = frames;
        }
        std::ofstream f(o.statsJson);
        if (!f)
            throw std::runtime_error(o.statsJson + ": cannot open for writing");
        f << j.dump(2) << "\n";
        f.close(); // flushes: a full disk shows here, not at the destructor
        if (!f)
            throw std::runtime_error(o.statsJson + ": write failed (disk full?)");
    }
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
