// Property test of marching cubes (issue 8 item 5): whatever the input, the welded mesh is a
// closed, consistently oriented 2-manifold (every edge in exactly two triangles, once in each
// direction), with no two vertices at one position and no NaN. Run on random scalar fields
// straight into the corner store (every case, ambiguous faces with ties, phi = 0 at corners) and
// on random and adversarial particle clouds through every reconstruction method.
#include "MeshChecks.h"
#include "surface/BlockCornerField.h"
#include "surface/MarchingCubes_LorensenCline1987.h"
#include "surface/ParticleShapes.h"
#include "surface/SurfaceReconstructor.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <random>

using namespace octo;

namespace {
constexpr float kR = 0.01f, kD0 = 0.02f;

// Deterministic value per lattice corner.
uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

QString describe(const test::MeshTopology& t, const TriangleMesh& m) {
    return QString("%1 triangles, %2 bad edges, duplicates %3, finite %4 %5")
        .arg(m.triangles.size())
        .arg(t.badEdges)
        .arg(int(t.duplicateVertices))
        .arg(int(t.finite))
        .arg(t.problem.c_str());
}

std::vector<Vec3f> randomCloud(uint32_t seed, size_t n, float side) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, side);
    std::vector<Vec3f> p(n);
    for (Vec3f& x : p)
        x = Vec3f(u(rng), u(rng), u(rng));
    return p;
}
} // namespace

class TestMeshManifold : public QObject {
    Q_OBJECT
private slots:
    void tableIsComplete() {
        const MarchingCubesTable& t = marchingCubesTable();
        size_t withCentre = 0;
        for (int ci = 0; ci < 256; ++ci) {
            const int k = std::popcount(unsigned(t.ambiguousFaces[size_t(ci)]));
            for (int bits = 0; bits < (1 << k); ++bits) {
                const auto& e = t.entries[size_t(t.entryBase[size_t(ci)]) + size_t(bits)];
                withCentre += e.extraCount > 0;
                // Every crossing edge is used, triangles only name crossing edges or extra vertices.
                uint16_t used = 0;
                for (int q = 0; q < 3 * e.triangleCount; ++q) {
                    const int v = e.triangles[size_t(q)];
                    QVERIFY(v >= 0 && v < 12 + e.extraCount);
                    if (v < 12)
                        used |= uint16_t(1u << v);
                }
                QCOMPARE(used, t.edgeMask[size_t(ci)]);
                QCOMPARE(int(e.triangles[size_t(3 * e.triangleCount)]), -1);
            }
        }
        QCOMPARE(t.ambiguousFaces[0b01101001], uint8_t(0x3F)); // checkerboard: all six faces ambiguous
        qInfo("%zu table entries, %zu with a loop centre", t.entries.size(), withCentre);
    }

