// The bi-Laplacian velocity filter (VelocityFilter.h): it leaves uniform and linear velocity
// fields alone in any neighbourhood (inside, at a wall, under the free surface, in a disordered
// packing) and spray below 0.7 rho0; it takes most of a particle-scale zig-zag out in one
// application, conserves linear and angular momentum, never adds kinetic energy (also for
// particles squeezed far closer than at rest), damps a resolved flow by the same amount per second
// at any time step, and a resting column of water with it is quieter than with the artificial
// viscosity alone.
#include "spatial/KernelTable.h"
#include "sph/BoundaryModel.h"
#include "sph/SphSolver.h"
#include "sph/VelocityFilter.h"

#include <QtTest>
#include <cmath>
#include <random>

using namespace octo;

namespace {

constexpr float kR = 0.01f, kD0 = 2.0f * kR, kH = 4.0f * kR;

/// Particles with brute-force neighbour lists (|x_ij| < h, j != i).
struct Cloud {
    std::vector<Vec3f> x, v;
    std::vector<std::vector<uint32_t>> nbr;
    void link() {
        nbr.assign(x.size(), {});
        for (uint32_t i = 0; i < x.size(); ++i)
            for (uint32_t j = 0; j < x.size(); ++j)
                if (i != j && (x[i] - x[j]).squaredNorm() < kH * kH)
                    nbr[i].push_back(j);
    }
    std::vector<float> relativeDensity; // rho / rho0 per particle; empty: all inside the fluid
    /// One step of dt; by default the reference step, where eps is the strength of the step.
    void filter(float eps, float dt = VelocityFilter::kReferenceStep) {
        const KernelTable kernel(kH);
        const float v0 = kD0 * kD0 * kD0; // m / rho0 on the rest lattice
        f.setLinearExact(linearExact);
        f.setRate(rate);
        f.apply(
            eps, dt, v, x, v0, kernel, [&](uint32_t i) { return std::span<const uint32_t>(nbr[i]); },
            [&](uint32_t i) { return relativeDensity.empty() ? 1.0f : relativeDensity[i]; });
    }
    VelocityFilter f;
    bool linearExact = false; // the filter's operator: XSPH's (default) or the linear-exact one
    bool rate = false;        // strength per step (default) or per kReferenceStep of flow
    /// Particles at least `margin` lattice spacings inside an n^3 lattice block (by the lattice
    /// site a particle was placed at, so jittered blocks select the same particles).
    bool inner(size_t i, int n, int margin) const {
        for (int a = 0; a < 3; ++a) {
            const long c = std::lround(x[i][a] / kD0);
            if (c < margin || c > n - 1 - margin)
                return false;
        }
        return true;
    }
};

/// An n^3 block on the rest lattice; with jitter > 0 every particle moved by up to jitter * d0
/// along each axis (a disordered packing like the fluid's after it has settled).
Cloud lattice(int n, float jitter = 0.0f) {
    Cloud c;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-jitter, jitter);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < n; ++k)
                c.x.emplace_back(kD0 * (Vec3f(float(i), float(j), float(k)) + Vec3f(u(rng), u(rng), u(rng))));
    c.v.assign(c.x.size(), Vec3f::Zero());
    c.link();
    return c;
}

Vec3d momentum(const Cloud& c) {
    Vec3d p = Vec3d::Zero();
    for (const Vec3f& v : c.v)
        p += v.cast<double>();
    return p;
}

Vec3d angularMomentum(const Cloud& c) {
    Vec3d l = Vec3d::Zero();
    for (size_t i = 0; i < c.x.size(); ++i)
        l += c.x[i].cast<double>().cross(c.v[i].cast<double>());
    return l;
}

double kinetic(const Cloud& c) {
    double e = 0.0;
    for (const Vec3f& v : c.v)
        e += 0.5 * double(v.squaredNorm());
    return e;
}

} // namespace

