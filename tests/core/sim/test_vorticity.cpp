// Vorticity confinement (VorticityConfinement_Fedkiw2001): the wake of the `cylinder` scene keeps
// more of its rotation with the model on, and a stirred closed tank still comes to rest (the
// model amplifies existing vortices but must not drive the flow by itself).
#include "scene/Scene.h"
#include "scene/SceneLibrary.h"
#include "sim/Simulation.h"
#include "sph/FluidState.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <cmath>

using namespace octo;

namespace {

/// Enstrophy sum_i |omega_i|^2 V_i over the particles inside `region`, with the SPH curl
/// omega_i = sum_j V_j (v_i - v_j) x grad_i W_ij evaluated here by brute force (independent of
/// the solver's own pass), V = m / rho.
double enstrophy(Simulation& sim, const Aabb& region) {
    const SphSolver& solver = sim.solver();
    const FluidState& s = solver.state();
    const float h = solver.supportRadius(), m = solver.mass();
    double sum = 0.0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (!region.contains(s.positions[i]))
            continue;
        Vec3f w = Vec3f::Zero();
        for (size_t j = 0; j < s.size(); ++j) {
            const Vec3f xij = s.positions[i] - s.positions[j];
            if (j == i || xij.squaredNorm() >= h * h)
                continue;
            w += (m / s.densities[j]) * (s.velocities[i] - s.velocities[j]).cross(solver.kernel().gradW(xij));
        }
        sum += double(w.squaredNorm()) * double(m / s.densities[i]);
    }
    return sum;
}

struct WakeResult {
    double enstrophy = 0.0;
    size_t nonFinite = 0, contained = 0, escaped = 0, particles = 0;
};

WakeResult cylinderWake(float epsilon, double measureAt, const Aabb& wake) {
    const SceneDescription scene = SceneLibrary::load("cylinder");
    Simulation sim(scene, {"particleRadius=0.0125", "surfaceEnabled=false", "surfaceTension=0",
                           "vorticityConfinement=" + std::to_string(epsilon)});
    WakeResult res;
    // Mean of three samples 25 ms apart around measureAt (one sample is noisy: splashes).
    for (double t : {measureAt - 0.025, measureAt, measureAt + 0.025}) {
        while (sim.time() < t) {
            sim.step();
            res.contained += sim.solver().lastStep().contained;
            res.escaped += sim.solver().lastStep().escaped;
        }
        res.enstrophy += enstrophy(sim, wake) / 3.0;
    }
    res.nonFinite = sim.nonFiniteCount();
    res.particles = sim.fluidParticleCount();
    return res;
}

double kineticEnergy(Simulation& sim) {
    double e = 0.0;
    for (const Vec3f& v : sim.solver().state().velocities)
        e += 0.5 * double(sim.solver().mass()) * double(v.squaredNorm());
    return e;
}

} // namespace

class TestVorticity : public QObject {
    Q_OBJECT
    // The cylinder starts at x = 0.15 at t = 0.25 s and crosses the middle of the tank (x = 0.75)
    // at t = 0.31 s; the wake region is the middle 0.8 m of its path, measured 0.3 s after it
    // passes (mean of 0.585, 0.61, 0.635 s). Resolution r = 1.25 cm for test time.
    static constexpr double kMeasureAt = 0.31 + 0.3;
    inline static const Aabb kWake{Vec3f(0.35f, 0.0f, 0.1f), Vec3f(1.15f, 0.45f, 0.4f)};
    double offEnstrophy_ = -1.0;

private slots:
    // The two runs are two test functions so each stays well inside Qt Test's 5 min function
    // timeout on a loaded machine; the second reuses the first's result (or runs it itself).
    void wakeWithoutTheModel() {
        offEnstrophy_ = cylinderWake(0.0f, kMeasureAt, kWake).enstrophy;
        qInfo("wake enstrophy at t = %.2f s, model off: %.4g 1/s^2 m^3", kMeasureAt, offEnstrophy_);
        QVERIFY(offEnstrophy_ > 0.0);
    }

