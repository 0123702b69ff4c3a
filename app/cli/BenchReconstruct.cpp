// The `reconstruct` table of `octofluid-cli bench`: four methods on the same particles
// (resting block and a dam-break-like frame at about 50 k, 200 k and 1 M particles).
#include "BenchReconstruct.h"
#include "ArgParser.h"
#include "common/Parameters.h"

#include "surface/ParticleShapes.h"
#include "surface/SurfaceReconstructor.h"

#include <nlohmann/json.hpp>
#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>

namespace octo::cli {

namespace {
constexpr float kR = 0.01f, kD0 = 0.02f;

std::vector<Vec3f> restingBlock(size_t n) {
    const int side = int(std::lround(std::cbrt(double(n))));
    return latticeBlock(Vec3f::Zero(), side, side, side, kD0);
}

struct BenchOptions {
    bool quick = false;
    int runs = 3, threads = 0;
    std::string jsonPath;
    std::vector<std::string> methods = findParameter("surfaceMethod")->choices; // all of them
    std::vector<size_t> sizesArg;
    int sceneFirst = 0, sceneLast = 1;
};

BenchOptions parseBenchOptions(const Args& args) {
    BenchOptions o;
    std::vector<std::string> tables; // the bench command may pass its table name through
    ArgParser()
        .flag("--quick", o.quick)
        .option("--runs", [&](const std::string& v) { o.runs = int(parseWhole("--runs", v, 1, 1000)); })
        .option("--threads",
                [&](const std::string& v) { o.threads = int(parseWhole("--threads", v, 1, 1024)); })
        .option("--json", o.jsonPath)
        .option("--method",
                [&](const std::string& v) { o.methods = {surfaceMethodName(parseSurfaceMethod(v))}; })
        .option("--size",
                [&](const std::string& v) {
                    o.sizesArg.push_back(size_t(parseWhole("--size", v, 1, 100000000)));
                })
        .option("--scene",
                [&](const std::string& v) {
                    if (v != "block" && v != "dambreak")
                        throw UsageError("bench reconstruct: --scene is block or dambreak, not " + v);
                    o.sceneFirst = o.sceneLast = v == "block" ? 0 : 1;
                })
        .positionals(tables)
        .parse(args);
    for (const std::string& t : tables)
        if (t != "reconstruct")
            throw UsageError("bench reconstruct: unexpected argument '" + t + "'");
    return o;
}

void printBenchHeader(int usedThreads, int runs) {
    std::printf(
        "Surface reconstruction: r = %.3f m, spacing %.3f m, L = 2r/sqrt(3), R = 4r, %d thread(s), median of "
        "%d run(s)\n"
        "(octree and narrow include the surface-particle detection; uniform and sparse do not use it and "
        "skip it;\n"
        " CPU ms = process CPU time over all threads; 'cells' = octree build / cell marking + corner sets)\n",
        kR, kD0, usedThreads, runs);
    std::printf("| scene | particles | method | total ms | CPU ms | detect | cells | phi | MC | #Cube | "
                "corners | triangles | peak MiB | Mparticles/s | M/CPU-s |\n");
    std::printf("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

SurfaceSettings benchSettings(const std::string& mname) {
    SurfaceSettings s;
    s.particleRadius = kR;
    s.method = parseSurfaceMethod(mname);
    s.storeLeaves = false;
    s.countBaselines = false; // time the method alone
    // The whole-volume and sparse grids do not use surface particles (Solenthaler 2007,
    // splashsurf): they are timed without the detection, the octree and narrow band with it.
    s.detectSurface = s.method == SurfaceMethod::Octree || s.method == SurfaceMethod::Narrow;
    return s;
}

// One method on one particle set: median of `runs` timed runs after a warm-up, printed as a
// table row and appended to `rows`.
void benchMethod(int scene, const std::vector<Vec3f>& pts, const std::string& mname, int runs,
                 int usedThreads, nlohmann::json& rows) {
    const SurfaceSettings s = benchSettings(mname);
    SurfaceReconstructor rec;
    std::vector<SurfaceStats> st;
    std::vector<double> cpu;
    try {
        for (int k = 0; k < runs + 1; ++k) { // first run warms the workspace up
            const std::clock_t c0 = std::clock();
            rec.reconstruct(pts, {}, s);
            const double cpuMs = 1e3 * double(std::clock() - c0) / CLOCKS_PER_SEC;
            if (k > 0) {
                st.push_back(rec.result().stats);
                cpu.push_back(cpuMs);
            }
        }
    } catch (const std::length_error& e) {
        std::printf("| %s | %zu | %s | skipped: %s |\n", scene == 0 ? "block" : "dam break", pts.size(),
                    mname.c_str(), e.what());
        return;
    }
    std::sort(st.begin(), st.end(),
              [](const SurfaceStats& a, const SurfaceStats& b) { return a.tTotalMs < b.tTotalMs; });
    std::sort(cpu.begin(), cpu.end());
    const SurfaceStats& m = st[st.size() / 2];
    const double cpuMs = cpu[cpu.size() / 2];
    const double mps = double(m.particles) / (m.tTotalMs * 1e-3) * 1e-6;
    const double mpcpu = double(m.particles) / (cpuMs * 1e-3) * 1e-6; // per CPU-second
    std::printf("| %s | %llu | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %llu | %llu | %llu "
                "| %.1f | %.2f | %.2f |\n",
                scene == 0 ? "block" : "dam break", (unsigned long long)m.particles, mname.c_str(),
                m.tTotalMs, cpuMs, m.tDetectMs, m.tOctreeMs, m.tDistanceMs, m.tMcMs,
                (unsigned long long)m.cubes, (unsigned long long)m.corners, (unsigned long long)m.triangles,
                double(m.peakBytes) / (1 << 20), mps, mpcpu);
    std::fflush(stdout);
    rows.push_back({{"scene", scene == 0 ? "block" : "dambreak"},
                    {"method", mname},
                    {"particles", m.particles},
                    {"surfaceParticles", m.surfaceParticles},
                    {"tTotalMs", m.tTotalMs},
                    {"cpuMs", cpuMs},
                    {"detection", s.detectSurface},
                    {"tDetectMs", m.tDetectMs},
                    {"tOctreeMs", m.tOctreeMs},
                    {"tDistanceMs", m.tDistanceMs},
                    {"tMcMs", m.tMcMs},
                    {"cubes", m.cubes},
                    {"corners", m.corners},
                    {"triangles", m.triangles},
                    {"peakBytes", m.peakBytes},
                    {"threads", usedThreads}});
}

// Ratios against the octree on the same particles (time: process CPU time, robust on a busy machine).
void printRatios(const nlohmann::json& rows) {
    std::printf("\nratios (method / octree): #Cube and CPU time\n");
    for (const auto& o : rows) {
        if (o["method"] != "octree")
            continue;
        std::printf("  %s %llu:", o["scene"].get<std::string>().c_str(),
                    (unsigned long long)o["particles"].get<uint64_t>());
        for (const auto& r : rows)
            if (r["method"] != "octree" && r["scene"] == o["scene"] && r["particles"] == o["particles"])
                std::printf("  %s #Cube x%.2f CPU x%.2f", r["method"].get<std::string>().c_str(),
                            double(r["cubes"].get<uint64_t>()) /
                                double(std::max<uint64_t>(1, o["cubes"].get<uint64_t>())),
                            r["cpuMs"].get<double>() / std::max(1e-9, o["cpuMs"].get<double>()));
        std::printf("\n");
    }
}
} // namespace

int runReconstructBench(const Args& args) {
    const BenchOptions o = parseBenchOptions(args);
    std::unique_ptr<tbb::global_control> limit;
    if (o.threads > 0)
        limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      size_t(o.threads));
    const int usedThreads = o.threads > 0 ? o.threads : tbb::info::default_concurrency();
    const std::vector<size_t> sizes = !o.sizesArg.empty() ? o.sizesArg
                                      : o.quick           ? std::vector<size_t>{20000, 50000}
                                                          : std::vector<size_t>{50000, 200000, 1000000};

    printBenchHeader(usedThreads, o.runs);
    nlohmann::json rows = nlohmann::json::array();
    for (int scene = o.sceneFirst; scene <= o.sceneLast; ++scene)
        for (size_t n : sizes) {
            const std::vector<Vec3f> pts = scene == 0 ? restingBlock(n) : damBreakFrame(n, kD0);
            for (const std::string& mname : o.methods)
                benchMethod(scene, pts, mname, o.runs, usedThreads, rows);
        }
    printRatios(rows);
    if (!o.jsonPath.empty()) {
        std::ofstream f(o.jsonPath);
        if (!f)
            throw std::runtime_error(o.jsonPath + ": cannot open for writing");
        f << rows.dump(2) << "\n";
    }
    return 0;
}

} // namespace octo::cli