/// A linear shear and, on the same particles, a particle-scale zig-zag of 0.1 m/s along y, each
/// filtered once at eps 0.8 on a 15^3 block (jittered by `jitter` d0): how much the shear changed
/// where the neighbourhood is full (2h in) and at the block's faces (cut as at a wall or under the
/// free surface), and the zig-zag's remaining fraction inside.
struct ShearAfterFilter {
    float worst = 0.0f, worstFace = 0.0f; // m/s
    double zigzag = 0.0;
    int inside = 0;
    static constexpr float acrossH = 2.0f * kH; // the shear's change across one kernel radius
};
ShearAfterFilter filterShearAndZigZag(float jitter, bool linearExact) {
    Cloud c = lattice(15, jitter);
    c.linearExact = linearExact;
    const Vec3f u(0.3f, -0.2f, 0.1f);
    auto shear = [&](const Vec3f& x) -> Vec3f { return u + Vec3f(2.0f * x.y(), 0.0f, -1.0f * x.x()); };
    for (size_t i = 0; i < c.x.size(); ++i)
        c.v[i] = shear(c.x[i]);
    c.filter(0.8f);
    Cloud z = c; // the same positions and neighbours
    for (size_t i = 0; i < z.x.size(); ++i) {
        const long ix = std::lround(z.x[i].x() / kD0), iz = std::lround(z.x[i].z() / kD0);
        z.v[i] = Vec3f(0.0f, ((ix + iz) % 2) ? -0.1f : 0.1f, 0.0f);
    }
    z.filter(0.8f);
    ShearAfterFilter r;
    for (size_t i = 0; i < c.x.size(); ++i) {
        const float change = (c.v[i] - shear(c.x[i])).norm();
        if (c.inner(i, 15, 4)) { // 2h in: L(L(v)) reads no truncated neighbourhood
            r.worst = std::max(r.worst, change);
            r.zigzag += std::abs(z.v[i].y()) / 0.1;
            ++r.inside;
        } else {
            r.worstFace = std::max(r.worstFace, change);
        }
    }
    r.zigzag /= r.inside;
    return r;
}

class TestVelocityFilter : public QObject {
    Q_OBJECT
private slots:
    void uniformFieldsUntouchedEverywhere() {
        // L(v) of a uniform field vanishes term by term (v_j - v_i = 0), whatever the
        // neighbourhood: at the block's faces, edges and corners as inside, ordered or not.
        for (const bool exact : {false, true})
            for (const float jitter : {0.0f, 0.15f}) {
                Cloud c = lattice(11, jitter);
                c.linearExact = exact;
                const Vec3f u(0.3f, -0.2f, 0.1f);
                c.v.assign(c.x.size(), u);
                c.filter(0.8f);
                float worst = 0.0f;
                for (const Vec3f& v : c.v)
                    worst = std::max(worst, (v - u).norm());
                qInfo("uniform field, %s, jitter %.2f d0: largest change %.2e m/s of %.2f",
                      exact ? "linear-exact" : "XSPH", double(jitter), double(worst), double(u.norm()));
                QVERIFY(worst < 1e-6f);
            }
    }

    void linearFieldsUntouchedInsideTheFluid_data() {
        // Bounds as fractions of the shear's change across h (0.08 m/s), inside (2h from the
        // block's faces) and at the faces. The rest lattice's interior keeps the former 1e-5 m/s
        // (measured 1e-9: exact up to rounding). In a disordered packing the filter bends a linear
        // field a little (measured 2.6 % inside, 4.5 % at the faces, fixed seed) while it takes 60 %
        // of the zig-zag out of the same particles; faces measured 1.1 % on the lattice. Bounds at
        // about 1.5x the measurements.
        QTest::addColumn<float>("jitter");
        QTest::addColumn<float>("insideBound");
        QTest::addColumn<float>("faceBound");
        QTest::newRow("rest lattice: untouched") << 0.0f << 1.25e-4f << 0.017f;
        QTest::newRow("disordered, jitter 0.15 d0: within 4 %") << 0.15f << 0.04f << 0.07f;
    }
    void linearFieldsUntouchedInsideTheFluid() {
        // A uniform shear is resolved flow at the particle scale: the filter must leave it alone
        // where a particle's neighbourhood is full, including in a disordered packing, where the
        // bi-Laplacian of a linear field no longer vanishes term by term (on the rest lattice it
        // does by symmetry, so that case alone would only show where the filter does nothing).
        // The same particles' particle-scale zig-zag must be damped at the same time: the filter
        // is active exactly where the shear is left alone.
        QFETCH(float, jitter);
        QFETCH(float, insideBound);
        QFETCH(float, faceBound);
        const ShearAfterFilter r = filterShearAndZigZag(jitter, false);
        const float acrossH = ShearAfterFilter::acrossH;
        const float worst = r.worst, worstFace = r.worstFace;
        const double zigzag = r.zigzag;
        const int n = r.inside;
        qInfo("jitter %.2f d0, %d particles with a full neighbourhood: shear changed by at most %.2e m/s "
              "(%.2e of its change across h), zig-zag left at %.3f; at the block's faces %.2e m/s",
              double(jitter), n, double(worst), double(worst / acrossH), zigzag, double(worstFace));
        QVERIFY(zigzag < 0.5);
        QVERIFY2(worst < insideBound * acrossH, qPrintable(QString("shear changed by %1 m/s").arg(worst)));
        QVERIFY2(worstFace < faceBound * acrossH, qPrintable(QString("faces: %1 m/s").arg(worstFace)));
    }

