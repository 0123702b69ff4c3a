// SPHERIC Test 2 (Issa & Violeau 2006): the dam break with a box of Kleefsman et al. 2005
// (J. Comput. Phys. 206:363), scene share/octofluid/validation/spheric-test2.json, against the
// experiment's wire gauges H1-H4 (tests/data/validation/kleefsman_heights_0p01s.csv), read by the
// fill-fraction gauge of core/sim/HeightGauge.h. Coarse: r = 25 mm (5 500 fluid particles), the
// first 1.5 s (the surge, the impact on the box, the wave reflected towards the reservoir), sampled
// at 100 Hz; ~5 CPU s.
//
// Measured (2026-12-05, binary of 733d727, two runs byte-identical): fronts reach one particle layer
// (2r) at H3 at 0.27 s (experiment 0.26), at H2 at 0.43 s (0.41): mean front speeds from the gate
// 0.96 and 0.95 of the experiment's. Pooled RMS over 0-1.5 s 0.0433 m; the prediction that nothing
// moves scores 0.166 m. The same scene at the reference resolution: docs/VALIDATION.md.
//
// Bounds, from what they must tell apart, not from the pass: (1) each front's mean speed from the gate
// to H3 (0.5 m) and H2 (1.0 m) within 20 % of the experiment's: the discretisation alone accounts for
// 14 % at H3 (the 0.01 s sampling is 4 % of 0.26 s; the lattice places the front to one spacing, 10 %
// of 0.5 m), and a front run by a different physics misses it (Ritter's inviscid dam-break front,
// 2 sqrt(g H) = 4.6 m/s, arrives at H3 at 0.11 s: speed ratio 2.4). (2) Pooled RMS below a third of the
// nothing-moves prediction's (0.055 m): the simulated gauges must account for two thirds of the change the
// experiment saw. Variants measured at this resolution (RMS; front speed ratios at H3, H2): wall
// friction 0 0.025 m (1.00, 0.98); DFSPH 0.046 m (0.96, 0.95); wall friction 1 0.088 m (0.87, 0.82):
// its fronts pass (1), its RMS fails (2).
#include "common/DataDirectory.h"
#include "scene/Scene.h"
#include "sim/HeightGauge.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <QDir>
#include <QtTest>
#include <cmath>
#include <fstream>

using namespace octo;

namespace {

/// A square slab of `layers` lattice layers (spacing 2r) on the floor y = 0, centred on x = z = 0.
std::vector<Vec3f> latticeSlab(float r, int layers, float y0 = 0.0f) {
    std::vector<Vec3f> p;
    for (int l = 0; l < layers; ++l)
        for (int i = -6; i <= 6; ++i)
            for (int k = -6; k <= 6; ++k)
                p.emplace_back(2.0f * r * float(i), y0 + r + 2.0f * r * float(l), 2.0f * r * float(k));
    return p;
}

/// RMS over the experiment's samples at the simulation's times up to tEnd of the prediction that
/// the water never leaves the reservoir (each gauge keeps its reading at t = 0).
double nothingMovesRms(const GaugeSeries& experiment, const std::vector<double>& times, double tEnd) {
    double sq = 0.0;
    size_t n = 0;
    for (size_t g = 0; g < experiment.names.size(); ++g)
        for (double t : times)
            if (t <= tEnd) {
                const double d = experiment.at(g, t) - experiment.at(g, 0.0);
                sq += d * d;
                ++n;
            }
    return std::sqrt(sq / double(n));
}

} // namespace

class TestSphericTest2 : public QObject {
    Q_OBJECT
private slots:
    // The gauge readings on a resting slab of 5 layers (surface 10r above the floor), with a lone
    // droplet and then a detached sheet above it.
    void gaugesReadASlab() {
        const float r = 0.01f, surface = 10.0f * r;
        std::vector<Vec3f> p = latticeSlab(r, 5);
        auto read = [&](GaugeMethod m) { return gaugeHeight(p, r, 0.0f, 0.0f, m); };
        QVERIFY2(std::abs(read(GaugeMethod::Fill) - surface) < 0.25f * r,
                 qPrintable(QString("fill %1").arg(read(GaugeMethod::Fill))));
        QVERIFY(std::abs(read(GaugeMethod::TopParticle) - surface) < 1e-5f);
        QVERIFY2(std::abs(read(GaugeMethod::WettedLength) - surface) < 0.5f * r,
                 qPrintable(QString("wetted %1").arg(read(GaugeMethod::WettedLength))));
        QCOMPARE(gaugeHeight(p, r, 1.0f, 1.0f, GaugeMethod::Fill), 0.0f); // no water there

        // A droplet 0.3 m up: spray, not water at the gauge (its fill fraction peaks at 1/pi).
        p.emplace_back(0.0f, 0.3f, 0.0f);
        QVERIFY(std::abs(read(GaugeMethod::Fill) - surface) < 0.25f * r);
        QVERIFY(std::abs(read(GaugeMethod::TopParticle) - (0.3f + r)) < 1e-5f);

        // A sheet of two layers (4r thick) crossing 0.3-0.34 m up: the fill gauge reads its top,
        // the wetted length adds its thickness.
        p.pop_back();
        const std::vector<Vec3f> sheet = latticeSlab(r, 2, 0.3f);
        p.insert(p.end(), sheet.begin(), sheet.end());
        QVERIFY2(std::abs(read(GaugeMethod::Fill) - (0.3f + 4.0f * r)) < 0.25f * r,
                 qPrintable(QString("fill %1").arg(read(GaugeMethod::Fill))));
        QVERIFY2(std::abs(read(GaugeMethod::WettedLength) - (surface + 4.0f * r)) < r,
                 qPrintable(QString("wetted %1").arg(read(GaugeMethod::WettedLength))));
    }

