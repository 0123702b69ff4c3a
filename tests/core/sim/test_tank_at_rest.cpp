// Tank at rest (issue 2): after settling 2 s of simulated time the water is still at rest,
// incompressible within eta, no particle lost or outside the box.
#include "scene/Scene.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <cmath>

using namespace octo;

class TestTankAtRest : public QObject {
    Q_OBJECT
private slots:
    void staysAtRest() {
        SceneDescription scene;
        scene.name = "tank-test";
        scene.particleRadius = 0.01f;
        scene.container = Aabb(Vec3f::Zero(), Vec3f(0.4f, 0.4f, 0.4f));
        const float H = 0.24f;
        scene.fluidBoxes.push_back({Aabb(Vec3f::Zero(), Vec3f(0.4f, H, 0.4f)), Vec3f::Zero()});
        Simulation sim(scene);
        const size_t n0 = sim.fluidParticleCount();
        QVERIFY(n0 > 3000);
        const double eta = sim.parameters().get("densityErrorTolerance");
        const int minIt = sim.solver().minimumIterations(), maxIt = sim.parameters().geti("maxIterations");
        size_t steps = 0, contained = 0;
        while (sim.time() < 2.0) {
            const StepStats& s = sim.step();
            contained += sim.solver().lastStep().contained;
            QVERIFY(s.iterations >= minIt && s.iterations <= maxIt);
            QVERIFY(s.converged || s.iterations == maxIt);
            ++steps;
        }
        const FluidState& st = sim.solver().state();
        double speed = 0.0;
        for (const Vec3f& v : st.velocities)
            speed += v.norm();
        speed /= double(st.size());
        const double vRef = std::sqrt(2.0 * 9.81 * H);
        const StepStats& last = sim.lastStep();
        qInfo("tank: %zu particles, %zu steps, mean speed %.5f m/s (limit %.5f), max density error %.3f %%, "
              "contained %zu",
              n0, steps, speed, 0.01 * vRef, 100.0 * last.maxDensityError, contained);
        QCOMPARE(sim.fluidParticleCount(), n0);
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
        QCOMPARE(sim.escapedCount(), size_t(0));
        QCOMPARE(contained, size_t(0)); // the walls hold the water without the safety net
        QVERIFY2(last.maxDensityError <= eta + 0.005, qPrintable(QString::number(last.maxDensityError)));
        QVERIFY2(speed < 0.01 * vRef, qPrintable(QString("mean speed %1").arg(speed)));
        // The free surface stays where it was (incompressible: the level drops < 1 particle).
        float top = 0.0f;
        for (const Vec3f& x : st.positions)
            top = std::max(top, x.y());
        QVERIFY2(std::abs(top + scene.particleRadius - H) < 2.0f * scene.particleRadius,
                 qPrintable(QString::number(top)));
    }
};

QTEST_APPLESS_MAIN(TestTankAtRest)
#include "test_tank_at_rest.moc"