    void linearExactLeavesLinearFieldsEverywhere_data() {
        // Bounds as fractions of the shear's change across h (0.08 m/s), inside and at the faces.
        // XSPH's operator (above): 1e-9 inside the rest lattice (exact by symmetry) but 1.1 % at its
        // faces, 2.6 % inside and 4.5 % at the faces of the disordered packing. Linear-exact: up to
        // rounding everywhere, measured 1.3e-9 (lattice) and 2.9e-9 (disordered).
        QTest::addColumn<float>("jitter");
        QTest::addColumn<float>("bound");
        QTest::newRow("rest lattice") << 0.0f << 1e-6f;
        QTest::newRow("disordered, jitter 0.15 d0") << 0.15f << 1e-6f;
    }
    void linearExactLeavesLinearFieldsEverywhere() {
        // The linear-exact operator (setLinearExact) leaves the shear of the test above alone in
        // any neighbourhood, the block's faces included, where a neighbourhood is cut as at a wall
        // or under the free surface; the same particles' zig-zag is still damped.
        QFETCH(float, jitter);
        QFETCH(float, bound);
        const ShearAfterFilter r = filterShearAndZigZag(jitter, true);
        const float acrossH = ShearAfterFilter::acrossH;
        const float worst = r.worst, worstFace = r.worstFace;
        const double zigzag = r.zigzag;
        const int n = r.inside;
        qInfo("jitter %.2f d0, %d particles with a full neighbourhood: shear changed by at most %.2e m/s "
              "(%.2e of its change across h), zig-zag left at %.3f; at the block's faces %.2e m/s (%.2e)",
              double(jitter), n, double(worst), double(worst / acrossH), zigzag, double(worstFace),
              double(worstFace / acrossH));
        QVERIFY(zigzag < 0.5);
        QVERIFY2(worst < bound * acrossH, qPrintable(QString("shear changed by %1 m/s").arg(worst)));
        QVERIFY2(worstFace < bound * acrossH, qPrintable(QString("faces: %1 m/s").arg(worstFace)));
    }

