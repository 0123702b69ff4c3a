// Two-way coupling (Akinci 2012, with the fluid's pressure mirrored into the boundary) must give
// Archimedes' buoyancy without any density fudge. A box held fully submerged feels rho0 g V
// (within 5 %). Three boxes of 0.5, 1.0 and 2.0 rho0 in one tank at rest: the light box floats
// at Archimedes' draft (half its volume submerged) within 5 %, the heavy box sinks and rests on the
// floor, the neutral box (released fully submerged) stays under water and comes to rest. After settling no
// fluid particle has passed a body's sample shell (none deeper than r inside a mesh).
#include "rigid/RigidBodySystem.h"
#include "scene/Scene.h"
#include "sim/Simulation.h"
#include "sph/FluidState.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace octo;

namespace {
constexpr float kR = 0.0125f;  // particle radius (m): d0 = 2.5 cm, the boxes are 6 d0 wide
constexpr float kEdge = 0.15f; // box edge (m)
constexpr float kDepth = 0.25f;

const char* kScene = R"({
  "name": "buoyancy-test", "particleRadius": 0.0125,
  "container": {"min": [0, 0, 0], "max": [0.9, 0.5, 0.3]},
  "fluidBoxes": [{"min": [0, 0, 0], "max": [0.9, 0.25, 0.3]}],
  "endTime": 4.0,
  "bodies": [
    {"name": "light", "shape": "box", "size": 0.15, "relativeDensity": 0.5, "position": [0.15, 0.33, 0.15]},
    {"name": "neutral", "shape": "box", "size": 0.15, "relativeDensity": 1.0, "position": [0.45, 0.125, 0.15]},
    {"name": "heavy", "shape": "box", "size": 0.15, "relativeDensity": 2.0, "position": [0.75, 0.33, 0.15]}
  ]
})";

struct Track {
    std::vector<float> t, y, vy;
    std::vector<double> submerged; // BodyStats::submergedFraction per frame
};

/// The mean upward fluid force on a held box of rho0 over the second second, over rho0 g V.
double heldBoxBuoyancy(const std::vector<std::string>& settings) {
    const SceneDescription scene = parseSceneJson(R"({
      "name": "archimedes-test", "particleRadius": 0.0125,
      "container": {"min": [0, 0, 0], "max": [0.45, 0.5, 0.3]},
      "fluidBoxes": [{"min": [0, 0, 0], "max": [0.45, 0.25, 0.3]}],
      "bodies": [{"name": "held", "shape": "box", "size": 0.15, "relativeDensity": 1.0,
                  "position": [0.225, 0.125, 0.15], "kinematic": {"velocity": [0, 0, 0]}}]
    })",
                                                  "archimedes-test.json");
    Simulation sim(scene, settings);
    const double archimedes = 1000.0 * 9.81 * double(kEdge * kEdge * kEdge);
    double impulse = 0.0, span = 0.0;
    while (sim.time() < 2.0 - 1e-6) {
        const double t0 = sim.time();
        sim.advanceFrame(0.05);
        if (t0 >= 1.0 - 1e-6) {
            impulse += double(sim.bodyStats().front().fluidForce.y()) * (sim.time() - t0);
            span += sim.time() - t0;
        }
    }
    const double ratio = impulse / span / archimedes;
    qInfo("held box: mean fluid force %.2f N over the last second, rho0 g V = %.2f N (ratio %.3f)",
          impulse / span, archimedes, ratio);
    return ratio;
}

} // namespace

