// Surface tension after Akinci, Akinci & Teschner 2013 (SurfaceTension_Akinci2013): the kernels
// of the paper, a cube of water in zero gravity that rounds off into a drop with tension on and
// stays a cube without it, conserving momentum (the pair forces are antisymmetric), and a drop
// that stays at rest for seconds: no spin-up, no energy from nothing.
#include "sph/BoundaryModel.h"
#include "sph/SphSolver.h"
#include "sph/SurfaceTension_Akinci2013.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <numbers>

using namespace octo;

namespace {

struct DropletResult {
    double ratio = 0.0; // max / min distance of surface particles from the centroid
    double momentum = 0.0, momentumScale = 0.0;
    double angularMomentum = 0.0, kineticEnergy = 0.0, radiusOfGyration = 0.0; // about the centroid
    size_t nonFinite = 0, particles = 0, surface = 0;
};

/// A cube of n^3 particles (radius r) in zero gravity, no walls, simulated for `seconds`.
DropletResult simulateCube(int n, float r, float gamma, double seconds) {
    SphSolver::Config c;
    c.particleRadius = r;
    c.gravity = Vec3f::Zero();
    c.soundSpeed = 1.0f; // what Simulation derives for zero gravity (c = max(1, 10 sqrt(2 g H)))
    // Tension alone: with the table's default velocity filter (0.8, now the Config's default too)
    // the cube had only rounded to a max/min radius ratio of 1.35 by the time it reaches 1.15
    // without it; the filter damps this resolved flow (noted in the issue 26 closing note).
    c.velocityFilter = 0.0f;
    c.surfaceTension = gamma;
    BoundaryModel boundary;
    SphSolver solver(c, boundary);
    std::vector<Vec3f> x;
    const float d0 = 2.0f * r;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < n; ++k)
                x.emplace_back(d0 * (Vec3f(float(i), float(j), float(k)) + Vec3f::Constant(0.5f)));
    solver.setParticles(x);
    while (solver.time() < seconds)
        solver.step();

    const FluidState& s = solver.state();
    DropletResult res;
    res.particles = s.size();
    Vec3d centroid = Vec3d::Zero(), p = Vec3d::Zero();
    for (size_t i = 0; i < s.size(); ++i) {
        if (!s.positions[i].allFinite() || !s.velocities[i].allFinite())
            ++res.nonFinite;
        centroid += s.positions[i].cast<double>();
        p += s.velocities[i].cast<double>();
        res.momentumScale += s.velocities[i].cast<double>().norm();
    }
    centroid /= double(s.size());
    res.momentum = solver.mass() * p.norm();
    res.momentumScale *= solver.mass();
    Vec3d L = Vec3d::Zero();
    for (size_t i = 0; i < s.size(); ++i) {
        const Vec3d d = s.positions[i].cast<double>() - centroid, v = s.velocities[i].cast<double>();
        L += d.cross(v);
        res.kineticEnergy += 0.5 * v.squaredNorm();
        res.radiusOfGyration += d.squaredNorm();
    }
    res.angularMomentum = solver.mass() * L.norm();
    res.kineticEnergy *= solver.mass();
    res.radiusOfGyration = std::sqrt(res.radiusOfGyration / double(s.size()));
    // Surface particles: clearly fewer neighbours within h than the fullest neighbourhood.
    const float h2 = solver.supportRadius() * solver.supportRadius();
    std::vector<int> count(s.size(), 0);
    for (size_t i = 0; i < s.size(); ++i)
        for (size_t j = i + 1; j < s.size(); ++j)
            if ((s.positions[i] - s.positions[j]).squaredNorm() < h2) {
                ++count[i];
                ++count[j];
            }
    const int full = *std::max_element(count.begin(), count.end());
    double dMin = 1e30, dMax = 0.0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (count[i] >= int(0.7 * full))
            continue;
        ++res.surface;
        const double d = (s.positions[i].cast<double>() - centroid).norm();
        dMin = std::min(dMin, d);
        dMax = std::max(dMax, d);
    }
    res.ratio = dMax / dMin;
    return res;
}

} // namespace