    void shearAtAWallAndUnderTheFreeSurface() {
        // Issue 26: XSPH's operator changed a linear shear by 1.8 % per step in the two layers at a
        // wall or at the free surface, where a neighbourhood is one-sided (the filter sums no
        // boundary). A slab 15 x 12 x 15 spacings sheared along x: v_x = s y with s = 2 /s, its
        // floor a wall (the walls' share counts in the density: rho0, filtered fully) and its top
        // a flat free surface (the layer under it 0.87 rho0, the next 0.97: filtered), one step
        // at the default strength. Relative to the shear's change across h (s h = 0.08 m/s).
        const float s = 2.0f, acrossH = s * kH;
        auto change = [&](bool exact) {
            Cloud c;
            for (int i = 0; i < 15; ++i)
                for (int j = 0; j < 12; ++j)
                    for (int k = 0; k < 15; ++k)
                        c.x.emplace_back(kD0 * Vec3f(float(i), float(j), float(k)));
            c.link();
            c.linearExact = exact;
            c.relativeDensity.assign(c.x.size(), 1.0f);
            for (size_t i = 0; i < c.x.size(); ++i) {
                const long layer = std::lround(c.x[i].y() / kD0);
                c.relativeDensity[i] = layer == 11 ? 0.87f : layer == 10 ? 0.97f : 1.0f;
                c.v.push_back(Vec3f(s * c.x[i].y(), 0.0f, 0.0f));
            }
            const std::vector<Vec3f> before = c.v;
            c.filter(0.8f);
            float wall = 0.0f, surface = 0.0f;
            for (size_t i = 0; i < c.x.size(); ++i) {
                const long layer = std::lround(c.x[i].y() / kD0);
                const long ix = std::lround(c.x[i].x() / kD0), iz = std::lround(c.x[i].z() / kD0);
                if (ix < 4 || ix > 10 || iz < 4 || iz > 10) // away from the slab's sides
                    continue;
                const float relative = (c.v[i] - before[i]).norm() / acrossH;
                if (layer <= 1)
                    wall = std::max(wall, relative);
                else if (layer >= 10)
                    surface = std::max(surface, relative);
            }
            return std::pair(wall, surface);
        };
        const auto [xsphWall, xsphSurface] = change(false);
        const auto [exactWall, exactSurface] = change(true);
        qInfo("linear shear, one step at eps 0.8, largest change in the two layers at the wall and under the "
              "free surface, of s h: XSPH's operator %.2e, %.2e; linear-exact %.2e, %.2e",
              double(xsphWall), double(xsphSurface), double(exactWall), double(exactSurface));
        // Measured: XSPH's operator (the default) 0.9 % at both, a drag on the boundary layers that
        // the resting columns rely on (docs/SCENES.md); linear-exact 1.8e-9 and 0.
        QVERIFY(xsphWall > 0.005f && xsphSurface > 0.005f);
        QVERIFY(xsphWall < 0.012f && xsphSurface < 0.012f);
        QVERIFY2(exactWall < 1e-6f, qPrintable(QString("wall: %1").arg(exactWall)));
        QVERIFY2(exactSurface < 1e-6f, qPrintable(QString("surface: %1").arg(exactSurface)));
    }

    void particleScaleZigZagDamped() {
        // The sc lattice's unstable mode: columns sliding alternately along y, k = (pi, 0, pi) / d0.
        Cloud c = lattice(11);
        for (size_t i = 0; i < c.x.size(); ++i) {
            const int ix = int(std::lround(c.x[i].x() / kD0)), iz = int(std::lround(c.x[i].z() / kD0));
            c.v[i] = Vec3f(0.0f, ((ix + iz) % 2) ? -0.1f : 0.1f, 0.0f);
        }
        c.filter(0.8f);
        double ratio = 0.0;
        int n = 0;
        for (size_t i = 0; i < c.x.size(); ++i)
            if (c.inner(i, 11, 4)) {
                ratio += std::abs(c.v[i].y()) / 0.1;
                ++n;
            }
        ratio /= n;
        qInfo("zig-zag amplitude after one filter: %.3f of before", ratio);
        QVERIFY(ratio < 0.5);
    }

    void freeSurfaceLeftAlone() {
        // Surface tension moves spray and the rims of drops and sheets at the particle scale: a
        // particle below 0.7 rho0 keeps its velocity, and its neighbours do not feel it.
        Cloud c = lattice(11);
        c.relativeDensity.assign(c.x.size(), 1.0f);
        for (size_t i = 0; i < c.x.size(); ++i) {
            const bool top = std::lround(c.x[i].y() / kD0) == 10;
            c.v[i] = top ? Vec3f(0.2f * float((i % 2) * 2) - 0.2f, 0.0f, 0.0f) : Vec3f::Zero();
            if (top)
                c.relativeDensity[i] = 0.65f;
        }
        const std::vector<Vec3f> before = c.v;
        c.filter(0.8f);
        float changed = 0.0f;
        for (size_t i = 0; i < c.x.size(); ++i)
            changed = std::max(changed, (c.v[i] - before[i]).norm());
        QCOMPARE(changed, 0.0f);
    }