    void gaugesFollowTheExperiment() {
        const std::string data = std::string(OCTO_TEST_DATA_DIR) + "/validation/";
        const std::vector<GaugeLocation> gauges = readHeightGauges(data + "kleefsman_probes.csv");
        const GaugeSeries experiment = readGaugeCsv(data + "kleefsman_heights_0p01s.csv");
        const std::string path = dataDirectory() + "/validation/spheric-test2.json"; // staged by CMake
        QVERIFY2(QFile::exists(QString::fromStdString(path)), path.c_str());
        SceneDescription scene = loadSceneFile(path);
        const float r = 0.025f;
        scene.particleRadius = r;
        const float gate = scene.fluidBoxes.at(0).box.max.x();
        Simulation sim(scene, {"surfaceEnabled=false"});

        const double tEnd = 1.5, frame = 0.01;
        GaugeSeries simulated;
        for (const GaugeLocation& g : gauges)
            simulated.names.push_back(g.name);
        simulated.heights.resize(gauges.size());
        auto sample = [&] {
            simulated.times.push_back(sim.time());
            for (size_t g = 0; g < gauges.size(); ++g)
                simulated.heights[g].push_back(gaugeHeight(sim.solver().state().positions, r, gauges[g].x,
                                                           gauges[g].z, GaugeMethod::Fill));
        };
        sample();
        while (sim.time() < tEnd - 1e-9) {
            sim.advanceFrame(frame);
            sample();
        }
        QCOMPARE(sim.nonFiniteCount(), size_t(0));

        // Fronts: mean speed from the gate to the gauges in open water ahead of the box, arrival
        // at one particle layer (2r, the smallest depth this resolution resolves).
        for (const char* name : {"H3", "H2"}) {
            const size_t s = simulated.gaugeIndex(name), e = experiment.gaugeIndex(name);
            const double tSim = simulated.firstTimeAtOrAbove(s, 2.0 * r);
            const double tExp = experiment.firstTimeAtOrAbove(e, 2.0 * r);
            QVERIFY2(tSim > 0.0, qPrintable(QString("%1: the front never arrives").arg(name)));
            const double speedRatio = tExp / tSim; // (distance / tSim) / (distance / tExp)
            qInfo("%s (%.3f m from the gate): depth 2r at %.2f s, experiment %.2f s, front speed ratio %.3f",
                  name, gauges[s].x - gate, tSim, tExp, speedRatio);
            QVERIFY2(speedRatio > 0.8 && speedRatio < 1.2,
                     qPrintable(QString("%1: front speed %2 of the experiment's").arg(name).arg(speedRatio)));
        }

        const GaugeComparison c = compareGauges(simulated, experiment, 0.0, tEnd);
        const double still = nothingMovesRms(experiment, simulated.times, tEnd);
        std::ofstream out(outputDir() + "/spheric_test2_gauges.csv");
        out << "# pooled RMS " << c.pooledRms << " m, nothing-moves " << still << " m, "
            << sim.fluidParticleCount() << " particles\nt_s";
        for (const auto& n : simulated.names)
            out << "," << n << "_sim_m," << n << "_exp_m";
        out << "\n";
        for (size_t i = 0; i < simulated.times.size(); ++i) {
            out << simulated.times[i];
            for (size_t g = 0; g < gauges.size(); ++g)
                out << "," << simulated.heights[g][i] << ","
                    << experiment.at(experiment.gaugeIndex(gauges[g].name), simulated.times[i]);
            out << "\n";
        }
        for (const GaugeError& e : c.gauges)
            qInfo("%s: RMS %.4f m, bias %+.4f m over %zu samples", e.name.c_str(), e.rms, e.bias, e.samples);
        qInfo("pooled RMS %.4f m over 0-%.1f s (nothing moves: %.4f m), %zu fluid particles", c.pooledRms,
              tEnd, still, sim.fluidParticleCount());
        QVERIFY2(
            c.pooledRms < still / 3.0,
            qPrintable(
                QString("pooled RMS %1 m, a third of nothing-moves %2 m").arg(c.pooledRms).arg(still / 3.0)));
    }

private:
    static std::string outputDir() {
        const std::string dir = qEnvironmentVariableIsSet("OCTO_TEST_OUTPUT_DIR")
                                    ? qEnvironmentVariable("OCTO_TEST_OUTPUT_DIR").toStdString()
                                    : std::string(OCTO_TEST_OUTPUT_DIR);
        QDir().mkpath(QString::fromStdString(dir));
        return dir;
    }
};

QTEST_APPLESS_MAIN(TestSphericTest2)
#include "test_spheric_test2.moc"
