// Issue 25: a body dragged through water at the Interactive resolution (r = 12.6 mm) reaches the
// cursor: its grab point comes within 1 cm of a target 0.3 m away. Asserted in simulated time (no
// timed tests); the wall time and the steps it took are printed for the record.
// Measurement knobs (docs/BENCHMARKS.md §2): OCTO_DRAG_WALL=<s> drives the drag as the GUI's worker
// does (simulated response = <s> x the real-time factor measured over half-second windows, surface
// on); OCTO_DRAG_LAW=spring the linear spring of before, OCTO_DRAG_HOLD=0 no hold against the
// fluid, OCTO_DRAG_VMAX / OCTO_DRAG_TAU the speed cap (m/s) and the simulated response (s);
// OCTO_DRAG_TRACE=1 prints every step.
#include "rigid/RigidBodySystem.h"
#include "scene/Scene.h"
#include "sim/Simulation.h"
#include "sim/SimulationBodies.h"
#include "sph/FluidState.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

using namespace octo;

namespace {
/// A pool 0.2 m deep (6 k particles at the Interactive radius) and one 0.14 m box.
SceneDescription pool(float relativeDensity, float centreY) {
    return parseSceneJson(R"({
        "name": "drag-pool", "particleRadius": 0.0126,
        "container": {"min": [0, 0, 0], "max": [1.0, 0.6, 0.5]},
        "fluidBoxes": [{"min": [0, 0, 0], "max": [1.0, 0.2, 0.5]}],
        "bodies": [{"name": "box", "shape": "box", "size": 0.14, "relativeDensity": )" +
                              std::to_string(relativeDensity) + R"(, "position": [0.25, )" +
                              std::to_string(centreY) + R"(, 0.25]}]
    })",
                          "drag-pool.json");
}

struct Reach {
    double simToReach = -1.0, wallToReach = -1.0; // s; -1: not reached
    double maxFluidSpeed = 0.0, maxBodySpeed = 0.0, overshoot = 0.0;
    double errorAfter = 0.0;       // m; the largest distance to the target after reaching it
    double rtf = 0.0;              // simulated / wall over the approach
    int steps = 0, iterations = 0; // to reach
    bool blowUp = false;
};

double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

/// Drags the box's centre 0.3 m along +x (through the water) and records when it comes within
/// `tolerance` of the target. wallResponse > 0: the spring's simulated response follows the
/// measured real-time factor as in SimulationWorker::updateDragResponse.
Reach dragAcross(Simulation& sim, float tolerance, double simResponse, double wallResponse, double limit,
                 const Vec3f& move = Vec3f(0.3f, 0.0f, 0.0f)) {
    const int id = sim.rigidBodies().bodies().front()->id();
    DragSettings& ds = sim.rigidBodies().dragSettings();
    ds.responseTime = float(simResponse);
    if (const char* law = std::getenv("OCTO_DRAG_LAW"))
        ds.timeOptimal = std::string(law) != "spring";
    if (const char* hold = std::getenv("OCTO_DRAG_HOLD"))
        ds.holdAgainstFluid = std::atoi(hold) != 0;
    if (const char* vmax = std::getenv("OCTO_DRAG_VMAX"))
        ds.maxSpeed = float(std::atof(vmax));
    sim.beginDrag(id, Vec3f::Zero());
    const RigidBody& b = *sim.rigidBodies().body(id);
    const Vec3f target = b.position() + move;
    sim.setDragTarget(target);
    Reach r;
    const auto w0 = std::chrono::steady_clock::now();
    auto window = w0;
    const double t0 = sim.time();
    double windowT = t0, factor = 0.0;
    while (sim.time() < t0 + limit) {
        if (wallResponse > 0.0) {
            const double f = factor > 0.0 ? std::min(factor, 1.0) : 0.05;
            sim.rigidBodies().dragSettings().responseTime = float(std::clamp(wallResponse * f, 0.005, 1.0));
        }
        const StepStats& s = sim.frameStep();
        r.steps += r.simToReach < 0.0 ? 1 : 0;
        r.iterations += r.simToReach < 0.0 ? s.iterations : 0;
        r.blowUp = r.blowUp || s.blowUp;
        r.maxFluidSpeed = std::max(r.maxFluidSpeed, s.maxSpeed);
        r.maxBodySpeed = std::max(r.maxBodySpeed, double(b.linearVelocity().norm()));
        const auto now = std::chrono::steady_clock::now();
        if (seconds(window, now) > 0.5) {
            factor = (sim.time() - windowT) / seconds(window, now);
            window = now;
            windowT = sim.time();
        }
        const Vec3f e = b.position() - target;
        r.overshoot = std::max(r.overshoot, double(e.x()));
        if (r.simToReach >= 0.0)
            r.errorAfter = std::max(r.errorAfter, double(e.norm()));
        if (e.norm() < tolerance && r.simToReach < 0.0) {
            r.simToReach = sim.time() - t0;
            r.wallToReach = seconds(w0, now);
            r.rtf = r.simToReach / r.wallToReach;
        }
        if (std::getenv("OCTO_DRAG_TRACE"))
            qInfo(
                "t %.4f dt %.2e it %d e %.4f v %.3f fluid %.2f F %.1f tau %.4f physics %.1f ms, %d sub-steps",
                sim.time() - t0, s.dt, s.iterations, e.norm(), b.linearVelocity().norm(), s.maxSpeed,
                sim.bodyStats().front().fluidForce.norm(), sim.rigidBodies().dragSettings().responseTime,
                s.physicsMs, sim.rigidBodies().lastSubsteps());
    }
    sim.endDrag();
    return r;
}
} // namespace