    void flatSurfaceLayerFiltered() {
        // The layer under a flat free surface has 0.86-0.88 rho0 (its kernel is cut by the
        // surface). Its particle-scale noise is filtered: left alone, the particles where a
        // resting column's surface meets a wall kept bobbing at 0.04-0.07 m/s (r = 12 mm).
        for (const bool exact : {false, true}) {
            Cloud c = lattice(11);
            c.linearExact = exact;
            c.relativeDensity.assign(c.x.size(), 1.0f);
            double before = 0.0;
            for (size_t i = 0; i < c.x.size(); ++i) {
                if (std::lround(c.x[i].y() / kD0) != 10)
                    continue;
                c.relativeDensity[i] = 0.87f;
                c.v[i] = Vec3f(i % 2 ? 0.1f : -0.1f, 0.0f, 0.0f);
                before += c.v[i].norm();
            }
            c.filter(0.8f);
            double after = 0.0;
            for (size_t i = 0; i < c.x.size(); ++i)
                if (std::lround(c.x[i].y() / kD0) == 10)
                    after += c.v[i].norm();
            qInfo("surface layer's zig-zag after one filter (%s): %.3f of before",
                  exact ? "linear-exact" : "XSPH", after / before);
            // Measured 0.575 with XSPH's operator, 0.687 linear-exact: with the layer above missing,
            // part of the layer's motion against the one below reads as a vertical gradient.
            QVERIFY(after < 0.7 * before);
        }
    }

    void momentumKeptEnergyNeverGained_data() {
        QTest::addColumn<float>("squeeze");
        QTest::addColumn<bool>("exact");
        for (const bool exact : {false, true}) {
            const char* op = exact ? ", linear-exact" : ", XSPH";
            QTest::newRow(qPrintable(QString("rest spacing%1").arg(op))) << 1.0f << exact;
            // far denser than any step commits
            QTest::newRow(qPrintable(QString("squeezed to 0.6 d0%1").arg(op))) << 0.6f << exact;
            QTest::newRow(qPrintable(QString("squeezed to 0.3 d0%1").arg(op))) << 0.3f << exact;
        }
    }
    void momentumKeptEnergyNeverGained() {
        QFETCH(float, squeeze);
        QFETCH(bool, exact);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        Cloud c;
        for (int i = 0; i < 600; ++i)
            c.x.push_back(squeeze * kD0 * 4.0f * Vec3f(u(rng), u(rng), u(rng)));
        for (size_t i = 0; i < c.x.size(); ++i)
            c.v.push_back(Vec3f(u(rng), u(rng), u(rng)));
        c.link();
        c.linearExact = exact;
        const Vec3d p0 = momentum(c), l0 = angularMomentum(c);
        const double e0 = kinetic(c);
        double lScale = 0.0; // sum_i |x_i| |v_i|: what a drift of L is measured against
        for (size_t i = 0; i < c.x.size(); ++i)
            lScale += double(c.x[i].norm() * c.v[i].norm());
        double maxGain = 0.0;
        for (int pass = 0; pass < 20; ++pass) {
            const double e = kinetic(c);
            c.filter(VelocityFilter::kMaxStrength);
            maxGain = std::max(maxGain, kinetic(c) - e);
        }
        const double dp = (momentum(c) - p0).norm(), dl = (angularMomentum(c) - l0).norm();
        qInfo("squeeze %.1f: kinetic energy %.3f -> %.3f, largest gain of a pass %.2e, momentum drift %.2e, "
              "angular momentum drift %.2e of sum |x| |v|",
              squeeze, e0, kinetic(c), maxGain, dp, dl / lScale);
        QVERIFY(dp < 1e-3 * std::sqrt(2.0 * e0));
        // Linear-exact: -L is symmetric and every linear field (rigid rotations too) is in its null
        // space, so the filter's change is orthogonal to them: no torque. (XSPH's operator damps a
        // rigid rotation where a neighbourhood is one-sided.)
        if (exact)
            QVERIFY(dl < 1e-4 * lScale);
        QVERIFY(maxGain <= 1e-6 * e0);
        QVERIFY(kinetic(c) < e0);
    }