class TestBuoyancy : public QObject {
    Q_OBJECT
    std::unique_ptr<Simulation> sim_;
    std::map<std::string, Track> track_;
    size_t fluidInside_ = 0;
    float maxDepth_ = 0.0f;
    std::map<std::string, double> submerged_;

private slots:
    void initTestCase() {
        const SceneDescription scene = parseSceneJson(kScene, "buoyancy-test.json");
        sim_ = std::make_unique<Simulation>(scene, std::vector<std::string>{"surfaceEnabled=false"});
        QCOMPARE(int(sim_->bodies().size()), 3);
        QElapsedTimer timer;
        timer.start();
        while (sim_->time() < 4.0 - 1e-6) {
            sim_->advanceFrame(0.05);
            for (const BodySnapshot& b : sim_->bodies()) {
                Track& tr = track_[b.name];
                tr.t.push_back(float(sim_->time()));
                tr.y.push_back(b.translation.y());
                tr.vy.push_back(b.velocity.y());
            }
            for (const BodyStats& s : sim_->bodyStats())
                track_[s.name].submerged.push_back(s.submergedFraction);
        }
        const FluidState& fluid = sim_->solver().state();
        for (const auto& b : sim_->rigidBodies().bodies())
            for (const Vec3f& x : fluid.positions)
                if (b->containsWorldPoint(x)) {
                    // Depth below the box surface (body space).
                    const Vec3f q = b->toBody(x).cwiseAbs();
                    const float depth = (Vec3f::Constant(0.5f * kEdge) - q).minCoeff();
                    ++fluidInside_;
                    maxDepth_ = std::max(maxDepth_, depth);
                    qInfo("  fluid particle inside '%s' at depth %.4f m (body-space %.3f %.3f %.3f)",
                          b->name().c_str(), depth, q.x(), q.y(), q.z());
                }
        for (const BodyStats& s : sim_->bodyStats())
            submerged_[s.name] = s.submergedFraction;
        qInfo("4 s simulated in %.1f s wall, %zu fluid particles, %zu boundary samples on bodies",
              timer.elapsed() / 1000.0, sim_->fluidParticleCount(), sim_->bodySampleCount());
        for (const BodyStats& s : sim_->bodyStats())
            qInfo("  %-8s y = %.4f m  vy = %+.4f m/s  local level %.4f m  submerged %.1f %%", s.name.c_str(),
                  s.position.y(), s.velocity.y(), s.fluidLevel, 100.0 * s.submergedFraction);
        QCOMPARE(sim_->nonFiniteCount(), size_t(0));
    }

    void lightBoxFloatsAtArchimedesDraft() {
        // Archimedes: a 0.5 rho0 box floats with half its volume below the free surface, within
        // 5 % (issue 26), over the last second (the tank still sloshes by a few mm at 4 s). The
        // surface is the level the fluid's volume fills: in this closed tank, exactly
        // (N d0^3 + the volume of the two submerged boxes + e^2 (L - y_bottom)) / area = L. The free
        // surface's particles pack closer than d0, so the top particle + r lies ~0.7 r below it:
        // against that the box read 42.5 % (-15 %). The local level around the box
        // (RigidCoupling::localFluidLevel, a thin annulus here between the wall and the neutral
        // box) is reported too.
        const Track& light = track_["light"];
        const double d0 = 2.0 * kR, e = kEdge, area = 0.9 * 0.3;
        const double y = std::accumulate(light.y.end() - 20, light.y.end(), 0.0) / 20.0;
        const double bottom = y - 0.5 * e;
        const double fluid = double(sim_->fluidParticleCount()) * d0 * d0 * d0;
        const double level = (fluid + 2.0 * e * e * e - e * e * bottom) / (area - e * e);
        const double f = (level - bottom) / e;
        const double local = std::accumulate(light.submerged.end() - 20, light.submerged.end(), 0.0) / 20.0;
        qInfo("light box %.1f %% submerged below the tank's level %.4f m (Archimedes 50 %%): %+.1f %%; "
              "below the local level %.1f %%",
              100.0 * f, level, 100.0 * (f / 0.5 - 1.0), 100.0 * local);
        QVERIFY2(std::abs(f / 0.5 - 1.0) <= 0.05, qPrintable(QString("submerged fraction %1").arg(f)));
        const Track& tr = track_["light"];
        // At rest: the last second moves less than 1 cm and the speed is small.
        const size_t n = tr.y.size();
        float lo = 1e9f, hi = -1e9f;
        for (size_t i = n - 20; i < n; ++i) {
            lo = std::min(lo, tr.y[i]);
            hi = std::max(hi, tr.y[i]);
        }
        // At rest up to a small bob (the tank sloshes for seconds): within 1 cm over the last second.
        QVERIFY2(hi - lo < 0.01f, qPrintable(QString("still bobbing by %1 m").arg(hi - lo)));
    }

    void heavyBoxSinksToTheFloor() {
        const Track& tr = track_["heavy"];
        const float bottom = tr.y.back() - 0.5f * kEdge;
        QVERIFY2(bottom < 2.0f * kR && bottom > -kR, qPrintable(QString("bottom at %1 m").arg(bottom)));
        // Resting: the last second stays within 1 cm (it may jitter on the fluid film below it).
        const size_t n = tr.y.size();
        float lo = 1e9f, hi = -1e9f;
        for (size_t i = n - 20; i < n; ++i) {
            lo = std::min(lo, tr.y[i]);
            hi = std::max(hi, tr.y[i]);
        }
        QVERIFY2(hi - lo < 0.01f, qPrintable(QString("moving by %1 m").arg(hi - lo)));
        QVERIFY(submerged_["heavy"] > 0.99);
    }

