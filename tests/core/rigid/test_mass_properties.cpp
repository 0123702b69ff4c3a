// Exact polyhedral mass properties against analytic solids; mesh validation messages.
#include "io/ObjReader.h"
#include "rigid/MeshProperties.h"
#include "rigid/RigidBody.h"
#include "rigid/ShapeMeshes.h"
#include "rigid/TriangleBvh.h"

#include <Eigen/Eigenvalues>
#include <QtTest>
#include <cmath>
#include <fstream>
#include <numbers>
#include <unordered_map>

using namespace octo;

namespace {
bool near(double a, double b, double rel) {
    return std::abs(a - b) <= rel * std::abs(b);
}

/// Every undirected edge used exactly once in each direction.
bool closedAndConsistent(const TriangleMesh& m) {
    std::unordered_map<uint64_t, int> directed;
    for (const auto& t : m.triangles)
        for (int k = 0; k < 3; ++k)
            ++directed[(uint64_t(t[k]) << 32) | t[(k + 1) % 3]];
    for (const auto& [key, count] : directed) {
        const uint64_t rev = (key << 32) | (key >> 32);
        if (count != 1 || !directed.count(rev))
            return false;
    }
    return true;
}

std::string validationError(TriangleMesh m) {
    try {
        validateSolidMesh(m, "shape");
    } catch (const InvalidMeshError& e) {
        return e.what();
    }
    return {};
}

std::string writeTemp(const std::string& name, const std::string& text) {
    const std::string path = std::string(OCTO_TEST_OUTPUT_DIR) + "/" + name;
    std::ofstream(path) << text;
    return path;
}
} // namespace

