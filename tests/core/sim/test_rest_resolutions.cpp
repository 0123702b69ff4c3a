// Issue 9: water at rest does not erupt at any resolution. The tank's 0.35 m deep water at
// r = 12, 8.5, 6.25 and 4.5 mm (a column a whole number of spacings wide, narrower at the finer
// radii to keep the particle count small), and pools with a floating box: no blow-up flag, the
// mechanical energy after 0.5 s below the initial one, the mean level within r of where it
// started, the max speed at 0.5 s below the issue's 0.05 m/s and its median over the frames of the
// next 0.5 s too. Two defaults get it there: the velocity filter (0.8) damps the simple cubic start
// lattice's rearrangement under the hydrostatic pressure (docs/validation/lattice_stability.py) up
// to the layer under the free surface, and the walls' pressure extrapolated from the fluid (Adami
// 2012) stops the circulation that the free-surface particles beside the walls drove.
#include "scene/Scene.h"
#include "scene/SceneBodies.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

using namespace octo;

namespace {

struct RestResult {
    size_t particles = 0;
    double maxSpeed = 0.0, peakSpeed = 0.0, surfaceShift = 0.0, energyStart = 0.0, energyEnd = 0.0;
    double laterMedian = 0.0, laterMax = 0.0; // of the frames' max speed after 0.5 s (see settle)
    bool blowUp = false;
};

/// Twice the mean particle height: the level of a column of the same volume (robust against
/// single splashing particles, unlike the topmost particle).
double surfaceLevel(const FluidState& st) {
    double sum = 0.0;
    for (const Vec3f& x : st.positions)
        sum += x.y();
    return 2.0 * sum / double(st.size());
}

double fluidEnergy(Simulation& sim) {
    const FluidState& st = sim.solver().state();
    double e = 0.0;
    for (size_t i = 0; i < st.size(); ++i)
        e += 0.5 * st.velocities[i].squaredNorm() + 9.81 * st.positions[i].y();
    return e * sim.solver().mass();
}

/// Runs to 0.5 s (the issue's snapshot: maxSpeed, level, energy), then on to `seconds`: the max
/// speed at a single instant is one particle's, so the frames after 0.5 s give its median too.
RestResult settle(Simulation& sim, double seconds) {
    RestResult res;
    res.particles = sim.fluidParticleCount();
    const double level0 = surfaceLevel(sim.solver().state());
    res.energyStart = fluidEnergy(sim);
    std::vector<double> later;
    const int snapshot = 30, frames = int(std::lround(seconds * 60.0)); // 0.5 s at 60 frames/s
    for (int frame = 1; frame <= frames; ++frame) {
        sim.advanceFrame(1.0 / 60.0);
        res.peakSpeed = std::max(res.peakSpeed, sim.lastFrame().maxSpeed);
        res.blowUp = res.blowUp || sim.lastFrame().blowUp;
        if (frame == snapshot) {
            res.maxSpeed = sim.lastFrame().maxSpeed;
            res.surfaceShift = surfaceLevel(sim.solver().state()) - level0;
            res.energyEnd = fluidEnergy(sim);
        }
        if (frame >= snapshot)
            later.push_back(sim.lastFrame().maxSpeed);
    }
    std::sort(later.begin(), later.end());
    res.laterMedian = later.empty() ? 0.0 : later[later.size() / 2];
    res.laterMax = later.empty() ? 0.0 : later.back();
    return res;
}

SceneDescription column(float r, float w, float depth) {
    SceneDescription scene;
    scene.name = "rest-column";
    scene.particleRadius = r;
    scene.container = Aabb(Vec3f::Zero(), Vec3f(w, 0.6f, w));
    scene.fluidBoxes.push_back({Aabb(Vec3f::Zero(), Vec3f(w, depth, w)), Vec3f::Zero()});
    return scene;
}

} // namespace

