// Adaptive boundary sampling (Akinci 2013): coverage <= 0.75 r0, spacing >= 0.5 r0 within a body.
// Point-in-mesh and interior lattice sampling (the Armadillo as fluid at 0.018 m).
#include "io/ObjReader.h"
#include "rigid/BoundarySampling.h"
#include "rigid/MeshProperties.h"
#include "rigid/ShapeMeshes.h"
#include "rigid/TriangleBvh.h"

#include <QtTest>
#include <chrono>
#include <cmath>
#include <numbers>

using namespace octo;

namespace {
void checkSampling(const char* name, const TriangleMesh& mesh, float r0) {
    const auto t0 = std::chrono::steady_clock::now();
    BoundarySamplingStats st;
    const std::vector<Vec3f> s = sampleBoundary(mesh, r0, {}, &st);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const SamplingQuality q = measureSamplingQuality(mesh, s, r0, 0.04f * r0);
    const double area = surfaceArea(mesh);
    qInfo("%s r0=%.4f: %zu samples (vertex %zu, edge %zu, scan %zu, fill %zu; %zu candidates), "
          "%.2f samples per r0^2, min pair %.3f r0, max coverage %.3f r0, %.0f ms",
          name, r0, s.size(), st.vertexSamples, st.edgeSamples, st.interiorSamples, st.fillSamples,
          st.candidates, double(s.size()) * r0 * r0 / area, q.minPairDistance / r0,
          q.maxCoverageDistance / r0, ms);
    QVERIFY2(q.minPairDistance >= 0.5f * r0 * (1.0f - 1e-5f), name);
    QVERIFY2(q.maxCoverageDistance <= 0.75f * r0, name);
    // Not wastefully dense: a square lattice at r0 has 1 sample per r0².
    QVERIFY2(double(s.size()) * r0 * r0 / area < 2.0, name);
    for (const Vec3f& p : s)
        QVERIFY(p.allFinite());
}
} // namespace