class TestMassProperties : public QObject {
    Q_OBJECT
private slots:
    void unitCube() {
        const TriangleMesh box = makeBoxMesh(Vec3f::Constant(0.5f));
        QVERIFY(closedAndConsistent(box));
        const MassProperties mp = computeMassProperties(box, 1000.0);
        QVERIFY(near(mp.volume, 1.0, 1e-6));
        QVERIFY(near(mp.mass, 1000.0, 1e-6));
        QVERIFY(mp.centerOfMass.norm() < 1e-6);
        const double Iexp = 1000.0 / 6.0; // m (a² + a²) / 12
        for (int i = 0; i < 3; ++i)
            QVERIFY(near(mp.inertia(i, i), Iexp, 1e-6));
        QVERIFY(std::abs(mp.inertia(0, 1)) < 1e-6 && std::abs(mp.inertia(1, 2)) < 1e-6);
    }
    void boxOffsetAndRotated() {
        // A 0.2 x 0.4 x 0.6 box rotated and translated: inertia about the COM = R I Rᵀ.
        TriangleMesh box = makeBoxMesh(Vec3f(0.1f, 0.2f, 0.3f));
        const Mat3f R = Eigen::AngleAxisf(0.7f, Vec3f(1, 2, 3).normalized()).toRotationMatrix();
        const Vec3f t(3.0f, -2.0f, 5.0f);
        for (auto& v : box.vertices)
            v = R * v + t;
        const double rho = 500.0, m = rho * 0.2 * 0.4 * 0.6;
        const MassProperties mp = computeMassProperties(box, rho);
        QVERIFY(near(mp.mass, m, 1e-4));
        QVERIFY((mp.centerOfMass - t.cast<double>()).norm() < 1e-5);
        Mat3d Ib = Mat3d::Zero();
        Ib(0, 0) = m * (0.4 * 0.4 + 0.6 * 0.6) / 12;
        Ib(1, 1) = m * (0.2 * 0.2 + 0.6 * 0.6) / 12;
        Ib(2, 2) = m * (0.2 * 0.2 + 0.4 * 0.4) / 12;
        const Mat3d expected = R.cast<double>() * Ib * R.cast<double>().transpose();
        QVERIFY2((mp.inertia - expected).norm() < 1e-3 * expected.norm(), "rotated box inertia");
    }
    void sphere() {
        const TriangleMesh s = makeIcosphereMesh(0.5f, 5);
        QVERIFY(closedAndConsistent(s));
        const MassProperties mp = computeMassProperties(s, 1000.0);
        const double V = 4.0 / 3.0 * std::numbers::pi * 0.125;
        const double m = 1000.0 * V, I = 0.4 * m * 0.25;
        qInfo("icosphere(5) volume %.6f vs analytic %.6f (rel %.3g)", mp.volume, V, mp.volume / V - 1);
        QVERIFY(near(mp.volume, V, 0.01));
        QVERIFY(near(mp.mass, m, 0.01));
        for (int i = 0; i < 3; ++i)
            QVERIFY(near(mp.inertia(i, i), I, 0.01));
        QVERIFY(std::abs(mp.inertia(0, 1)) < 1e-4 * I);
    }
    void cylinder() {
        const TriangleMesh c = makeCylinderMesh(0.1f, 0.25f, 128);
        QVERIFY(closedAndConsistent(c));
        QVERIFY(signedVolume(c) > 0.0);
        const MassProperties mp = computeMassProperties(c, 1000.0);
        const double V = std::numbers::pi * 0.01 * 0.5, m = 1000.0 * V;
        QVERIFY(near(mp.volume, V, 0.01));
        QVERIFY(near(mp.inertia(1, 1), 0.5 * m * 0.01, 0.01));               // axis y
        QVERIFY(near(mp.inertia(0, 0), m * (3 * 0.01 + 0.25) / 12.0, 0.01)); // r² = 0.01, L = 0.5
    }
    void validationFlipsInsideOut() {
        TriangleMesh box = makeBoxMesh(Vec3f::Constant(0.5f));
        for (auto& t : box.triangles)
            std::swap(t[1], t[2]);
        QVERIFY(signedVolume(box) < 0.0);
        validateSolidMesh(box);
        QVERIFY(near(signedVolume(box), 1.0, 1e-6));
        // One triangle flipped: repaired by propagating the orientation.
        TriangleMesh one = makeBoxMesh(Vec3f::Constant(0.5f));
        std::swap(one.triangles[3][1], one.triangles[3][2]);
        validateSolidMesh(one);
        QVERIFY(closedAndConsistent(one));
        QVERIFY(near(signedVolume(one), 1.0, 1e-6));
    }
    void validationErrors() {
        TriangleMesh open = makeBoxMesh(Vec3f::Constant(0.5f));
        open.triangles.pop_back();
        const std::string e1 = validationError(open);
        QVERIFY2(e1.find("not closed") != std::string::npos, e1.c_str());

        TriangleMesh flat; // two triangles back to back: closed, zero volume
        flat.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
        flat.triangles = {{0, 1, 2}, {0, 2, 1}};
        const std::string e2 = validationError(flat);
        QVERIFY2(e2.find("zero volume") != std::string::npos, e2.c_str());

        TriangleMesh nonManifold = makeBoxMesh(Vec3f::Constant(0.5f));
        nonManifold.triangles.push_back(nonManifold.triangles[0]);
        const std::string e3 = validationError(nonManifold);
        QVERIFY2(e3.find("2-manifold") != std::string::npos, e3.c_str());

        TriangleMesh bad = makeBoxMesh(Vec3f::Constant(0.5f));
        bad.triangles[0][0] = 99;
        const std::string e4 = validationError(bad);
        QVERIFY2(e4.find("uses vertex 100 of 8") != std::string::npos, e4.c_str());

        QVERIFY(validationError(TriangleMesh{}).find("no vertices") != std::string::npos);
    }
    void objFilesRefused() {
        // A tetrahedron missing a face, and a flat closed "solid": refused with the file named.
        const std::string open = writeTemp("open_tetra.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                                                             "f 1 3 2\nf 1 2 4\nf 2 3 4\n");
        try {
            loadObjShape(open, 0.05f);
            QFAIL("open mesh accepted");
        } catch (const InvalidMeshError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.find("open_tetra.obj") != std::string::npos &&
                         msg.find("not closed") != std::string::npos,
                     msg.c_str());
        }
        const std::string flat = writeTemp("flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0.25 0.25 0\n"
                                                       "f 1 3 2\nf 1 2 4\nf 2 3 4\nf 1 4 3\n");
        try {
            loadObjShape(flat, 0.05f);
            QFAIL("flat mesh accepted");
        } catch (const InvalidMeshError& e) {
            QVERIFY2(std::string(e.what()).find("zero volume") != std::string::npos, e.what());
        }
        const std::string tetra = writeTemp("tetra.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                                                         "f 1 3 2\nf 1 2 4\nf 2 3 4\nf 1 4 3\n");
        const auto shape = loadObjShape(tetra, 0.05f);
        QVERIFY(near(shape->volume, 1.0 / 6.0, 1e-5));
        QVERIFY((shape->meshOffset - Vec3f::Constant(0.25f)).norm() < 1e-6f);
    }
    void selfIntersectingMeshIsRefused() {
        // Issue 30: a body mesh whose surface crosses itself was accepted (its volume, inertia and
        // inside test are meaningless). Two closed boxes in one mesh, overlapping: refused; apart,
        // or one box, or the armadillo: accepted.
        auto twoBoxes = [](const Vec3f& shift) {
            TriangleMesh m = makeBoxMesh(Vec3f::Constant(0.05f));
            const TriangleMesh b = makeBoxMesh(Vec3f::Constant(0.05f));
            const uint32_t base = uint32_t(m.vertices.size());
            for (const Vec3f& v : b.vertices)
                m.vertices.push_back(v + shift);
            for (const auto& t : b.triangles)
                m.triangles.push_back({t[0] + base, t[1] + base, t[2] + base});
            m.normals.clear();
            return m;
        };
        TriangleMesh crossing = twoBoxes(Vec3f(0.05f, 0.03f, 0.02f));
        try {
            validateSolidMesh(crossing, "two-boxes.obj");
            QFAIL("overlapping boxes accepted");
        } catch (const InvalidMeshError& e) {
            qInfo("%s", e.what());
            QVERIFY2(std::string(e.what()).rfind(
                         "two-boxes.obj: mesh intersects itself: an edge of triangle ", 0) == 0,
                     e.what());
        }
        TriangleMesh apart = twoBoxes(Vec3f(0.2f, 0.0f, 0.0f));
        validateSolidMesh(apart, "apart"); // two shells that do not cross are a valid solid
        TriangleMesh one = makeBoxMesh(Vec3f::Constant(0.05f));
        QVERIFY(!TriangleBvh(one).findSelfIntersection(one));
        const TriangleMesh crossing2 = twoBoxes(Vec3f(0.05f, 0.03f, 0.02f));
        const auto c = TriangleBvh(crossing2).findSelfIntersection(crossing2);
        QVERIFY(c.has_value());
        // The crossing point lies on both boxes' surfaces: within the overlap of their bounds.
        QVERIFY2((c->point.array() >= Vec3f(0.0f, -0.02f, -0.03f).array() - 1e-5f).all() &&
                     (c->point.array() <= Vec3f(0.05f, 0.05f, 0.05f).array() + 1e-5f).all(),
                 qPrintable(QString("%1 %2 %3").arg(c->point.x()).arg(c->point.y()).arg(c->point.z())));
    }

    void armadillo() {
        TriangleMesh m = readObj(std::string(OCTO_MESH_DIR) + "/armadillo.obj");
        validateSolidMesh(m, "armadillo");
        const MassProperties mp = computeMassProperties(m, 1000.0);
        const Aabb b = meshBounds(m);
        qInfo("armadillo: %zu vertices, %zu triangles, volume %.5f m3, bbox %.3f x %.3f x %.3f, COM (%.3f "
              "%.3f %.3f)",
              m.vertices.size(), m.triangles.size(), mp.volume, b.extent().x(), b.extent().y(),
              b.extent().z(), mp.centerOfMass.x(), mp.centerOfMass.y(), mp.centerOfMass.z());
        QVERIFY(mp.volume > 0.02 && mp.volume < 0.5 * b.extent().prod());
        QVERIFY(b.contains(mp.centerOfMass.cast<float>()));
        Eigen::SelfAdjointEigenSolver<Mat3d> es(mp.inertia);
        QVERIFY(es.eigenvalues().minCoeff() > 0.0);
    }
};

QTEST_APPLESS_MAIN(TestMassProperties)
#include "test_mass_properties.moc"