class TestRestResolutions : public QObject {
    Q_OBJECT
private slots:
    void tankAtRest_data() {
        QTest::addColumn<float>("radius");
        QTest::addColumn<float>("width");
        QTest::newRow("r=12mm") << 0.012f << 0.6f; // the tank's 0.6 m width
        QTest::newRow("r=8.5mm") << 0.0085f << 12 * 0.017f;
        QTest::newRow("r=6.25mm") << 0.00625f << 12 * 0.0125f;
        QTest::newRow("r=4.5mm") << 0.0045f << 12 * 0.009f;
        // Half the tank's radius in a width that is no whole number of spacings (14.7): before the
        // lattice filled wall-to-wall axes, a column slumped into such a gap (0.15 m, 17.6 spacings:
        // 4.2 m/s). 0.125 m has 70 % of 0.15 m's particles; narrower columns are not at rest in
        // 1 s (0.12 m: median 0.053 m/s after 0.5 s; 0.09 m: the level settles 5.0 mm > r).
        QTest::newRow("r=4.25mm, 0.125 m") << 0.00425f << 0.125f;
    }
    void tankAtRest() {
        QFETCH(float, radius);
        QFETCH(float, width);
        Simulation sim(column(radius, width, 0.35f), {"surfaceEnabled=false"});
        const RestResult res = settle(sim, 1.0);
        qInfo("r = %.4f m, %zu particles: max speed %.4f m/s at 0.5 s (peak %.4f; 0.5-1 s: median %.4f, "
              "max %.4f), level moved %.4f m, energy %.3f -> %.3f J, blowUp %d",
              radius, res.particles, res.maxSpeed, res.peakSpeed, res.laterMedian, res.laterMax,
              res.surfaceShift, res.energyStart, res.energyEnd, int(res.blowUp));
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
        QCOMPARE(sim.escapedCount(), size_t(0));
        QVERIFY(!res.blowUp);
        QVERIFY(res.energyEnd < res.energyStart); // settling only loses energy
        // Before the fixes the 6.25 mm tank erupted (6.2 m/s, the surface 0.22 m higher), the
        // 0.15 m tank at 4.25 mm reached 4.2 m/s; with the mirrored wall pressure and no filter the
        // columns moved at 0.10-0.18 m/s at 0.5 s. Measured now: 0.037 / 0.045 / 0.031 / 0.031 /
        // 0.028 m/s at 0.5 s (12 mm ... 4.25 mm), peaks 0.19-0.30 m/s in the first frames.
        QVERIFY2(res.peakSpeed < 0.7, qPrintable(QString("peak speed %1 m/s").arg(res.peakSpeed)));
        QVERIFY2(res.maxSpeed < 0.05, qPrintable(QString("max speed %1 m/s at 0.5 s").arg(res.maxSpeed)));
        // And it stays quiet: single frames still reach 0.05-0.07 m/s (a particle where the surface
        // meets a wall, or a column of the start lattice slipping by one spacing), not the median.
        QVERIFY2(res.laterMedian < 0.05,
                 qPrintable(QString("median max speed after 0.5 s %1 m/s").arg(res.laterMedian)));
        QVERIFY2(res.laterMax < 0.1, qPrintable(QString("max speed after 0.5 s %1 m/s").arg(res.laterMax)));
        // Measured: the level settles 3.0-3.7 mm at every radius (it was 8-11 mm with Akinci's
        // one-sided wall pressure), i.e. within r down to r = 4.25 mm.
        QVERIFY2(std::abs(res.surfaceShift) < radius,
                 qPrintable(QString("level moved %1 m").arg(res.surfaceShift)));
    }

    /// A 0.2 m deep pool at r = 8 mm with a 0.12 m box of the given density centred at height y,
    /// turned by tilt degrees about the z axis.
    static SceneDescription poolWithBox(float y, float relativeDensity = 0.5f, float tilt = 0.0f) {
        SceneDescription scene = column(0.008f, 0.4f, 0.2f);
        scene.bodiesJson = R"([{"shape": "box", "size": 0.12, "relativeDensity": )" +
                           std::to_string(relativeDensity) + R"(, "position": [0.2, )" + std::to_string(y) +
                           R"(, 0.2], "orientation": {"axis": [0, 0, 1], "angle": )" + std::to_string(tilt) +
                           "}}]";
        return scene;
    }

    /// Angle (degrees) between the body's frame and the world's.
    static double tiltDegrees(const Simulation& sim, int id) {
        const Quatf q = sim.rigidBodies().body(id)->orientation();
        return 2.0 * std::acos(std::min(1.0, double(std::abs(q.w())))) * 180.0 / std::numbers::pi;
    }

    void poolWithFloatingBox() {
        // A 0.5 rho0 box set 2 mm above a 0.2 m deep pool: it sinks in and bobs.
        Simulation sim(poolWithBox(0.262f), {"surfaceEnabled=false"});
        const RestResult res = settle(sim, 0.5);
        const float y = sim.bodyStats()[0].position.y();
        const double vBody = sim.bodyStats()[0].velocity.norm();
        qInfo(
            "floating box: %zu particles, max speed %.4f m/s (peak %.4f), surface moved %.4f m, box y %.4f, "
            "box speed %.4f m/s, blowUp %d",
            res.particles, res.maxSpeed, res.peakSpeed, res.surfaceShift, y, vBody, int(res.blowUp));
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
        QVERIFY(!res.blowUp);
        QVERIFY2(res.peakSpeed < 1.5, qPrintable(QString("peak speed %1 m/s").arg(res.peakSpeed)));
        QVERIFY(y > 0.13f && y < 0.25f); // floating, not sunk nor thrown out
        QVERIFY(vBody < 0.5);
    }

