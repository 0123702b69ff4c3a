// PCISPH's handling of a compression a step starts with (DensityProjection_Macklin2013): a block
// squeezed before a step makes the first attempt fail its guards; the state is moved back onto
// rho <= rho0 by positions and the step redone with every guard (it meets eta, no prediction moves
// a particle by d0), with no speed near what the column's own weight could give. In ordinary flow
// no step fails that way and the projection does not run.
#include "scene/Scene.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <cmath>

using namespace octo;

namespace {

SceneDescription column(float r, float height) {
    SceneDescription scene;
    scene.name = "projection-test";
    scene.particleRadius = r;
    scene.container = Aabb(Vec3f::Zero(), Vec3f(0.2f, 0.5f, 0.2f));
    scene.fluidBoxes.push_back({Aabb(Vec3f::Zero(), Vec3f(0.2f, height, 0.2f)), Vec3f::Zero()});
    return scene;
}

/// Squeezes the fluid within a cube of half-edge `half` about `centre` toward it by `factor`.
int squeeze(Simulation& sim, const Vec3f& centre, float half, float factor) {
    int n = 0;
    for (Vec3f& x : sim.solver().state().positions)
        if ((x - centre).cwiseAbs().maxCoeff() < half) {
            x = centre + factor * (x - centre);
            ++n;
        }
    return n;
}

} // namespace

class TestDensityProjection : public QObject {
    Q_OBJECT
private slots:
    void squeezedBlockIsProjected_data() {
        QTest::addColumn<float>("factor");
        QTest::newRow("x 0.90: +37 %") << 0.9f;
        QTest::newRow("x 0.80: +95 %") << 0.8f;
        QTest::newRow("x 0.70: +192 %") << 0.7f;
    }
    void squeezedBlockIsProjected() {
        // A 10 cm cube of a resting 0.3 m column (r = 10 mm) squeezed toward its centre before a
        // step. Corrected by pressure at the planned 4 ms step, the +37 % alone would become
        // ~ e d0 / dt = 1.9 m/s (the relaxation rule this replaced: 1.13 m/s; with restarts down
        // to 10 us: 750 m/s); the column's weight can give at most sqrt(2 g H) = 2.4 m/s.
        // Measured: 0.07-0.08 m/s after the first step, 0.16 / 0.20 / 0.20 m/s at most in 40 steps,
        // 6 / 7 / 9 projection updates, no restart, every step within eta.
        QFETCH(float, factor);
        const float r = 0.01f, d0 = 2.0f * r, eta = 0.01f;
        Simulation sim(column(r, 0.3f), {"surfaceEnabled=false"});
        for (int f = 0; f < 12; ++f)
            sim.advanceFrame(1.0 / 60.0);
        QVERIFY(squeeze(sim, Vec3f(0.1f, 0.15f, 0.1f), 0.05f, factor) >= 64);
        float fastest = 0.0f;
        for (int k = 0; k < 40; ++k) {
            const StepStats& s = sim.step();
            const SphStepResult& step = sim.solver().lastStep();
            if (k == 0) {
                qInfo("first step: start error %.3f, %d projection updates, speed %.3f m/s",
                      step.startDensityError, step.projectionIterations, s.maxSpeed);
                QVERIFY(step.startDensityError > 0.3f); // the squeeze is seen ...
                QVERIFY(step.projectionIterations > 0); // ... and projected
                QVERIFY2(s.maxSpeed < 0.2, qPrintable(QString::number(s.maxSpeed)));
                QCOMPARE(step.restarts, 1); // the failed first attempt, redone from the projected state
            } else {
                QCOMPARE(step.projectionIterations, 0); // the state stays within eta
                QCOMPARE(step.restarts, 0);
            }
            // The ordinary step with its guards: it met eta, no prediction moved a particle by d0.
            QVERIFY(step.converged);
            QVERIFY(step.maxDensityError <= eta);
            QVERIFY(s.maxSpeed * s.dt < d0);
            fastest = std::max(fastest, float(s.maxSpeed));
        }
        qInfo("squeezed x %.2f: fastest %.3f m/s", double(factor), fastest);
        QVERIFY2(fastest < 0.5f, qPrintable(QString::number(fastest)));
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
    }

    void ordinaryFlowIsNotProjected() {
        // The projection runs only when a step's first attempt fails its guards from a compressed
        // state: never in the dam break (r = 20 mm, 3 s: 0 of 664 steps) or a resting column.
        const auto check = [](Simulation& sim, double seconds, const char* what) {
            int steps = 0;
            while (sim.time() < seconds) {
                sim.step();
                QCOMPARE(sim.solver().lastStep().projectionIterations, 0);
                ++steps;
            }
            qInfo("%s: %d steps, none projected", what, steps);
        };
        auto damBreak =
            Simulation::fromSceneName("dam-break", {"particleRadius=0.02", "surfaceEnabled=false"});
        check(*damBreak, 1.5, "dam break");
        Simulation rest(column(0.01f, 0.3f), {"surfaceEnabled=false"});
        check(rest, 0.5, "resting column");
    }
};

QTEST_APPLESS_MAIN(TestDensityProjection)
#include "test_density_projection.moc"