    void randomFieldsAreManifold_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("seed");
        for (int mode = 0; mode < 3; ++mode)
            for (int seed = 1; seed <= 3; ++seed)
                QTest::addRow("mode%d-seed%d", mode, seed) << mode << seed;
    }
    void randomFieldsAreManifold() {
        // 20^3 active cells; boundary corners outside so the surface is closed. Mode 0: phi in
        // {-1, 0, 1} (ties on every ambiguous face, zeros at corners); 1: uniform in (-1, 1);
        // 2: +-{1, 2} (ties and near ties).
        QFETCH(int, mode);
        QFETCH(int, seed);
        const int n = 20;
        Lattice lat;
        lat.origin = Vec3f(-1.0f, 2.0f, 0.5f);
        lat.cell = 0.1f;
        lat.dims = Vec3i(n, n, n);
        std::vector<CellBlock> blocks;
        for (int bz = 0; bz * 8 < n; ++bz)
            for (int by = 0; by * 8 < n; ++by)
                for (int bx = 0; bx * 8 < n; ++bx) {
                    CellBlock b;
                    b.key = blockKey(uint32_t(bx), uint32_t(by), uint32_t(bz));
                    for (int z = 0; z < 8; ++z)
                        for (int y = 0; y < 8; ++y)
                            for (int x = 0; x < 8; ++x)
                                if (bx * 8 + x < n && by * 8 + y < n && bz * 8 + z < n)
                                    b.cells[size_t(z)] |= 1ull << (x + 8 * y);
                    blocks.push_back(b);
                }
        auto value = [&](int i, int j, int k) {
            if (i <= 0 || j <= 0 || k <= 0 || i >= n || j >= n || k >= n)
                return 1.0f;
            const uint64_t h = mix(uint64_t(seed) * 0x9E3779B97F4A7C15ull + uint64_t(i + 64 * j + 4096 * k));
            switch (mode) {
            case 0:
                return float(int(h % 3) - 1);
            case 1:
                return float(double(h >> 11) * 0x1.0p-53 * 2.0 - 1.0);
            default:
                return ((h & 1) ? 1.0f : -1.0f) * float(1 + ((h >> 1) & 1));
            }
        };
        BlockCornerField field;
        field.setCells(lat, blocks);
        field.evaluate([&](const Vec3i& g0, const BlockMask& corners, float* phi) {
            for (int z = 0; z < 8; ++z)
                for (uint64_t m = corners[size_t(z)]; m; m &= m - 1) {
                    const int bit = std::countr_zero(m);
                    phi[bit + 64 * z] = value(g0.x() + (bit & 7), g0.y() + (bit >> 3), g0.z() + z);
                }
        });
        TriangleMesh mesh;
        field.marchingCubes(mesh, true);
        const auto topo = test::checkTopology(mesh);
        QVERIFY(mesh.triangles.size() > 1000);
        QVERIFY2(topo.closedManifold && !topo.duplicateVertices && topo.finite,
                 qPrintable(describe(topo, mesh)));
        for (const Vec3f& nrm : mesh.normals)
            QVERIFY(nrm.allFinite());
    }

    void particleCloudsAreManifold_data() {
        QTest::addColumn<int>("cloud");
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 4; ++seed)
            QTest::addRow("random-%d", seed) << 0 << seed;
        for (int seed = 1; seed <= 2; ++seed)
            QTest::addRow("clustered-%d", seed) << 1 << seed;
        QTest::newRow("coincident") << 2 << 0;
        QTest::newRow("sheets") << 3 << 0;
        QTest::newRow("touching-spheres") << 4 << 0;
        QTest::newRow("splash") << 5 << 7;
    }
    void particleCloudsAreManifold() {
        QFETCH(int, cloud);
        QFETCH(int, seed);
        std::vector<Vec3f> pts;
        std::mt19937 rng{uint32_t(seed)};
        switch (cloud) {
        case 0: // uniform random, about a particle per rest volume: blobs, bridges, tunnels
            pts = randomCloud(uint32_t(seed), 3000, 14.0f * kD0);
            break;
        case 1: { // Gaussian clumps of varying spread
            std::normal_distribution<float> g(0.0f, 1.0f);
            std::uniform_real_distribution<float> u(0.0f, 0.4f);
            for (int c = 0; c < 12; ++c) {
                const Vec3f centre(u(rng), u(rng), u(rng));
                const float spread = kD0 * (0.5f + 3.0f * u(rng));
                for (int k = 0; k < 300; ++k)
                    pts.push_back(centre + spread * Vec3f(g(rng), g(rng), g(rng)));
            }
            break;
        }
        case 2: { // every particle twice, a stack of 20 at one point, pairs 1e-7 apart
            pts = latticeBlock(Vec3f::Zero(), 8, 8, 8, kD0);
            const size_t n = pts.size();
            for (size_t i = 0; i < n; ++i)
                pts.push_back(pts[i]);
            for (int k = 0; k < 20; ++k)
                pts.push_back(Vec3f(0.5f, 0.5f, 0.5f));
            pts.push_back(Vec3f(0.6f, 0.5f, 0.5f));
            pts.push_back(Vec3f(0.6f + 1e-7f, 0.5f, 0.5f));
            break;
        }
        case 3: { // one-particle-thick sheets: flat, tilted and jittered, and a single line
            for (const Vec3f& p : latticeBlock(Vec3f::Zero(), 15, 1, 15, kD0))
                pts.push_back(p);
            std::uniform_real_distribution<float> j(-0.3f * kD0, 0.3f * kD0);
            for (const Vec3f& p : latticeBlock(Vec3f::Zero(), 15, 1, 15, kD0))
                pts.push_back(Vec3f(p.x() + 0.5f, p.y() + 0.3f * p.x() + j(rng), p.z()));
            for (int k = 0; k < 20; ++k)
                pts.push_back(Vec3f(1.0f + float(k) * kD0, 0.0f, 0.0f));
            break;
        }
        case 4: { // two lattice balls touching (centres 2 radius + spacing apart), and two that overlap
            const float radius = 0.1f;
            pts = latticeSphere(Vec3f::Zero(), radius, kD0);
            for (const Vec3f& p : latticeSphere(Vec3f(2.0f * radius + kD0, 0.0f, 0.0f), radius, kD0))
                pts.push_back(p);
            for (const Vec3f& p : shellSphere(Vec3f(0.0f, 0.5f, 0.0f), radius, kD0))
                pts.push_back(p);
            for (const Vec3f& p : shellSphere(Vec3f(2.0f * radius, 0.5f, 0.0f), radius, kD0))
                pts.push_back(p);
            break;
        }
        default:
            pts = damBreakFrame(8000, kD0, uint32_t(seed));
            break;
        }
        for (SurfaceField f : {SurfaceField::Distance, SurfaceField::Anisotropic})
            for (int m = 0; m < 4; ++m) {
                SurfaceReconstructor rec;
                SurfaceSettings s;
                s.particleRadius = kR;
                s.method = SurfaceMethod(m);
                s.field = f;
                s.storeLeaves = false;
                rec.reconstruct(pts, {}, s);
                const auto& mesh = rec.result().mesh;
                const auto topo = test::checkTopology(mesh);
                QVERIFY2(topo.closedManifold && !topo.duplicateVertices && topo.finite,
                         qPrintable(QString("%1 %2: %3")
                                        .arg(surfaceMethodName(s.method))
                                        .arg(surfaceFieldName(f))
                                        .arg(describe(topo, mesh))));
                for (float l : rec.result().lambda)
                    QVERIFY(std::isfinite(l));
            }
    }

    void zeroAtLatticeCorners() {
        // Powers of two throughout, so that phi is exactly 0 at a corner: an isolated particle has
        // phi = |x - x_j| - r, the lattice starts R + L below the particles' box, and with L = r
        // the corner 4 cells along an axis lies exactly r from the particle.
        const float r = 1.0f / 64.0f;
        std::vector<Vec3f> pts = {Vec3f::Zero(), Vec3f(1.0f, 0.0f, 0.0f), Vec3f(0.0f, 0.5f, 0.25f)};
        SurfaceSettings s;
        s.particleRadius = r;
        s.leafSize = r;
        s.storeLeaves = false;
        s.field = SurfaceField::Distance; // phi = |x - x_j| - r is the distance field's
        for (int m = 0; m < 4; ++m) {
            s.method = SurfaceMethod(m);
            SurfaceReconstructor rec;
            rec.reconstruct(pts, {}, s);
            QCOMPARE(rec.distanceAt(Vec3f(-r, 0.0f, 0.0f)), 0.0f); // the case under test occurs
            const auto& mesh = rec.result().mesh;
            const auto topo = test::checkTopology(mesh);
            QVERIFY2(
                topo.closedManifold && !topo.duplicateVertices && topo.finite,
                qPrintable(QString("%1: %2").arg(surfaceMethodName(s.method)).arg(describe(topo, mesh))));
            QCOMPARE(topo.euler, 6L); // three spheres
        }
    }
};

QTEST_APPLESS_MAIN(TestMeshManifold)
#include "test_mesh_manifold.moc"