    void submergedBoxFeelsArchimedes() {
        // The same pool with one box of rho0 held in place (a kinematic body at rest) in the
        // middle of the water: the mean upward force of the fluid over the last second equals
        // the weight of the displaced water. A neutral box is the most sensitive case of all, so
        // the force is measured directly: Akinci's one-sided p_i/rho_i^2 gave 78 % of rho0 g V
        // here (the neutral box sank onto the floor), the mirrored pressure 103 %.
        const double ratio = heldBoxBuoyancy({"surfaceEnabled=false"});
        QVERIFY2(std::abs(ratio - 1.0) < 0.05, qPrintable(QString("buoyancy %1 x rho0 g V").arg(ratio)));
    }

    void submergedBoxFeelsArchimedesWithDfsph() {
        // The same with DFSPH whatever the table's default solver: its mirrored walls (the default)
        // gave 1.019; Akinci's p_i alone (dfsphMirrorWalls=0) 0.85.
        const double ratio = heldBoxBuoyancy({"surfaceEnabled=false", "pressureSolver=dfsph"});
        QVERIFY2(std::abs(ratio - 1.0) < 0.05, qPrintable(QString("buoyancy %1 x rho0 g V").arg(ratio)));
    }

    void neutralBoxComesToRestSubmerged() {
        // A free neutral box is marginal by nature: the few % of excess buoyancy measured above
        // lift it towards the surface (~6 cm, it ends with its top at the surface), where it must
        // stay under water (>= 95 % submerged, unlike the light box) and come to rest.
        const Track& tr = track_["neutral"];
        const size_t n = tr.y.size();
        // Net vertical speed over the last 2 s (sloshing makes it bob by a few mm; a body that
        // floats up or sinks moves steadily, ~0.1 m in a second).
        const float netSpeed = (tr.y[n - 1] - tr.y[n - 41]) / (tr.t[n - 1] - tr.t[n - 41]);
        qInfo("neutral box: y %.4f m (released at 0.125), net vy over the last 2 s %+.4f m/s, submerged %.1f "
              "%%",
              tr.y.back(), netSpeed, 100.0 * submerged_["neutral"]);
        QVERIFY2(submerged_["neutral"] > 0.95,
                 qPrintable(QString("submerged %1").arg(submerged_["neutral"])));
        QVERIFY2(std::abs(netSpeed) < 0.01f, qPrintable(QString("net speed %1 m/s").arg(netSpeed)));
    }

    void noFluidInsideBodies() {
        // The boundary samples lie r (and r + d0) inside the mesh; fluid centres rest d0 = 2r
        // from them, i.e. r outside the mesh. A particle that slipped through the sample shell
        // sits deep inside (a single shell let some through: 17-35 mm deep). Particles without
        // pressure (a splash, the film on the neutral box's top face at the free surface) are
        // held only by their density and graze the faces: up to 5 mm (11 particles) on the top
        // face, once 3.2 mm at a vertical edge of the light box above its waterline. Penetration
        // = past the outer sample shell, deeper than r inside the mesh.
        qInfo("%zu fluid particles inside a body mesh, deepest %.4f m (tolerance r = %.4f m)", fluidInside_,
              maxDepth_, kR);
        QVERIFY2(maxDepth_ < kR,
                 qPrintable(QString("a fluid particle is %1 m inside a body").arg(maxDepth_)));
    }

    void localLevelsAgree() {
        // The tank's surface is flat at rest: the local levels measured around the three bodies
        // (used for the submerged fraction) agree within one particle radius.
        float lo = 1e9f, hi = -1e9f;
        for (const BodyStats& s : sim_->bodyStats()) {
            lo = std::min(lo, s.fluidLevel);
            hi = std::max(hi, s.fluidLevel);
        }
        QVERIFY2(hi - lo < kR, qPrintable(QString("levels differ by %1 m").arg(hi - lo)));
        QVERIFY(lo > kDepth && hi < kDepth + 0.03f);
    }
};

QTEST_APPLESS_MAIN(TestBuoyancy)
#include "test_buoyancy.moc"
