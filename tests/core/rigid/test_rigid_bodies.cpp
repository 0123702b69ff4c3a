// Rigid-body dynamics without fluid: free spinning, kinematic paths, wall and body contact,
// dragging, picking, adding and removing bodies.
#include "io/ObjReader.h"
#include "rigid/RigidBodySystem.h"
#include "rigid/ShapeMeshes.h"

#include <QtTest>
#include <cmath>

using namespace octo;

namespace {
constexpr float kD0 = 0.02f; // contact distance = boundary sample spacing (m)

std::shared_ptr<const RigidShape> boxShape(const Vec3f& half) {
    return RigidShape::create(makeBoxMesh(half), kD0, "box");
}

/// Lowest world y over the mesh vertices.
float lowestY(const RigidBody& b) {
    float y = std::numeric_limits<float>::max();
    for (const Vec3f& v : b.mesh().vertices)
        y = std::min(y, b.toWorld(v).y());
    return y;
}
/// Samples of a that lie inside b's mesh.
int samplesInside(const RigidBody& a, const RigidBody& b) {
    int n = 0;
    for (const Vec3f& s : a.boundarySamples())
        n += b.containsWorldPoint(a.toWorld(s));
    return n;
}
} // namespace

class TestRigidBodies : public QObject {
    Q_OBJECT
private slots:
    void bodyBasics() {
        RigidBody b(boxShape(Vec3f(0.1f, 0.2f, 0.3f)), 500.0f);
        QVERIFY(std::abs(b.mass() - 500.0f * 0.2f * 0.4f * 0.6f) < 1e-3f);
        QVERIFY((b.bodyInertia() * b.bodyInverseInertia() - Mat3f::Identity()).norm() < 1e-4f);
        b.setPose({Vec3f(1, 2, 3), Quatf(Eigen::AngleAxisf(0.5f, Vec3f::UnitY()))});
        const Mat3f R = b.rotation();
        QVERIFY((b.worldInertia() - R * b.bodyInertia() * R.transpose()).norm() < 1e-5f);
        QVERIFY((b.toBody(b.toWorld(Vec3f(0.1f, -0.2f, 0.3f))) - Vec3f(0.1f, -0.2f, 0.3f)).norm() < 1e-5f);
        QVERIFY(b.containsWorldPoint(Vec3f(1, 2, 3)));
        RigidBodySystem sys;
        const int id = sys.addBody(b);
        QCOMPARE(sys.bodyContaining(Vec3f(1, 2, 3)), id);
        QCOMPARE(sys.bodyContaining(Vec3f(1, 2.25f, 3)), -1);
        QVERIFY(!b.containsWorldPoint(Vec3f(1, 2.25f, 3)));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, RigidBody(b.shapePtr(), 0.0f));
    }

    void torqueFreeSpinConservesMomentumAndEnergy() {
        RigidBody b(boxShape(Vec3f(0.05f, 0.1f, 0.2f)), 1000.0f);
        b.setAngularVelocity(Vec3f(2.0f, 10.0f, 0.5f)); // near the unstable intermediate axis
        const Vec3f L0 = b.angularMomentum();
        const double E0 = b.kineticEnergy();
        double maxDrift = 0.0;
        for (int i = 0; i < 5000; ++i) { // 5 s at 1 ms
            b.integrate(1e-3f, Vec3f::Zero(), Vec3f::Zero());
            maxDrift = std::max(maxDrift, std::abs(b.kineticEnergy() / E0 - 1.0));
        }
        qInfo("spin: |L - L0|/|L0| = %.2e, max energy drift %.2e %%",
              double((b.angularMomentum() - L0).norm() / L0.norm()), 100.0 * maxDrift);
        QVERIFY((b.angularMomentum() - L0).norm() < 1e-5f * L0.norm());
        QVERIFY(maxDrift < 0.02);
        QVERIFY(std::abs(b.orientation().norm() - 1.0f) < 1e-5f);

        // A shape with a full (non-diagonal) inertia tensor, through the system with no gravity.
        RigidBodySystem sys;
        sys.setGravity(Vec3f::Zero());
        const int id = sys.addBody(
            RigidBody(RigidShape::create(readObj(std::string(OCTO_MESH_DIR) + "/armadillo_lowpoly.obj"),
                                         0.05f, "armadillo"),
                      1000.0f));
        RigidBody& a = *sys.body(id);
        QVERIFY(std::abs(a.bodyInertia()(0, 1)) > 1e-3f * a.bodyInertia().norm());
        a.setAngularVelocity(Vec3f(3.0f, -1.0f, 6.0f));
        a.setLinearVelocity(Vec3f(0.1f, 0.2f, 0.0f));
        const Vec3f La = a.angularMomentum();
        const double Ea = a.kineticEnergy();
        double drift = 0.0;
        for (int i = 0; i < 2000; ++i) {
            sys.step(1e-3f);
            drift = std::max(drift, std::abs(a.kineticEnergy() / Ea - 1.0));
        }
        qInfo("armadillo spin: |L - L0|/|L0| = %.2e, max energy drift %.2e %%",
              double((a.angularMomentum() - La).norm() / La.norm()), 100.0 * drift);
        QVERIFY((a.angularMomentum() - La).norm() < 1e-5f * La.norm());
        QVERIFY(drift < 0.01);
        QVERIFY((a.position() - Vec3f(0.2f, 0.4f, 0.0f)).norm() < 1e-4f);
    }

    void freeFallMatchesBallistics() {
        RigidBodySystem sys;
        const int id = sys.addBody(RigidBody(boxShape(Vec3f::Constant(0.05f)), 700.0f, {Vec3f(0, 10, 0)}));
        sys.body(id)->setLinearVelocity(Vec3f(1, 0, 0));
        for (int i = 0; i < 500; ++i)
            sys.step(2e-3f);
        const float t = 1.0f;
        const Vec3f expected(1.0f * t, 10.0f - 0.5f * 9.81f * t * t, 0.0f);
        QVERIFY2((sys.body(id)->position() - expected).norm() < 0.02f,
                 "ballistic path (symplectic Euler error < 2 cm)");
    }

    void kinematicFollowsPathExactly() {
        RigidBodySystem sys;
        sys.setContainer(Aabb(Vec3f(-1, 0, -1), Vec3f(1, 1, 1)));
        RigidBody cyl(RigidShape::create(makeCylinderMesh(0.05f, 0.2f), kD0, "cylinder"), 1000.0f);
        const Pose start{Vec3f(-0.8f, 0.3f, 0.0f), Quatf::Identity()};
        cyl.setKinematicPath(constantVelocityPath(start, Vec3f(10, 0, 0)));
        const int id = sys.addBody(std::move(cyl));
        // A dynamic box in its way must not change the kinematic motion.
        sys.addBody(RigidBody(boxShape(Vec3f::Constant(0.05f)), 1000.0f, {Vec3f(0, 0.3f, 0)}));
        const BodyLoad push{id, Vec3f(1e4f, 0, 0), Vec3f(0, 1e3f, 0)}; // ignored: kinematic
        for (int i = 1; i <= 100; ++i) {
            sys.step(1e-3f, std::span(&push, 1));
            const RigidBody& b = *sys.body(id);
            const float x = -0.8f + 10.0f * float(sys.time());
            QVERIFY((b.position() - Vec3f(x, 0.3f, 0.0f)).norm() < 1e-5f);
            QVERIFY(std::abs(b.linearVelocity().x() - 10.0f) < 1e-2f);
            QVERIFY(b.angularVelocity().norm() < 1e-3f);
        }
        // The box was struck and moves along +x.
        QVERIFY(sys.bodies()[1]->linearVelocity().x() > 1.0f);

        // Waypoints with rotation.
        const Pose p0{Vec3f(0, 0, 0), Quatf::Identity()};
        const Pose p1{Vec3f(1, 0, 0), Quatf(Eigen::AngleAxisf(1.0f, Vec3f::UnitY()))};
        const KinematicPath path = waypointPath({{0.0, p0}, {2.0, p1}});
        RigidBody k(boxShape(Vec3f::Constant(0.05f)), 1000.0f);
        k.setKinematicPath(path);
        k.followPath(1.0);
        QVERIFY((k.position() - Vec3f(0.5f, 0, 0)).norm() < 1e-6f);
        QVERIFY((k.linearVelocity() - Vec3f(0.5f, 0, 0)).norm() < 1e-3f);
        QVERIFY((k.angularVelocity() - Vec3f(0, 0.5f, 0)).norm() < 1e-3f);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, waypointPath({{1.0, p0}, {1.0, p1}}));
    }

    void acceleratedPathStartsAndStopsAtRest() {
        // 1 m at 10 m/s, 400 m/s^2: 25 ms and 12.5 cm to speed up, the same to stop; 0.125 s in all.
        const std::vector<std::vector<Vec3f>> legs{{Vec3f(0, 0, 0), Vec3f(0.5f, 0, 0), Vec3f(0.5f, 0, 0.5f)}};
        const KinematicPath path = acceleratedPath(legs, 10.0f, 400.0f, Quatf::Identity());
        auto speedAt = [&](double t) {
            const double e = 1e-5;
            return double((path(t + e).position - path(t - e).position).norm()) / (2.0 * e);
        };
        QVERIFY(path(-1.0).position.norm() < 1e-7f);
        QVERIFY(speedAt(1e-4) < 0.1);                                           // from rest
        QVERIFY(std::abs(speedAt(0.0125) - 5.0) < 1e-2);                        // a t
        QVERIFY(std::abs(path(0.025).position.x() - 0.125f) < 1e-5f);           // v^2 / 2a
        QVERIFY(std::abs(speedAt(0.05) - 10.0) < 1e-2);                         // cruising
        QVERIFY((path(0.0725).position - Vec3f(0.5f, 0, 0.1f)).norm() < 1e-4f); // corner taken at speed
        QVERIFY(std::abs(speedAt(0.125 - 0.0125) - 5.0) < 1e-2);                // braking
        QVERIFY((path(0.125).position - Vec3f(0.5f, 0, 0.5f)).norm() < 1e-5f);
        QVERIFY((path(5.0).position - Vec3f(0.5f, 0, 0.5f)).norm() < 1e-7f);
        // A leg too short to reach the speed: a triangle profile, peak sqrt(a L) = 2 m/s over 1 cm.
        const KinematicPath shortLeg =
            acceleratedPath({{Vec3f(0, 0, 0), Vec3f(0.01f, 0, 0)}}, 10.0f, 400.0f, Quatf::Identity());
        QVERIFY((shortLeg(0.01).position - Vec3f(0.01f, 0, 0)).norm() < 1e-6f);
        QVERIFY(std::abs(shortLeg(0.005).position.x() - 0.005f) < 1e-6f);
        // Two legs (out and back): the second starts from rest where the first stopped.
        const KinematicPath back =
            acceleratedPath({{Vec3f(0, 0, 0), Vec3f(1, 0, 0)}, {Vec3f(1, 0, 0), Vec3f(0, 0, 0)}}, 10.0f,
                            400.0f, Quatf::Identity());
        QVERIFY((back(0.125).position - Vec3f(1, 0, 0)).norm() < 1e-5f);
        QVERIFY((back(0.25).position).norm() < 1e-5f);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 acceleratedPath(legs, 10.0f, 0.0f, Quatf::Identity()));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 acceleratedPath({{Vec3f(0, 0, 0)}}, 10.0f, 400.0f, Quatf::Identity()));
    }

    void boxComesToRestOnFloor() {
        RigidBodySystem sys;
        sys.setContainer(Aabb(Vec3f(-1, 0, -1), Vec3f(1, 2, 1)));
        sys.contactSettings().contactDistance = kD0;
        const Quatf tilt(Eigen::AngleAxisf(0.4f, Vec3f(1, 0, 1).normalized()));
        const int id =
            sys.addBody(RigidBody(boxShape(Vec3f(0.1f, 0.08f, 0.12f)), 800.0f, {Vec3f(0, 0.8f, 0), tilt}));
        RigidBody& b = *sys.body(id);
        const double E0 = b.mass() * 9.81 * 0.8;
        float deepest = 0.0f, maxKE = 0.0f;
        for (int i = 0; i < 1500; ++i) { // 3 s
            sys.step(2e-3f);
            deepest = std::min(deepest, lowestY(b));
            maxKE = std::max(maxKE, float(b.kineticEnergy()));
            QVERIFY(b.position().allFinite());
        }
        qInfo("drop: rest height %.4f (lowest vertex %.4f), deepest %.4f m, |v| %.2e, |w| %.2e, substeps %d, "
              "contacts %zu",
              b.position().y(), lowestY(b), deepest, b.linearVelocity().norm(), b.angularVelocity().norm(),
              sys.lastSubsteps(), sys.lastContactCount());
        QVERIFY2(deepest > -0.5f * kD0, "penetrated the floor by more than d0/2");
        QVERIFY2(maxKE < 1.05 * E0, "gained energy (explosion)");
        QVERIFY(b.linearVelocity().norm() < 0.01f);
        QVERIFY(b.angularVelocity().norm() < 0.05f);
        // Resting flat on a face: the lowest vertex is near the floor.
        QVERIFY(std::abs(lowestY(b)) < kD0);
    }

    void boxesCollideWithoutInterpenetration() {
        for (float speed : {2.0f, 10.0f}) {
            RigidBodySystem sys;
            sys.setGravity(Vec3f::Zero());
            const auto shape = boxShape(Vec3f::Constant(0.08f));
            const int a = sys.addBody(RigidBody(shape, 1000.0f, {Vec3f(-0.4f, 0.02f, 0.01f)}));
            const int b = sys.addBody(RigidBody(
                shape, 1000.0f, {Vec3f(0.0f, 0.0f, 0.0f), Quatf(Eigen::AngleAxisf(0.3f, Vec3f::UnitY()))}));
            sys.body(a)->setLinearVelocity(Vec3f(speed, 0, 0));
            const Vec3f P0 = sys.body(a)->linearMomentum();
            int inside = 0;
            for (int i = 0; i < 200; ++i) {
                sys.step(2e-3f);
                inside +=
                    samplesInside(*sys.body(a), *sys.body(b)) + samplesInside(*sys.body(b), *sys.body(a));
            }
            const Vec3f P = sys.body(a)->linearMomentum() + sys.body(b)->linearMomentum();
            qInfo("collision at %.0f m/s: samples inside the other body %d, momentum error %.2e, vA %.2f vB "
                  "%.2f",
                  double(speed), inside, double((P - P0).norm() / P0.norm()),
                  double(sys.body(a)->linearVelocity().x()), double(sys.body(b)->linearVelocity().x()));
            QCOMPARE(inside, 0);
            QVERIFY((P - P0).norm() < 0.01f * P0.norm());
            QVERIFY(sys.body(b)->linearVelocity().x() > 0.3f * speed); // the hit was transmitted
        }
    }

    void noTunnellingAtSpeed() {
        // 10 m/s into a 2 cm plate with 5 ms steps (5 cm per step): sub-steps and speculative
        // contacts must stop it; and a fast drop onto the floor must not sink through.
        RigidBodySystem sys;
        sys.setGravity(Vec3f::Zero());
        const int plate =
            sys.addBody(RigidBody(boxShape(Vec3f(0.01f, 0.2f, 0.2f)), 2000.0f, {Vec3f(0.3f, 0, 0)}));
        const int bullet =
            sys.addBody(RigidBody(boxShape(Vec3f::Constant(0.03f)), 2000.0f, {Vec3f(-0.2f, 0, 0)}));
        sys.body(bullet)->setLinearVelocity(Vec3f(10, 0, 0));
        int inside = 0;
        for (int i = 0; i < 40; ++i) {
            sys.step(5e-3f);
            inside += samplesInside(*sys.body(bullet), *sys.body(plate)) +
                      samplesInside(*sys.body(plate), *sys.body(bullet));
        }
        qInfo("bullet: substeps %d, bullet x %.3f, plate x %.3f", sys.lastSubsteps(),
              sys.body(bullet)->position().x(), sys.body(plate)->position().x());
        QCOMPARE(inside, 0);
        QVERIFY(sys.body(bullet)->position().x() < sys.body(plate)->position().x());

        RigidBodySystem drop;
        drop.setContainer(Aabb(Vec3f(-1, 0, -1), Vec3f(1, 2, 1)));
        const int b = drop.addBody(RigidBody(boxShape(Vec3f::Constant(0.05f)), 1000.0f, {Vec3f(0, 0.5f, 0)}));
        drop.body(b)->setLinearVelocity(Vec3f(0, -20, 0));
        float deepest = 1.0f;
        for (int i = 0; i < 200; ++i) {
            drop.step(5e-3f);
            deepest = std::min(deepest, lowestY(*drop.body(b)));
        }
        QVERIFY2(deepest > -0.5f * kD0, "fast drop sank through the floor");
        QVERIFY(drop.body(b)->linearVelocity().norm() < 0.05f);
    }

    void boxStackRests() {
        RigidBodySystem sys;
        sys.setContainer(Aabb(Vec3f(-1, 0, -1), Vec3f(1, 2, 1)));
        const auto shape = boxShape(Vec3f::Constant(0.1f));
        const int lo = sys.addBody(RigidBody(shape, 1000.0f, {Vec3f(0, 0.11f, 0)}));
        const int hi = sys.addBody(RigidBody(
            shape, 500.0f, {Vec3f(0.03f, 0.5f, 0), Quatf(Eigen::AngleAxisf(0.2f, Vec3f::UnitY()))}));
        int inside = 0;
        for (int i = 0; i < 1000; ++i) {
            sys.step(2e-3f);
            if (i % 10 == 0)
                inside += samplesInside(*sys.body(hi), *sys.body(lo));
        }
        qInfo("stack: lower y %.4f, upper y %.4f, |v| %.2e", sys.body(lo)->position().y(),
              sys.body(hi)->position().y(), sys.body(hi)->linearVelocity().norm());
        QCOMPARE(inside, 0);
        QVERIFY(sys.body(hi)->position().y() > sys.body(lo)->position().y() + 0.19f);
        QVERIFY(sys.body(hi)->linearVelocity().norm() < 0.02f);
    }

    void dragReachesTarget_data() {
        QTest::addColumn<bool>("gravity");
        QTest::newRow("gravity off") << false;
        QTest::newRow("gravity on") << true;
    }
    void dragReachesTarget() {
        QFETCH(bool, gravity);
        RigidBodySystem sys;
        sys.setGravity(gravity ? Vec3f(0, -9.81f, 0) : Vec3f::Zero());
        sys.setContainer(Aabb(Vec3f(-2, 0, -2), Vec3f(2, 3, 2)));
        const int id = sys.addBody(RigidBody(boxShape(Vec3f(0.1f, 0.05f, 0.08f)), 1000.0f, {Vec3f(0, 1, 0)}));
        const Vec3f grab(0.1f, 0.05f, 0.0f); // an off-centre point on the body
        QVERIFY(sys.beginDrag(id, grab));
        const Vec3f start = sys.body(id)->toWorld(grab);
        const Vec3f dir = Vec3f(1, 0.5f, 0).normalized();
        const Vec3f target = start + 0.5f * dir;
        sys.setDragTarget(target);
        float overshoot = 0.0f, reachedAt = -1.0f;
        for (int i = 0; i < 500; ++i) { // 1 s
            sys.step(2e-3f);
            const Vec3f p = sys.body(id)->toWorld(grab);
            overshoot = std::max(overshoot, (p - target).dot(dir));
            if (reachedAt < 0.0f && (p - target).norm() < 0.025f)
                reachedAt = float(sys.time());
        }
        const float err = (sys.body(id)->toWorld(grab) - target).norm();
        qInfo("drag (%s): reached within 5%% at %.3f s, final error %.4f m, overshoot %.4f m",
              gravity ? "gravity" : "no gravity", double(reachedAt), double(err), double(overshoot));
        QVERIFY(reachedAt > 0.0f && reachedAt <= 1.0f);
        QVERIFY(err < 0.01f);
        QVERIFY(overshoot < 0.05f);
        sys.endDrag();
        QVERIFY(!sys.dragging());
        const float y0 = sys.body(id)->position().y();
        for (int i = 0; i < 150; ++i)
            sys.step(2e-3f);
        if (gravity)
            QVERIFY2(sys.body(id)->position().y() < y0 - 0.3f, "released body falls");
        else
            QVERIFY(std::abs(sys.body(id)->position().y() - y0) < 0.05f);
    }

    void dragApproachesInMinimumTime_data() {
        QTest::addColumn<bool>("timeOptimal");
        QTest::addColumn<bool>("offCentre");
        QTest::newRow("minimum-time, centre") << true << false;
        QTest::newRow("minimum-time, corner") << true << true;
        QTest::newRow("linear spring, centre") << false << false;
    }
    void dragApproachesInMinimumTime() {
        // Issue 25: 0.3 m at the 3 m/s cap take 0.1 s; the minimum-time profile adds only its
        // speeding up (in responseTime / 2) and braking (in responseTime), measured 0.102 s to
        // within 1 cm; the linear spring adds its exponential tail (2 / omega per e-fold), 0.128 s.
        // 16 ms: the GUI's 0.2 s of wall response at 0.08x real time.
        QFETCH(bool, timeOptimal);
        QFETCH(bool, offCentre);
        RigidBodySystem sys;
        sys.setContainer(Aabb(Vec3f(-2, 0, -2), Vec3f(2, 3, 2)));
        sys.dragSettings().responseTime = 0.016f;
        sys.dragSettings().timeOptimal = timeOptimal;
        const int id = sys.addBody(RigidBody(boxShape(Vec3f::Constant(0.07f)), 2000.0f, {Vec3f(0, 1, 0)}));
        const Vec3f grab = offCentre ? Vec3f(0.07f, 0.07f, 0.07f) : Vec3f::Zero();
        QVERIFY(sys.beginDrag(id, grab));
        const Vec3f dir = Vec3f(1, 0, 0);
        const Vec3f target = sys.body(id)->toWorld(grab) + 0.3f * dir;
        sys.setDragTarget(target);
        float reachedAt = -1.0f, overshoot = 0.0f, errorAfter = 0.0f;
        while (sys.time() < 0.3) {
            sys.step(1e-3f);
            const Vec3f e = sys.body(id)->toWorld(grab) - target;
            overshoot = std::max(overshoot, e.dot(dir));
            if (reachedAt >= 0.0f)
                errorAfter = std::max(errorAfter, e.norm());
            else if (e.norm() < 0.01f)
                reachedAt = float(sys.time());
        }
        qInfo("%s: within 1 cm of 0.3 m at %.4f s, then within %.4f m, overshoot %.4f m",
              timeOptimal ? "minimum-time" : "spring", reachedAt, errorAfter, overshoot);
        QVERIFY(reachedAt > 0.0f);
        if (timeOptimal) {
            QVERIFY2(reachedAt < 0.105f, qPrintable(QString("%1 s").arg(reachedAt)));
            QVERIFY(errorAfter < 0.01f && overshoot < 0.005f);
        } else {
            QVERIFY2(reachedAt > 0.12f, "the spring's tail: the minimum-time profile's gain is real");
        }
    }

    void submergedVolumeAndLoads() {
        RigidBodySystem sys;
        sys.setGravity(Vec3f::Zero());
        const int id = sys.addBody(RigidBody(boxShape(Vec3f(0.1f, 0.2f, 0.1f)), 500.0f, {Vec3f(0, 1.0f, 0)}));
        RigidBody& b = *sys.body(id);
        QVERIFY(std::abs(b.fractionBelow(1.0f) - 0.5) < 1e-5);
        QVERIFY(std::abs(b.fractionBelow(0.9f) - 0.25) < 1e-5);
        QVERIFY(b.fractionBelow(0.7f) == 0.0 && std::abs(b.fractionBelow(1.3f) - 1.0) < 1e-9);
        b.setPose({Vec3f(0, 1.0f, 0), Quatf(Eigen::AngleAxisf(0.5f, Vec3f(1, 1, 0).normalized()))});
        QVERIFY(std::abs(b.fractionBelow(1.0f) - 0.5) < 1e-4); // symmetric solid: half below its centre

        // Per-sample forces -> body loads: a uniform upward force and a couple.
        std::vector<Vec3f> pos, vel;
        std::vector<uint32_t> owner;
        b.setAngularVelocity(Vec3f(0, 1, 0));
        sys.gatherBoundary(pos, vel, owner);
        QCOMPARE(pos.size(), b.boundarySamples().size());
        QVERIFY((vel[5] - b.velocityAt(pos[5])).norm() < 1e-6f);
        std::vector<Vec3f> f(pos.size(), Vec3f(0, 0.01f, 0));
        const auto loads = sys.loadsFromSampleForces(pos, f);
        QCOMPARE(loads.size(), size_t(1));
        QCOMPARE(loads[0].bodyId, id);
        QVERIFY(std::abs(loads[0].force.y() - 0.01f * float(pos.size())) < 1e-3f);
        Vec3f tau = Vec3f::Zero();
        for (size_t k = 0; k < pos.size(); ++k)
            tau += (pos[k] - b.position()).cross(f[k]);
        QVERIFY((loads[0].torque - tau).norm() < 1e-4f);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 sys.loadsFromSampleForces(pos, std::span(f).first(3)));
    }

    void pickAndManageBodies() {
        RigidBodySystem sys;
        const auto shape = boxShape(Vec3f::Constant(0.1f));
        const int a = sys.addBody(RigidBody(shape, 1000.0f, {Vec3f(0, 0.5f, 0)}));
        const int b = sys.addBody(RigidBody(shape, 1000.0f, {Vec3f(0, 0.5f, 1.0f)}));
        const auto hit = sys.pickBody(Vec3f(0.02f, 0.53f, -2.0f), Vec3f(0, 0, 3.0f));
        QVERIFY(hit.has_value());
        QCOMPARE(hit->bodyId, a);
        QVERIFY((hit->bodyPoint - Vec3f(0.02f, 0.03f, -0.1f)).norm() < 1e-4f);
        QVERIFY(std::abs(hit->distance - 1.9f) < 1e-4f);
        const auto back = sys.pickBody(Vec3f(0.02f, 0.53f, 3.0f), Vec3f(0, 0, -1));
        QVERIFY(back && back->bodyId == b);
        QVERIFY(!sys.pickBody(Vec3f(0.5f, 0.5f, -2.0f), Vec3f(0, 0, 1)));

        const uint64_t v0 = sys.topologyVersion();
        QVERIFY(sys.beginDrag(b, Vec3f::Zero()));
        QVERIFY(sys.removeBody(b));
        QVERIFY(!sys.dragging());
        QVERIFY(!sys.removeBody(b));
        QVERIFY(!sys.beginDrag(b, Vec3f::Zero()));
        const int c = sys.addBody(RigidBody(shape, 1000.0f));
        QVERIFY(c != a && c != b);
        QCOMPARE(sys.size(), size_t(2));
        QVERIFY(sys.topologyVersion() > v0);
        QVERIFY(sys.body(a) != nullptr && sys.body(b) == nullptr);
        QCOMPARE(sys.totalSampleCount(), 2 * shape->samples.size());
    }
};

QTEST_APPLESS_MAIN(TestRigidBodies)
#include "test_rigid_bodies.moc"
