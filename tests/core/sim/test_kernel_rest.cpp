// Issue 26, a rest quiet by construction: without the velocity filter, a resting column's start
// lattice moves because the cubic spline's simple cubic lattice is unstable under pressure (a
// shear mode that changes no density: docs/ALGORITHMS.md §10, docs/validation/lattice_stability.py).
// The Wendland C2 kernel has no such mode (Dehnen & Aly 2012). The column at r = 6.25 mm,
// filter off, both kernels side by side: measured 0.108 m/s (cubic) against 0.033 m/s (Wendland)
// at 0.5 s.
#include "scene/Scene.h"
#include "sim/Simulation.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <algorithm>
#include <string>

using namespace octo;

namespace {

struct Rest {
    double maxSpeed = 0.0, levelShift = 0.0, deepRms = 0.0;
    bool blowUp = false;
};

double meanHeight(const FluidState& st) {
    double sum = 0.0;
    for (const Vec3f& x : st.positions)
        sum += x.y();
    return sum / double(st.size());
}

/// The 0.35 m deep column of test_rest_resolutions at r = 6.25 mm, 12 spacings wide, 0.5 s.
Rest restingColumn(const std::string& kernel) {
    const float r = 0.00625f, w = 12 * 2 * r, depth = 0.35f;
    SceneDescription scene;
    scene.name = "rest-column";
    scene.particleRadius = r;
    scene.container = Aabb(Vec3f::Zero(), Vec3f(w, 0.6f, w));
    scene.fluidBoxes.push_back({Aabb(Vec3f::Zero(), Vec3f(w, depth, w)), Vec3f::Zero()});
    Simulation sim(scene, {"surfaceEnabled=false", "velocityFilter=0", "kernel=" + kernel});
    const double level0 = 2.0 * meanHeight(sim.solver().state());
    Rest res;
    for (int frame = 0; frame < 30; ++frame) {
        sim.advanceFrame(1.0 / 60.0);
        res.blowUp = res.blowUp || sim.lastFrame().blowUp;
    }
    const FluidState& st = sim.solver().state();
    res.maxSpeed = sim.lastFrame().maxSpeed;
    res.levelShift = 2.0 * meanHeight(st) - level0;
    // The bulk below the top 0.1 m: where the lattice's shear mode lives.
    double sum = 0.0;
    int n = 0;
    for (size_t i = 0; i < st.size(); ++i)
        if (st.positions[i].y() < depth - 0.1f) {
            sum += st.velocities[i].squaredNorm();
            ++n;
        }
    res.deepRms = std::sqrt(sum / std::max(n, 1));
    return res;
}

} // namespace

class TestKernelRest : public QObject {
    Q_OBJECT
private slots:
    void wendlandColumnRestsWithoutTheFilter() {
        const Rest cubic = restingColumn("cubic");
        const Rest wendland = restingColumn("wendland");
        qInfo("filter off, 0.5 s: cubic max %.4f m/s (bulk rms %.4f), level %.4f m; wendland max %.4f m/s "
              "(bulk rms %.4f), level %.4f m",
              cubic.maxSpeed, cubic.deepRms, cubic.levelShift, wendland.maxSpeed, wendland.deepRms,
              wendland.levelShift);
        QVERIFY(!cubic.blowUp && !wendland.blowUp);
        // The bounds: max speed below 0.05 m/s after 0.5 s, the level within r.
        QVERIFY2(wendland.maxSpeed < 0.05, qPrintable(QString("%1 m/s").arg(wendland.maxSpeed)));
        QVERIFY2(std::abs(wendland.levelShift) < 0.00625,
                 qPrintable(QString("level moved %1 m").arg(wendland.levelShift)));
        // The cause: the cubic spline's bulk moves, Wendland's does not (at least 3x quieter).
        QVERIFY2(wendland.deepRms * 3.0 < cubic.deepRms,
                 qPrintable(QString("bulk rms %1 vs %2 m/s").arg(wendland.deepRms).arg(cubic.deepRms)));
    }
};

QTEST_MAIN(TestKernelRest)
#include "test_kernel_rest.moc"
