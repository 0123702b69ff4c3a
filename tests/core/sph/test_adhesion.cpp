// Adhesion after Akinci, Akinci & Teschner 2013 (SurfaceTension_Akinci2013): a thin layer of
// water on a vertical wall stays on the wall longer with adhesion; the adhesion reaction goes
// into a free body, so fluid + body momentum is conserved in zero gravity.
#include "sph/BoundaryModel.h"
#include "sph/SphSolver.h"

#include <QtTest>
#include <cmath>

using namespace octo;

namespace {

SphSolver::Config config(float r, const Vec3f& gravity, float adhesion) {
    SphSolver::Config c;
    c.particleRadius = r;
    c.gravity = gravity;
    c.adhesion = adhesion;
    return c;
}

/// Fraction of a 2-particle-thick layer on the wall x = 0 whose centres are within `reach` of
/// the wall after `seconds`.
double layerOnWall(float beta, double seconds, float reach) {
    const float r = 0.01f, d0 = 2.0f * r;
    const Aabb box(Vec3f::Zero(), Vec3f(0.3f, 0.8f, 0.2f));
    BoundaryModel boundary;
    SphSolver::Config c = config(r, Vec3f(0.0f, -9.81f, 0.0f), beta);
    c.domain = box;
    c.containment = box.enlarged(0.5f * r);
    c.soundSpeed = 10.0f * std::sqrt(2.0f * 9.81f * 0.8f);
    SphSolver solver(c, boundary);
    boundary.setWall(
        boundary.addObject(sampleBoxWalls(box, d0, 2), true, planarWallPsiScale(4.0f * r, d0, 2)));
    std::vector<Vec3f> x;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 15; ++j)
            for (int k = 0; k < 10; ++k)
                x.emplace_back(r + d0 * float(i), 0.45f + d0 * float(j), r + d0 * float(k));
    solver.setParticles(x);
    while (solver.time() < seconds)
        solver.step();
    size_t near = 0;
    for (const Vec3f& p : solver.state().positions)
        near += p.x() < reach ? 1 : 0;
    return double(near) / double(solver.particleCount());
}

/// Points on the faces of a cube of edge `a` centred at the origin, spacing ~d.
std::vector<Vec3f> cubeShell(float a, float d) {
    const int n = std::max(1, int(std::lround(a / d)));
    std::vector<Vec3f> pts;
    for (int i = 0; i <= n; ++i)
        for (int j = 0; j <= n; ++j)
            for (int k = 0; k <= n; ++k)
                if (i == 0 || j == 0 || k == 0 || i == n || j == n || k == n)
                    pts.emplace_back(
                        a * (Vec3f(float(i), float(j), float(k)) / float(n) - Vec3f::Constant(0.5f)));
    return pts;
}

struct TwoWay {
    double maxBodyPx = 0.0, minFluidPx = 0.0, maxBodyP = 0.0; // N s, over the run
    double maxImbalance = 0.0;                                // max |P_fluid + P_body| over the run
};

/// Zero gravity, no walls: a block of fluid just out of contact (gap 0.7 h) beside a light
/// free cube (translation only, integrated here from the boundary's object force).
TwoWay blockAndBody(float beta, double seconds) {
    const float r = 0.01f, d0 = 2.0f * r, h = 4.0f * r, edge = 0.12f;
    BoundaryModel boundary;
    SphSolver::Config c = config(r, Vec3f::Zero(), beta);
    c.soundSpeed = 1.0f;
    SphSolver solver(c, boundary);
    const int body = boundary.addObject(cubeShell(edge, d0), false, planarWallPsiScale(h, d0, 1));
    const float bodyMass = 0.3f * 1000.0f * edge * edge * edge;
    Vec3f bodyPos = Vec3f::Zero(), bodyVel = Vec3f::Zero();
    boundary.setObjectTransform(body, Mat3f::Identity(), bodyPos, bodyVel);
    std::vector<Vec3f> x;
    const float x0 = 0.5f * edge + 0.7f * h;
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 8; ++j)
            for (int k = 0; k < 8; ++k)
                x.emplace_back(x0 + d0 * float(i), d0 * (float(j) - 3.5f), d0 * (float(k) - 3.5f));
    solver.setParticles(x);
    TwoWay res;
    while (solver.time() < seconds) {
        solver.step();
        const float dt = solver.lastStep().dt;
        bodyVel += dt / bodyMass * boundary.objectForce(body);
        bodyPos += dt * bodyVel;
        boundary.setObjectTransform(body, Mat3f::Identity(), bodyPos, bodyVel);
        Vec3d fluid = Vec3d::Zero();
        for (const Vec3f& v : solver.state().velocities)
            fluid += double(solver.mass()) * v.cast<double>();
        const Vec3d bodyP = double(bodyMass) * bodyVel.cast<double>();
        res.maxBodyPx = std::max(res.maxBodyPx, bodyP.x());
        res.minFluidPx = std::min(res.minFluidPx, fluid.x());
        res.maxBodyP = std::max(res.maxBodyP, bodyP.norm());
        res.maxImbalance = std::max(res.maxImbalance, (fluid + bodyP).norm());
    }
    return res;
}

} // namespace

class TestAdhesion : public QObject {
    Q_OBJECT
private slots:
    void layerStaysOnTheWall() {
        const float r = 0.01f;
        const double without = layerOnWall(0.0f, 0.5, 2.0f * r), with = layerOnWall(50.0f, 0.5, 2.0f * r);
        qInfo("fraction of the layer within 2r of the wall after 0.5 s: beta = 0: %.3f, beta = 50: %.3f",
              without, with);
        QVERIFY2(with > without + 0.1, qPrintable(QString("%1 vs %2").arg(with).arg(without)));
    }

    void reactionGoesIntoTheBody() {
        const TwoWay on = blockAndBody(20.0f, 0.3), off = blockAndBody(0.0f, 0.3);
        qInfo("adhesion on: max body Px %.4f, min fluid Px %.4f, max |P_body| %.4f, max |P_body + P_fluid| "
              "%.3g N s",
              on.maxBodyPx, on.minFluidPx, on.maxBodyP, on.maxImbalance);
        qInfo("adhesion off: max |P_body| %.3g N s", off.maxBodyP);
        // The body is pulled towards the fluid (+x), the fluid towards the body (-x); without
        // adhesion the block (gap 0.7 h, density below rho0 at its face) never touches the body.
        QVERIFY2(on.maxBodyPx > 0.05 && on.minFluidPx < -0.05, "adhesion must attract both ways");
        QVERIFY2(off.maxBodyP < 1e-3 * on.maxBodyP, "no force without adhesion");
        // Newton's third law per pair: fluid + body momentum stays 0 over the whole run.
        const double imbalance = on.maxImbalance / on.maxBodyP;
        qInfo("momentum balance max |P_body + P_fluid| / max |P_body| = %.2g", imbalance);
        QVERIFY2(imbalance < 0.01, qPrintable(QString("imbalance %1").arg(imbalance)));
    }
};

QTEST_GUILESS_MAIN(TestAdhesion)
#include "test_adhesion.moc"
