// TimeStepController: the CFL and force bounds, the iteration-aware scale (Ihmsen et al. 2010),
// restarts and the clamping to [timeStepMin, timeStepMax], each with a value that a wrong rule
// would miss.
#include "sph/TimeStepController.h"

#include <QtTest>

#include <cmath>

using namespace octo;

namespace {
TimeStepController controller(float dtMin = 1e-6f, float dtMax = 1.0f) {
    TimeStepController c;
    c.setBounds({0.4f, 0.02f, dtMin, dtMax}); // cfl 0.4, d0 = 2 cm
    return c;
}
bool near(double a, double b) {
    return std::abs(a - b) <= 1e-6 * std::abs(b);
}
} // namespace

class TestTimeStepController : public QObject {
    Q_OBJECT
private slots:
    void cflBoundFollowsTheFastestParticle() {
        TimeStepController c = controller();
        c.observe(2.0f, 0.0f); // 2 m/s, no acceleration
        // A particle moves at most cfl d0 = 8 mm per step: 4 ms at 2 m/s.
        QVERIFY2(near(c.next(), 0.004), qPrintable(QString::number(c.next())));
        c.observe(4.0f, 0.0f);
        QVERIFY(near(c.next(), 0.002));
    }

    void forceBoundFollowsTheAcceleration() {
        TimeStepController c = controller();
        c.observe(0.0f, 9.81f); // at rest under gravity: dt = cfl sqrt(d0 / g) = 18.06 ms
        QVERIFY2(near(c.next(), 0.4 * std::sqrt(0.02 / 9.81)), qPrintable(QString::number(c.next())));
        // The smaller of both bounds: 1 m/s gives 8 ms, below the force bound.
        c.observe(1.0f, 9.81f);
        QVERIFY(near(c.next(), 0.008));
    }

    void forceLimitIsTheBoundOfNext() {
        // The bound the rigid bodies share (SimulationBodies::accelerationLimit): 10 g displaces a
        // point by cfl^2 d0 = 3.2 mm in 5.71 ms; no acceleration, no bound.
        const float dt = TimeStepController::forceLimit(0.4f, 0.02f, 98.1f);
        QVERIFY2(near(dt, 0.4 * std::sqrt(0.02 / 98.1)), qPrintable(QString::number(dt)));
        QVERIFY(near(0.5 * 98.1 * double(dt) * dt, 0.4 * 0.4 * 0.02 / 2.0));
        QVERIFY(std::isinf(TimeStepController::forceLimit(0.4f, 0.02f, 0.0f)));
        TimeStepController c = controller();
        c.observe(0.0f, 98.1f);
        QCOMPARE(c.next(), dt);
    }

    void clampsToTheBounds() {
        TimeStepController c = controller(1e-4f, 5e-3f);
        c.observe(0.0f, 0.0f); // no bound at all: timeStepMax
        QCOMPARE(c.next(), 5e-3f);
        c.observe(1000.0f, 0.0f); // CFL would give 8 us
        QCOMPARE(c.next(), 1e-4f);
        c.observe(1.0f, 0.0f); // 8 ms > timeStepMax
        QCOMPARE(c.next(), 5e-3f);
        // A caller's maxDt lowers the step, but never below timeStepMin.
        QCOMPARE(c.planned(2e-3f), 2e-3f);
        QCOMPARE(c.planned(1e-6f), 1e-4f);
        QCOMPARE(c.planned(1.0f), 5e-3f);
    }

    void startsSmallAndGrowsByFivePercentPerStep() {
        TimeStepController c = controller();
        c.start(2.0f, 0.0f); // CFL bound 4 ms
        QCOMPARE(c.scale(), TimeStepController::kStartScale);
        QVERIFY(near(c.next(), 0.0004));
        float previous = c.next();
        for (int s = 0; s < 10; ++s) {
            c.adaptToIterations(3, 3, false); // a cheap PCISPH step (<= minIterations + 2)
            QVERIFY2(near(c.next(), 1.05 * previous),
                     qPrintable(QString("step %1: %2 after %3").arg(s).arg(c.next()).arg(previous)));
            previous = c.next();
        }
        // Never beyond the bounds themselves.
        for (int s = 0; s < 200; ++s)
            c.adaptToIterations(3, 3, false);
        QCOMPARE(c.scale(), 1.0f);
        QVERIFY(near(c.next(), 0.004));
    }

    void followsTheIterationCount() {
        TimeStepController c = controller();
        c.observe(2.0f, 0.0f);
        const float s0 = c.scale(); // 1
        // minIterations 3: target 5; up to 7 iterations keep the scale, 8 shrink it by 5 %.
        c.adaptToIterations(7, 3, false);
        QCOMPARE(c.scale(), s0);
        c.adaptToIterations(6, 3, false);
        QCOMPARE(c.scale(), s0);
        c.adaptToIterations(8, 3, false);
        QVERIFY(near(c.scale(), 0.95 * s0));
        QVERIFY(near(c.next(), 0.95 * 0.004));
        // 5 iterations let it grow again.
        c.adaptToIterations(5, 3, false);
        QVERIFY(near(c.scale(), 0.95 * 1.05 * s0));
    }

    void restartOrMissedToleranceHalves() {
        TimeStepController c = controller();
        c.observe(2.0f, 0.0f);
        c.adaptToIterations(3, 3, true); // few iterations, but restarted: halved all the same
        QVERIFY(near(c.scale(), 0.5));
        QVERIFY(near(c.next(), 0.002));
        c.adaptToIterations(2, 2, true); // DFSPH's sweeps (minimum 2), restarted
        QVERIFY(near(c.scale(), 0.25));
        c.adaptToIterations(2, 2, false);
        QVERIFY(near(c.scale(), 0.25 * 1.05));
        // The scale has a floor: 2 %.
        for (int s = 0; s < 20; ++s)
            c.adaptToIterations(50, 3, true);
        QCOMPARE(c.scale(), TimeStepController::kMinScale);
    }

    void restartedAttemptsShrinkTheStep() {
        TimeStepController c = controller(1e-4f, 5e-3f);
        QCOMPARE(c.halved(4e-3f), 2e-3f);
        QCOMPARE(c.quartered(4e-3f), 1e-3f);
        QCOMPARE(c.quartered(3e-4f), 1e-4f); // not below timeStepMin
        QVERIFY(c.atMinimum(1e-4f));
        QVERIFY(!c.atMinimum(2e-4f));
    }
};

QTEST_MAIN(TestTimeStepController)
#include "test_time_step_controller.moc"