class TestDragReach : public QObject {
    Q_OBJECT
private slots:
    void reachesTheCursorThroughWater_data() {
        QTest::addColumn<float>("relativeDensity");
        QTest::addColumn<float>("centreY");
        QTest::newRow("heavy box (2.0), submerged") << 2.0f << 0.0701f;
        QTest::newRow("light box (0.5), floating") << 0.5f << 0.2f;
    }
    void reachesTheCursorThroughWater() {
        QFETCH(float, relativeDensity);
        QFETCH(float, centreY);
        const double wall = std::getenv("OCTO_DRAG_WALL") ? std::atof(std::getenv("OCTO_DRAG_WALL")) : 0.0;
        Simulation sim(pool(relativeDensity, centreY),
                       {"surfaceEnabled=" + std::string(wall > 0 ? "true" : "false")});
        while (sim.time() < 0.5) // the pool settles around the box
            sim.frameStep();
        // 0.016 s: the GUI's 0.2 s of wall response at 0.08x real time, the factor measured while a
        // box crosses the Interactive dam break.
        const double tau = std::getenv("OCTO_DRAG_TAU") ? std::atof(std::getenv("OCTO_DRAG_TAU")) : 0.016;
        const Reach r = dragAcross(sim, 0.01f, tau, wall, wall > 0 ? 0.6 : 0.3);
        qInfo("reached within 1 cm after %.4f s simulated, %.2f s wall (%.3fx real time, %d steps, %d "
              "iterations); body "
              "%.2f m/s, fluid %.2f m/s at most, overshoot %.4f m, then within %.4f m%s",
              r.simToReach, r.wallToReach, r.rtf, r.steps, r.iterations, r.maxBodySpeed, r.maxFluidSpeed,
              r.overshoot, r.errorAfter, r.blowUp ? ", BLOW-UP" : "");
        if (wall > 0.0 || std::getenv("OCTO_DRAG_LAW") || std::getenv("OCTO_DRAG_VMAX") ||
            std::getenv("OCTO_DRAG_TAU"))
            return; // a measurement, not the test
        QVERIFY(!r.blowUp);
        // At 3 m/s 0.3 m take 0.1 s; speeding up and braking on the minimum-time profile add about
        // responseTime / 8 (measured 0.102 s, both boxes). The linear spring's exponential tail took
        // 0.138 s (heavy) and 0.142 s (light), the hand that did not hold against the water lagging.
        QVERIFY2(r.simToReach > 0.0 && r.simToReach < 0.11, qPrintable(QString("%1 s").arg(r.simToReach)));
        // The hand holds the body there against the water it stirred up (measured < 1 mm).
        QVERIFY2(r.errorAfter < 0.01 && r.overshoot < 0.01,
                 qPrintable(QString("then %1 m off, overshoot %2 m").arg(r.errorAfter).arg(r.overshoot)));
        // The fluid stays bounded: no particle faster than twice the hand (measured 4.3 and 5.1 m/s;
        // the cap of 3 m/s exists because a faster pull flung the water and cut the time step).
        QVERIFY2(r.maxFluidSpeed < 2.0 * 3.0, qPrintable(QString("fluid at %1 m/s").arg(r.maxFluidSpeed)));
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
    }

    void pressedIntoTheFloorStaysBounded() {
        // The cursor 0.4 m below a floating box, under the floor: the hand drives the box down
        // through the water and presses it onto the floor, squeezing the water out of the gap.
        // Its force is bounded (RigidBodySystem::applyDrag): unbounded, the box reached 29 m/s
        // and the water 133 m/s, a blow-up; bounded, 3 m/s and 25 m/s (the spring: 2.3 and 14 m/s).
        Simulation sim(pool(0.5f, 0.2f), {"surfaceEnabled=false"});
        while (sim.time() < 0.5)
            sim.frameStep();
        const Reach r = dragAcross(sim, 0.01f, 0.016, 0.0, 0.3, Vec3f(0.1f, -0.4f, 0.0f));
        qInfo("pressed into the floor: body %.2f m/s, fluid %.2f m/s at most", r.maxBodySpeed,
              r.maxFluidSpeed);
        QVERIFY(!r.blowUp);
        QVERIFY2(r.maxBodySpeed < 1.1 * 3.0, qPrintable(QString("body at %1 m/s").arg(r.maxBodySpeed)));
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
    }
};

QTEST_MAIN(TestDragReach)
#include "test_drag_reach.moc"