    void rateDampsPerSecondNotPerStep() {
        // A shear wave v_x = U sin(2 pi y / lambda), lambda = 6 d0 = 3h (resolved, but curved at the
        // kernel scale, so the filter acts on it), in a disordered block, filtered for the same
        // 0.06 s of flow at 1 ms and at 3 ms steps (the particles held still: the filter alone).
        // As a rate (setRate) the energy it loses does not depend on the step; per step (the
        // default, issue 26) 1 ms steps damp more.
        auto energyLost = [](float dt, bool perStep) {
            Cloud c = lattice(15, 0.15f);
            c.rate = !perStep;
            for (size_t i = 0; i < c.x.size(); ++i)
                c.v[i] = Vec3f(0.1f * std::sin(2.0f * float(M_PI) * c.x[i].y() / (6.0f * kD0)), 0.0f, 0.0f);
            const double e0 = kinetic(c);
            const int steps = int(std::lround(0.06 / double(dt)));
            for (int k = 0; k < steps; ++k)
                c.filter(0.8f, dt);
            return 1.0 - kinetic(c) / e0;
        };
        const double fine = energyLost(1e-3f, false), coarse = energyLost(3e-3f, false);
        const double oldFine = energyLost(1e-3f, true), oldCoarse = energyLost(3e-3f, true);
        qInfo(
            "shear wave, energy lost in 0.06 s as a rate: %.4f at 1 ms steps, %.4f at 3 ms (ratio %.3f); per "
            "step: %.4f, %.4f (ratio %.3f)",
            fine, coarse, fine / coarse, oldFine, oldCoarse, oldFine / oldCoarse);
        QVERIFY(coarse > 0.05); // the filter does act on this wave
        QVERIFY2(std::abs(fine / coarse - 1.0) < 0.05, qPrintable(QString("ratio %1").arg(fine / coarse)));
        QVERIFY(oldFine / oldCoarse > 1.5); // what the per-step strength did
    }

    void restingColumnQuieter() {
        // 0.2 m of water at r = 6.25 mm in a 10 x 10 column: the solver alone, with and without the
        // filter (the resting tank of test_rest_resolutions, smaller and without Simulation).
        auto maxSpeedAfter = [](float eps) {
            const float r = 0.00625f, d0 = 2.0f * r;
            const int n = 10, layers = 16;
            const Aabb box(Vec3f::Zero(), Vec3f(n * d0, 0.4f, n * d0));
            BoundaryModel boundary;
            SphSolver::Config c;
            c.particleRadius = r;
            c.velocityFilter = eps;
            c.soundSpeed = 10.0f * std::sqrt(2.0f * 9.81f * layers * d0);
            c.domain = box;
            SphSolver solver(c, boundary);
            boundary.setWall(
                boundary.addObject(sampleBoxWalls(box, d0, 2), true, planarWallPsiScale(4.0f * r, d0, 2)));
            std::vector<Vec3f> x;
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < layers; ++j)
                    for (int k = 0; k < n; ++k)
                        x.emplace_back(d0 * (Vec3f(float(i), float(j), float(k)) + Vec3f::Constant(0.5f)));
            solver.setParticles(x);
            float late = 0.0f;
            while (solver.time() < 0.5) {
                solver.step();
                if (solver.time() > 0.4)
                    late = std::max(late, solver.maxSpeed());
            }
            return late;
        };
        const float without = maxSpeedAfter(0.0f), with = maxSpeedAfter(0.8f);
        qInfo("resting column, max speed over 0.4-0.5 s: %.4f m/s without the filter, %.4f with",
              double(without), double(with));
        // Measured: 0.088 -> 0.020 m/s (0.127 -> 0.052 before the solver changes of issue 26's
        // round; as a rate 0.019, linear-exact 0.034).
        QVERIFY(with < 0.08f);
        QVERIFY(with < 0.6f * without);
    }
};

QTEST_APPLESS_MAIN(TestVelocityFilter)
#include "test_velocity_filter.moc"