class TestSurfaceTension : public QObject {
    Q_OBJECT
private slots:
    void kernelsFollowThePaper() {
        const float h = 0.04f;
        const float pi = std::numbers::pi_v<float>;
        // C: repulsive core, attractive from h/2 on, zero at h; continuous at h/2.
        QVERIFY(SurfaceTension_Akinci2013::cohesionKernel(0.1f * h, h) < 0.0f);
        QVERIFY(SurfaceTension_Akinci2013::cohesionKernel(0.75f * h, h) > 0.0f);
        QCOMPARE(SurfaceTension_Akinci2013::cohesionKernel(h, h), 0.0f);
        const float below = SurfaceTension_Akinci2013::cohesionKernel(0.5f * h - 1e-6f, h);
        const float above = SurfaceTension_Akinci2013::cohesionKernel(0.5f * h + 1e-6f, h);
        QVERIFY2(std::abs(below - above) < 1e-3f * std::abs(above),
                 qPrintable(QString("%1 %2").arg(below).arg(above)));
        // Value at 3h/4: 32/(pi h^9) (h/4)^3 (3h/4)^3.
        const float expect =
            32.0f / (pi * std::pow(h, 9.0f)) * std::pow(0.25f * h, 3.0f) * std::pow(0.75f * h, 3.0f);
        QVERIFY(std::abs(SurfaceTension_Akinci2013::cohesionKernel(0.75f * h, h) - expect) < 1e-4f * expect);
        // A: zero up to h/2 and at h, peak 0.007/h^3.25 (h/4)^(1/4) at 3h/4.
        QCOMPARE(SurfaceTension_Akinci2013::adhesionKernel(0.4f * h, h), 0.0f);
        QCOMPARE(SurfaceTension_Akinci2013::adhesionKernel(h, h), 0.0f);
        const float peak = 0.007f / std::pow(h, 3.25f) * std::pow(0.25f * h, 0.25f);
        QVERIFY(std::abs(SurfaceTension_Akinci2013::adhesionKernel(0.75f * h, h) - peak) < 1e-4f * peak);
        // The tables match the analytic kernels.
        const SurfaceTension_Akinci2013 st(h);
        float worstC = 0.0f, worstA = 0.0f;
        const float cScale = std::abs(SurfaceTension_Akinci2013::cohesionKernel(0.75f * h, h)) / (0.75f * h);
        for (int i = 200; i < 1000; ++i) { // PCISPH keeps pairs beyond h/5
            const float r = h * float(i) / 1000.0f;
            worstC = std::max(worstC, std::abs(st.cohesionOverR(r * r) -
                                               SurfaceTension_Akinci2013::cohesionKernel(r, h) / r));
            worstA = std::max(worstA, std::abs(st.adhesionOverR(r * r) -
                                               SurfaceTension_Akinci2013::adhesionKernel(r, h) / r));
        }
        qInfo("table errors: C/r %.3g (scale %.3g), A/r %.3g (peak %.3g)", worstC, cScale, worstA,
              peak / (0.75f * h));
        QVERIFY(worstC < 0.02f * cScale);
        QVERIFY(worstA < 0.05f * peak / (0.75f * h));
        QCOMPARE(st.cohesionOverR(1.01f * h * h), 0.0f);
    }

    void cubeRoundsIntoADrop() {
        const int n = 15;
        const float r = 0.005f;
        const DropletResult on = simulateCube(n, r, 2.0f, 1.0);
        qInfo("tension on: %zu particles, %zu on the surface, max/min distance %.3f, |P| %.3g (scale %.3g)",
              on.particles, on.surface, on.ratio, on.momentum, on.momentumScale);
        const DropletResult off = simulateCube(n, r, 0.0f, 1.0);
        qInfo("tension off: %zu on the surface, max/min distance %.3f, |P| %.3g", off.surface, off.ratio,
              off.momentum);
        for (const DropletResult* d : {&on, &off}) {
            QCOMPARE(d->particles, size_t(n * n * n));
            QCOMPARE(d->nonFinite, size_t(0));
            QVERIFY(d->surface > size_t(n * n));
        }
        QVERIFY2(on.ratio <= 1.15, qPrintable(QString("tension on: ratio %1").arg(on.ratio)));
        QVERIFY2(off.ratio > 1.4, qPrintable(QString("tension off: ratio %1").arg(off.ratio)));
        // Antisymmetric pair forces: no net momentum from nothing (float round-off only).
        QVERIFY2(on.momentum < 1e-3 * on.momentumScale + 1e-9,
                 qPrintable(QString("|P| %1 vs sum m|v| %2").arg(on.momentum).arg(on.momentumScale)));
    }

    void dropStaysAtRest() {
        // 1000 particles (r = 6 mm) in zero gravity with gamma = 2 (the 'droplets' scene's), 3.5 s.
        // With cohesion along the current separation and PCISPH's pressure along the predicted
        // one, the two balancing forces left a torque ~ dt p omega: the drop spun up from round-off
        // to ~10 rad/s, its kinetic energy went 0.004 -> 0.53 J and it burst (radius of gyration
        // 0.074 m). Both along the predicted separation: KE 2.6e-4 J, 0.07 rad/s, 0.0568 m.
        const int n = 10;
        const float r = 0.006f;
        const double massScale = 1000.0 * std::pow(2.0 * r * n, 3.0); // kg
        const DropletResult drop = simulateCube(n, r, 2.0f, 3.5);
        qInfo("drop after 3.5 s: KE %.3g J, |L| %.3g kg m^2/s, radius of gyration %.4f m", drop.kineticEnergy,
              drop.angularMomentum, drop.radiusOfGyration);
        QCOMPARE(drop.nonFinite, size_t(0));
        QVERIFY2(drop.kineticEnergy < 0.01, qPrintable(QString("KE %1 J").arg(drop.kineticEnergy)));
        // |L| against what a rigid spin of 1 rad/s would carry (M rg^2).
        const double spin =
            drop.angularMomentum / (massScale * drop.radiusOfGyration * drop.radiusOfGyration);
        QVERIFY2(spin < 1.0, qPrintable(QString("spin %1 rad/s").arg(spin)));
        // Still one round drop: the cube's radius of gyration is 0.0566 m.
        QVERIFY2(drop.radiusOfGyration < 0.062,
                 qPrintable(QString("radius of gyration %1 m").arg(drop.radiusOfGyration)));
    }
};

QTEST_GUILESS_MAIN(TestSurfaceTension)
#include "test_surface_tension.moc"