    void wakeKeepsItsVortices() {
        if (offEnstrophy_ < 0.0)
            wakeWithoutTheModel();
        const WakeResult on = cylinderWake(0.8f, kMeasureAt, kWake);
        qInfo("wake enstrophy at t = %.2f s: model off %.4g, on (eps 0.8) %.4g 1/s^2 m^3, ratio %.2f",
              kMeasureAt, offEnstrophy_, on.enstrophy, on.enstrophy / offEnstrophy_);
        QCOMPARE(on.nonFinite, size_t(0));
        // Nothing leaves through the walls. The 10 m/s bow wave at this coarsened resolution with a
        // strong confinement may push a particle or two past the wall plane by r/2 (the safety net
        // puts it back; one such particle was seen in a run of the merged tree): bounded here; the
        // default scenes assert contained == 0 (test_surface_tension_scenes, test_dam_break).
        QCOMPARE(on.escaped, size_t(0));
        QVERIFY2(on.contained <= on.particles / 1000,
                 qPrintable(QString("safety net used %1 times").arg(on.contained)));
        // Measured 1.47 (off 8.1, on 12.0). It was 2.43 before the velocity filter was on by
        // default, 1.53 with the filter off the free-surface layer (off 16.2, on 24.9): the filter
        // now damps that layer's particle-scale motion in both runs (docs/VALIDATION.md,
        // the cylinder wake's row).
        QVERIFY2(on.enstrophy >= 1.4 * offEnstrophy_,
                 qPrintable(QString("ratio %1").arg(on.enstrophy / offEnstrophy_)));
    }

    void stirredTankComesToRest() {
        // A closed tank whose water is set swirling (rigid rotation about the vertical axis,
        // 0.3 m/s at the walls), then left alone with a strong confinement.
        SceneDescription scene;
        scene.name = "stirred-tank";
        scene.particleRadius = 0.015f;
        scene.container = Aabb(Vec3f::Zero(), Vec3f(0.4f, 0.4f, 0.4f));
        scene.fluidBoxes.push_back({Aabb(Vec3f::Zero(), Vec3f(0.4f, 0.25f, 0.4f)), Vec3f::Zero()});
        Simulation sim(scene, {"surfaceEnabled=false", "vorticityConfinement=0.5"});
        auto& st = sim.solver().state();
        const Vec3f centre(0.2f, 0.0f, 0.2f);
        for (size_t i = 0; i < st.size(); ++i) {
            const Vec3f d = st.positions[i] - centre;
            st.velocities[i] = 1.5f * Vec3f(-d.z(), 0.0f, d.x());
        }
        const double seconds = 3.0, window = 0.5; // 10 s in the issue; 3 s fit the test budget
        std::vector<double> means;
        double sum = 0.0;
        int samples = 0;
        while (sim.time() < seconds) {
            sim.step();
            sum += kineticEnergy(sim);
            ++samples;
            if (sim.time() >= window * double(means.size() + 1)) {
                means.push_back(sum / samples);
                sum = 0.0;
                samples = 0;
            }
        }
        QString text;
        for (double e : means)
            text += QString(" %1").arg(e, 0, 'g', 3);
        qInfo("stirred tank, eps 0.5: mean kinetic energy per 0.5 s window (J):%s", qPrintable(text));
        QCOMPARE(sim.nonFiniteCount(), size_t(0));
        QVERIFY(means.size() >= 5);
        // Each window loses energy until the tank is at rest: below 0.1 % of the first window the
        // water's noise floor (3.6e-4 J, then 3.7e-4 J, measured) is not a spin-up.
        for (size_t k = 1; k < means.size(); ++k)
            QVERIFY2(means[k] < means[k - 1] || means[k] < 1e-3 * means.front(),
                     qPrintable(QString("window %1 gained energy").arg(k)));
        QVERIFY2(means.back() < 0.5 * means.front(), "the swirl must decay");
    }
};

QTEST_GUILESS_MAIN(TestVorticity)
#include "test_vorticity.moc"