class TestBoundarySampling : public QObject {
    Q_OBJECT
private slots:
    void box() { checkSampling("box", makeBoxMesh(Vec3f(0.2f, 0.1f, 0.15f)), 0.02f); }
    void boxNotMultiple() { checkSampling("box-odd", makeBoxMesh(Vec3f(0.137f, 0.051f, 0.093f)), 0.02f); }
    void sphere() { checkSampling("sphere", makeIcosphereMesh(0.15f, 3), 0.02f); }
    void cylinder() { checkSampling("cylinder", makeCylinderMesh(0.1f, 0.2f, 48), 0.02f); }
    void armadilloLowpoly() {
        TriangleMesh m = readObj(std::string(OCTO_MESH_DIR) + "/armadillo_lowpoly.obj");
        validateSolidMesh(m, "armadillo_lowpoly");
        const Aabb b = meshBounds(m);
        qInfo("armadillo_lowpoly bbox %.3f x %.3f x %.3f", b.extent().x(), b.extent().y(), b.extent().z());
        checkSampling("armadillo_lowpoly", m, 0.02f * b.extent().maxCoeff());
    }
    void armadilloDense() {
        // 52k small triangles (edges shorter than r0): vertices thinned, holes filled.
        TriangleMesh m = readObj(std::string(OCTO_MESH_DIR) + "/armadillo.obj");
        checkSampling("armadillo", m, 0.02f);
    }
    void badSpacing() {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sampleBoundary(makeBoxMesh(Vec3f::Ones()), 0.0f));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sampleBoundary(makeBoxMesh(Vec3f::Ones()), 1e-6f));
    }

    void pointInMesh() {
        const TriangleMesh s = makeIcosphereMesh(0.5f, 4);
        const TriangleBvh bvh(s);
        QVERIFY(bvh.contains(Vec3f::Zero()));
        QVERIFY(bvh.contains(Vec3f(0.45f, 0.0f, 0.0f)));
        QVERIFY(!bvh.contains(Vec3f(0.51f, 0.0f, 0.0f)));
        QVERIFY(!bvh.contains(Vec3f(0.4f, 0.4f, 0.4f)));
        // Lattice points exactly on the planes of a box's vertices/edges (worst case for parity).
        const TriangleBvh box(makeBoxMesh(Vec3f::Constant(0.5f)));
        int wrong = 0;
        for (int i = -10; i <= 10; ++i)
            for (int j = -10; j <= 10; ++j)
                for (int k = -10; k <= 10; ++k) {
                    const Vec3f p = 0.07f * Vec3f(float(i), float(j), float(k));
                    const bool inside = (p.array().abs() < 0.5f).all();
                    wrong += box.contains(p) != inside;
                }
        QCOMPARE(wrong, 0);
        const auto hit = bvh.raycast(Vec3f(-2, 0, 0), Vec3f(1, 0, 0));
        QVERIFY(hit && std::abs(hit->t - 1.5f) < 0.01f);
        QVERIFY(!bvh.raycast(Vec3f(-2, 0, 0), Vec3f(-1, 0, 0)));
    }
    void distanceToMesh() {
        // Exact distance to a box's surface (its faces, edges and corners are the three Voronoi
        // regions of the closest-point test) against the analytic one, outside and inside, on a
        // lattice that puts points on the faces' planes; the limit caps the answer.
        const Vec3f half(0.2f, 0.1f, 0.15f);
        const TriangleBvh box(makeBoxMesh(half));
        float worst = 0.0f;
        for (int i = -12; i <= 12; ++i)
            for (int j = -12; j <= 12; ++j)
                for (int k = -12; k <= 12; ++k) {
                    const Vec3f p = 0.025f * Vec3f(float(i), float(j), float(k));
                    const Vec3f q = p.cwiseAbs() - half; // > 0: outside along that axis
                    const float exact = (q.array() > 0.0f).any() ? q.cwiseMax(0.0f).norm() : -q.maxCoeff();
                    worst = std::max(worst, std::abs(box.distance(p) - exact));
                }
        QVERIFY2(worst < 1e-5f, qPrintable(QString("worst error %1 m").arg(worst)));
        QCOMPARE(box.distance(Vec3f(0.5f, 0.0f, 0.0f), 0.1f), 0.1f); // 0.3 m away: capped
        QVERIFY(std::abs(box.distance(Vec3f(0.25f, 0.0f, 0.0f), 0.1f) - 0.05f) < 1e-6f);
        const TriangleBvh ball(makeIcosphereMesh(0.5f, 4));
        QVERIFY(std::abs(ball.distance(Vec3f(0.0f, 0.7f, 0.0f)) - 0.2f) < 0.005f); // chord error of the mesh
    }
    void sphereInteriorCount() {
        const float r = 0.3f, h = 0.02f;
        const auto pts = sampleInterior(makeIcosphereMesh(r, 5), h);
        const double expected = 4.0 / 3.0 * std::numbers::pi * r * r * r / (h * h * h);
        QVERIFY(std::abs(double(pts.size()) / expected - 1.0) < 0.03);
        for (const Vec3f& p : pts)
            QVERIFY(p.norm() < r);
    }
    void armadilloInterior() {
        const TriangleMesh m = readObj(std::string(OCTO_MESH_DIR) + "/armadillo.obj");
        const auto t0 = std::chrono::steady_clock::now();
        const auto pts = sampleInterior(m, 0.018f);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const double V = computeMassProperties(m).volume;
        qInfo("armadillo interior at 0.018 m: %zu particles (volume/0.018^3 = %.0f; the paper reports "
              "12.1k), %.0f ms",
              pts.size(), V / std::pow(0.018, 3), ms);
        QVERIFY(std::abs(double(pts.size()) * std::pow(0.018, 3) / V - 1.0) < 0.05);
    }
};

QTEST_APPLESS_MAIN(TestBoundarySampling)
#include "test_boundary_sampling.moc"
