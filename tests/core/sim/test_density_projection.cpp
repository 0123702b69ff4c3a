// PCISPH's and DFSPH's handling of a compression a step starts with (DensityProjection_Macklin2013):
// a block squeezed before a step makes the first attempt fail its guards; the state is moved back
// onto rho <= rho0 by positions and the step redone with every guard (it meets eta, no prediction
// moves a particle by d0), with no speed near what the column's own weight could give. In ordinary
// flow no step fails that way and the projection does not run.
#include "scene/Scene.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace octo;

namespace {

const char* solverSetting(bool dfsph) {
    return dfsph ? "pressureSolver=dfsph" : "pressureSolver=pcisph";
}

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
        QTest::addColumn<bool>("dfsph");
        QTest::addColumn<float>("factor");
        for (const bool dfsph : {false, true}) {
            const char* name = dfsph ? "DFSPH" : "PCISPH";
            QTest::addRow("%s x 0.90: +37 %%", name) << dfsph << 0.9f;
            QTest::addRow("%s x 0.80: +95 %%", name) << dfsph << 0.8f;
            QTest::addRow("%s x 0.70: +192 %%", name) << dfsph << 0.7f;
        }
    }
    void squeezedBlockIsProjected() {
        // A 10 cm cube of a resting 0.3 m column (r = 10 mm) squeezed toward its centre before a
        // step. Corrected by pressure at the planned 4 ms step, the +37 % alone would become
        // ~ e d0 / dt = 1.9 m/s (the relaxation rule this replaced: 1.13 m/s; with restarts down
        // to 10 us: 750 m/s); the column's weight can give at most sqrt(2 g H) = 2.4 m/s.
        // Measured: 0.07-0.08 m/s after the first step, 0.16 / 0.20 / 0.20 m/s at most in 40 steps,
        // 6 / 7 / 9 projection updates, no restart, every step within eta.
        //
        // DFSPH (without the projection: 0.87 m/s at +37 %; +95 % and +192 % missed eta in every
        // step and reached 3 000 and 1 300 m/s at dt = 10 us) is held to the same 0.2 m/s. With
        // Akinci's walls and no filter its unsqueezed column moved at 0.31 m/s in the first step, and
        // the bound was that plus 10 % (0.34); with the mirrored walls and the filter (its defaults
        // since 2026-12-05) the unsqueezed column moves at 0.026 m/s, so the special bound went.
        // Measured: 0.146 / 0.143 m/s after the first step of +95 % / +192 %. At +37 % its first
        // attempt meets every guard: by the rule the projection does not run, and the pressure's
        // 0.87 m/s exceeds the bounds.
        QFETCH(bool, dfsph);
        QFETCH(float, factor);
        const float r = 0.01f, d0 = 2.0f * r, eta = 0.01f;
        const auto settled = [&] {
            auto sim = std::make_unique<Simulation>(
                column(r, 0.3f), std::vector<std::string>{"surfaceEnabled=false", solverSetting(dfsph)});
            for (int f = 0; f < 12; ++f)
                sim->advanceFrame(1.0 / 60.0);
            return sim;
        };
        const float firstStepBound = 0.2f;
        const auto simPtr = settled();
        Simulation& sim = *simPtr;
        QVERIFY(squeeze(sim, Vec3f(0.1f, 0.15f, 0.1f), 0.05f, factor) >= 64);
        // DFSPH's density solve meets eta within its guards at +37 %: nothing fails, nothing projected.
        const bool withinGuards = dfsph && factor > 0.85f;
        float fastest = 0.0f;
        for (int k = 0; k < 40; ++k) {
            const StepStats& s = sim.step();
            const SphStepResult& step = sim.solver().lastStep();
            if (k == 0) {
                qInfo("first step: start error %.3f, %d projection updates, speed %.3f m/s",
                      step.startDensityError, step.projectionIterations, s.maxSpeed);
                if (withinGuards) {
                    QCOMPARE(step.projectionIterations, 0);
                    QCOMPARE(step.restarts, 0);
                    QEXPECT_FAIL("", "DFSPH at +37 %: the guards hold, the pressure corrects it", Continue);
                } else {
                    QVERIFY(step.startDensityError > 0.3f); // the squeeze is seen ...
                    QVERIFY(step.projectionIterations > 0); // ... and projected
                    QCOMPARE(step.restarts, 1); // the failed first attempt, redone from the projected state
                }
                QVERIFY2(s.maxSpeed < firstStepBound, qPrintable(QString::number(s.maxSpeed)));
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
        if (withinGuards)
            QEXPECT_FAIL("", "DFSPH at +37 %: the guards hold, the pressure corrects it", Continue);
        QVERIFY2(fastest < 0.5f, qPrintable(QString::number(fastest)));
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
    }

    void ordinaryFlowIsNotProjected_data() {
        QTest::addColumn<bool>("dfsph");
        QTest::newRow("PCISPH") << false;
        QTest::newRow("DFSPH") << true;
    }
    void ordinaryFlowIsNotProjected() {
        // The projection runs only when a step's first attempt fails its guards from a compressed
        // state: never in the dam break (r = 20 mm, 3 s: 0 of 664 steps) or a resting column.
        // DFSPH's committed states are often a little above eta (it meets eta on the prediction):
        // projected before every step, 305 of 646 dam-break steps would have been.
        QFETCH(bool, dfsph);
        const auto check = [dfsph](Simulation& sim, double seconds, const char* what) {
            QCOMPARE(sim.solver().config().pressureSolver == SphConfig::PressureSolver::Dfsph, dfsph);
            int steps = 0;
            while (sim.time() < seconds) {
                sim.step();
                QCOMPARE(sim.solver().lastStep().projectionIterations, 0);
                ++steps;
            }
            qInfo("%s: %d steps, none projected", what, steps);
        };
        auto damBreak = Simulation::fromSceneName(
            "dam-break", {"particleRadius=0.02", "surfaceEnabled=false", solverSetting(dfsph)});
        check(*damBreak, 1.5, "dam break");
        Simulation rest(column(0.01f, 0.3f), {"surfaceEnabled=false", solverSetting(dfsph)});
        check(rest, 0.5, "resting column");
    }
};

QTEST_APPLESS_MAIN(TestDensityProjection)
#include "test_density_projection.moc"