    void restingPoolWithAStableFloatingBox() {
        // The issue's resting pool with a floating body. A cube floats face down only if its
        // density is below 0.21 or above 0.79 rho0 (metacentric height a/(12 s) - a (1 - s)/2 > 0
        // at draft s a); this one (0.85 rho0) starts at its draft and stays upright. Measured:
        // 0.047 m/s at 0.5 s, median 0.037 m/s over 0.5-1 s; the box settles 11 mm, the level 3.5.
        Simulation sim(poolWithBox(0.158f, 0.85f), {"surfaceEnabled=false"});
        const RestResult res = settle(sim, 1.0);
        const BodyStats b = sim.bodyStats()[0];
        const double tilt = tiltDegrees(sim, b.id);
        qInfo(
            "stable floating box: max speed %.4f m/s at 0.5 s (0.5-1 s: median %.4f, max %.4f), box y %.4f, "
            "vy %.4f m/s, tilt %.2f deg",
            res.maxSpeed, res.laterMedian, res.laterMax, b.position.y(), b.velocity.y(), tilt);
        QVERIFY(!res.blowUp);
        QVERIFY2(res.maxSpeed < 0.07, qPrintable(QString("max speed %1 m/s at 0.5 s").arg(res.maxSpeed)));
        QVERIFY2(res.laterMedian < 0.05,
                 qPrintable(QString("median max speed after 0.5 s %1 m/s").arg(res.laterMedian)));
        QVERIFY(std::abs(b.velocity.y()) < 0.03f);
        QVERIFY(std::abs(b.position.y() - 0.158f) < 0.02f);
        QVERIFY2(tilt < 5.0, qPrintable(QString("tilt %1 deg").arg(tilt)));
    }

    void halfSubmergedBoxStartsCalm() {
        // A 0.5 rho0 box placed with its centre on the pool's surface. With the fluid culled only
        // to 0.75 d0 from the body samples the first step started at a few % density error, its
        // restarts drove dt to timeStepMin and the 1/dt^2 pressure threw fluid and box out:
        // frame 1 had 711 steps, max speed 2535 m/s, blowUp (the box at 4.9 m/s). Culled to d0:
        // 0.47 m/s, 24 steps.
        // Face down, the cube is in an unstable equilibrium (below); it starts turned by kTilt so that
        // what tips it is that instability, not the fluid's noise, which a quieter solver lacks:
        // untilted, the box tipped 3.6 deg by 0.5 s with the cubic spline but only 3 deg by 1.5 s with
        // the Wendland kernel. Turned by 2 deg: 21 deg at 0.5 s (Wendland 20, 44 at 1 s). (Turned by
        // 3 deg, the first frame peaked at 2.9 m/s: the start lattice meets the tilted face unluckily.)
        constexpr float kTilt = 2.0f;
        Simulation sim(poolWithBox(0.2f, 0.5f, kTilt), {"surfaceEnabled=false"});
        double peak = 0.0;
        bool blowUp = false;
        while (sim.time() < 0.1 - 1e-9) {
            sim.advanceFrame(1.0 / 60.0);
            peak = std::max(peak, sim.lastFrame().maxSpeed);
            blowUp = blowUp || sim.lastFrame().blowUp;
        }
        const BodyStats b = sim.bodyStats()[0];
        qInfo("half-submerged box: peak fluid speed %.3f m/s in 0.1 s, box y %.4f m, vy %.3f m/s, tilt %.1f "
              "deg",
              peak, b.position.y(), b.velocity.y(), tiltDegrees(sim, b.id));
        QVERIFY(!blowUp);
        QVERIFY2(peak < 1.5, qPrintable(QString("peak speed %1 m/s").arg(peak)));
        QVERIFY(std::abs(b.velocity.y()) < 0.5f);
        QVERIFY(b.position.y() > 0.15f && b.position.y() < 0.22f);

        // Then it rolls over, as a cube of 0.5 rho0 must: face down its metacentre lies below its
        // centre of mass (a/(12 s) < a (1 - s)/2 at s = 0.5), so the tilt grows instead of decaying
        // (restingPoolWithAStableFloatingBox's 0.85 rho0 cube stays upright).
        while (sim.time() < 1.5 - 1e-9) {
            sim.advanceFrame(1.0 / 60.0);
            blowUp = blowUp || sim.lastFrame().blowUp;
            if (std::abs(sim.time() - 0.5) < 1e-3 || std::abs(sim.time() - 1.0) < 1e-3)
                qInfo("half-submerged box at %.2f s: tilt %.1f deg", sim.time(), tiltDegrees(sim, b.id));
        }
        const double tilt = tiltDegrees(sim, b.id);
        const BodyStats b15 = sim.bodyStats()[0];
        qInfo("half-submerged box at 1.5 s: tilt %.1f deg, y %.4f m, max fluid speed %.4f m/s", tilt,
              b15.position.y(), sim.lastFrame().maxSpeed);
        QVERIFY(!blowUp);
        QVERIFY2(tilt > 15.0, qPrintable(QString("tilt %1 deg").arg(tilt)));
        QVERIFY(b15.position.y() > 0.15f && b15.position.y() < 0.22f); // still floating
    }
};

QTEST_APPLESS_MAIN(TestRestResolutions)
#include "test_rest_resolutions.moc"
