// Surface reconstruction: detection (Marrone 2010), octree (Shao 2016), distance field and
// marching cubes, and the three baselines on the same particles.
#include "MeshChecks.h"
#include "common/SymmetricEigen3.h"
#include "spatial/CubicSplineKernel.h"
#include "spatial/NeighborGrid.h"
#include "surface/ParticleShapes.h"
#include "surface/SurfaceReconstructor.h"

#include <Eigen/Eigenvalues>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <tuple>

using namespace octo;

namespace {
constexpr float kR = 0.01f, kD0 = 0.02f;

// Reference detection, written plainly (per particle, CubicSplineKernel, Eigen's solver) as the
// code was before the SIMD rewrite: rho_i = m sum W_ij, L_i = -sum V_j x_ij (x) gradW_ij.
std::vector<float> referenceLambda(const std::vector<Vec3f>& pts, float r, float rho0) {
    const float h = 4.0f * r, mass = rho0 * 8.0f * r * r * r;
    const CubicSplineKernel kernel(h);
    NeighborGrid grid;
    grid.setDomainFromPoints(pts, h);
    grid.build(pts);
    std::vector<Vec3f> xs;
    grid.gather(std::span<const Vec3f>(pts), xs);
    const size_t n = pts.size();
    std::vector<float> rho(n), lambdaSorted(n), lambda(n);
    for (size_t i = 0; i < n; ++i) {
        double sum = 0.0;
        grid.forEachNeighbor(xs[i], h, xs,
                             [&](uint32_t, const Vec3f& xj, float) { sum += kernel.W(xs[i] - xj); });
        rho[i] = float(mass * sum);
    }
    for (size_t i = 0; i < n; ++i) {
        Mat3d L = Mat3d::Zero();
        grid.forEachNeighbor(xs[i], h, xs, [&](uint32_t j, const Vec3f& xj, float) {
            const Vec3d xij = (xs[i] - xj).cast<double>();
            L -= double(mass / rho[j]) * xij * kernel.gradW(xs[i] - xj).cast<double>().transpose();
        });
        Eigen::SelfAdjointEigenSolver<Mat3d> es;
        es.computeDirect(0.5 * (L + L.transpose()), Eigen::EigenvaluesOnly);
        lambdaSorted[i] = float(es.eigenvalues()[0]);
    }
    for (size_t k = 0; k < n; ++k)
        lambda[grid.order()[k]] = lambdaSorted[k];
    return lambda;
}

// Reference distance field, written plainly (every particle within R, sums in double, Eigen's
// general solver): phi(x) = |x - xbar| - r f(EVmax) (Zhu & Bridson 2005, Solenthaler 2007).
double referencePhi(const Vec3f& x, const NeighborGrid& grid, const std::vector<Vec3f>& xs, float r, float R,
                    float tLow, float tHigh) {
    double sw = 0.0;
    Vec3d sd = Vec3d::Zero(), g = Vec3d::Zero();
    Mat3d c = Mat3d::Zero();
    grid.forEachNeighbor(x, R, xs, [&](uint32_t, const Vec3f& xj, float) {
        const Vec3d d = (xj - x).cast<double>();
        const double q = 1.0 - d.squaredNorm() / (double(R) * R);
        if (q <= 0.0)
            return;
        const double cg = 6.0 * q * q / (double(R) * R);
        sw += q * q * q;
        sd += q * q * q * d;
        g += cg * d;
        c += cg * d * d.transpose();
    });
    if (!(sw > 0.0))
        return R;
    const Vec3d dbar = sd / sw;
    const Mat3d J = (c - dbar * g.transpose()) / sw;
    Eigen::SelfAdjointEigenSolver<Mat3d> es(0.5 * (J + J.transpose()), Eigen::EigenvaluesOnly);
    const double ev = es.eigenvalues()[2];
    double f = 1.0;
    if (ev > tHigh)
        f = 0.0;
    else if (ev >= tLow) {
        const double gam = (tHigh - ev) / (tHigh - tLow);
        f = gam * gam * gam - 3.0 * gam * gam + 3.0 * gam;
    }
    return dbar.norm() - r * f;
}

// Reference octree, written plainly after Shao et al. 2016 §5: every node filters its parent's
// surface particles S by its box enlarged by l_S; surface nodes split down to depth D; a node with
// S empty is an interior leaf when a fluid particle lies in its box enlarged by l_F.
struct ReferenceOctree {
    Lattice lattice;
    int depth = 0;
    float lS = 0.0f, lF = 0.0f;
    const std::vector<Vec3f>* xs = nullptr;
    uint64_t nodes = 0;
    std::vector<OctreeLeaf> leaves;

    void box(int d, const Vec3i& c, Vec3f& lo, Vec3f& hi) const {
        const int cells = 1 << (depth - d);
        for (int a = 0; a < 3; ++a) {
            lo[a] = lattice.origin[a] + float(c[a] * cells) * lattice.cell;
            hi[a] = lattice.origin[a] + float((c[a] + 1) * cells) * lattice.cell;
        }
    }
    void node(int d, const Vec3i& c, const std::vector<Vec3f>& S) {
        ++nodes;
        Vec3f lo, hi;
        box(d, c, lo, hi);
        std::vector<Vec3f> mine;
        for (const Vec3f& p : S)
            if ((p.array() >= lo.array() - lS).all() && (p.array() <= hi.array() + lS).all())
                mine.push_back(p);
        if (mine.empty() || d == depth) {
            OctreeLeaf l;
            l.min = lo;
            l.edge = hi.x() - lo.x();
            l.depth = uint8_t(d);
            l.cls = mine.empty() ? CellClass::Exterior : CellClass::Surface;
            if (mine.empty()) {
                const Vec3f flo = lo.array() - lF, fhi = hi.array() + lF;
                for (const Vec3f& p : *xs)
                    if ((p.array() >= flo.array()).all() && (p.array() <= fhi.array()).all()) {
                        l.cls = CellClass::Interior;
                        break;
                    }
            }
            leaves.push_back(l);
            return;
        }
        for (int k = 0; k < 8; ++k)
            node(d + 1, c * 2 + Vec3i(k & 1, (k >> 1) & 1, k >> 2), mine);
    }
};

// The paper's distance field (Solenthaler 2007): the expected radii, the plain reference field and
// the method comparisons below are its; the anisotropic default has its own tests
// (test_surface_quality) and runs through methodsAgree too.
SurfaceSettings settingsFor(SurfaceMethod m, SurfaceField f = SurfaceField::Distance) {
    SurfaceSettings s;
    s.particleRadius = kR;
    s.method = m;
    s.field = f;
    s.storeLeaves = false;
    return s;
}
} // namespace

class TestSurfaceReconstruction : public QObject {
    Q_OBJECT
private slots:
    void detectionRestingBlock() {
        const int n = 24;
        const auto pts = latticeBlock(Vec3f::Zero(), n, n, n, kD0);
        SurfaceReconstructor rec;
        SurfaceSettings s = settingsFor(SurfaceMethod::Octree);
        s.computeMesh = false;
        rec.reconstruct(pts, {}, s);
        const auto& res = rec.result();
        QCOMPARE(res.lambda.size(), pts.size());
        // The free faces are the block's fluid boundary, half a spacing (r) beyond the outermost
        // particle centres; depth = distance of a particle centre to the nearest face.
        size_t deep = 0, deepFlagged = 0, nearFace = 0, nearFaceFlagged = 0;
        double lambdaDeepMin = 10, lambdaDeepMax = -10;
        for (size_t i = 0; i < pts.size(); ++i) {
            const Vec3f q = pts[i] / kD0;
            float layer = 1e9f;
            for (int a = 0; a < 3; ++a)
                layer = std::min({layer, q[a], float(n - 1) - q[a]});
            const float depth = layer + 0.5f; // in spacings
            if (depth <= 1.0f + 1e-3f) {
                ++nearFace;
                nearFaceFlagged += res.surfaceFlag[i];
            }
            if (depth > 3.0f + 1e-3f) {
                ++deep;
                deepFlagged += res.surfaceFlag[i];
                lambdaDeepMin = std::min(lambdaDeepMin, double(res.lambda[i]));
                lambdaDeepMax = std::max(lambdaDeepMax, double(res.lambda[i]));
            }
        }
        qInfo("near-face %zu/%zu flagged, deep %zu/%zu flagged, deep lambda in [%.3f, %.3f]", nearFaceFlagged,
              nearFace, deepFlagged, deep, lambdaDeepMin, lambdaDeepMax);
        QCOMPARE(nearFaceFlagged, nearFace);
        QVERIFY(double(deepFlagged) < 0.02 * double(deep));
        QVERIFY(std::abs(lambdaDeepMin - 1.0) <= 0.1 && std::abs(lambdaDeepMax - 1.0) <= 0.1);
        // Surface particles are a minority (the paper: < 20 % in typical scenes; here a small block).
        QVERIFY(res.stats.surfaceParticles < pts.size() / 2);

        // An isolated particle: L = 0, lambda = 0, flagged.
        auto withLoner = pts;
        withLoner.push_back(Vec3f(2.0f, 2.0f, 2.0f));
        rec.reconstruct(withLoner, {}, s);
        QVERIFY(std::abs(rec.result().lambda.back()) < 1e-6f);
        QCOMPARE(int(rec.result().surfaceFlag.back()), 1);
    }

    void detectionMatchesReference_data() {
        QTest::addColumn<int>("shape");
        QTest::newRow("dambreak") << 0;
        QTest::newRow("jittered-block") << 1;
        QTest::newRow("random") << 2;
    }
    void detectionMatchesReference() {
        // The fast standalone detection gives the same lambda as the plain reference (issue 12:
        // |dlambda| <= 1e-4 on a dam-break frame).
        QFETCH(int, shape);
        std::vector<Vec3f> pts;
        std::mt19937 rng{7u};
        if (shape == 0) {
            pts = damBreakFrame(30000, kD0);
        } else if (shape == 1) {
            std::uniform_real_distribution<float> j(-0.2f * kD0, 0.2f * kD0);
            for (const Vec3f& p : latticeBlock(Vec3f::Zero(), 25, 20, 15, kD0))
                pts.push_back(p + Vec3f(j(rng), j(rng), j(rng)));
        } else {
            std::uniform_real_distribution<float> u(0.0f, 0.3f);
            for (int k = 0; k < 5000; ++k)
                pts.push_back(Vec3f(u(rng), u(rng), u(rng)));
        }
        const auto ref = referenceLambda(pts, kR, 1000.0f);
        SurfaceReconstructor rec;
        SurfaceSettings s = settingsFor(SurfaceMethod::Octree);
        s.computeMesh = false;
        rec.reconstruct(pts, {}, s);
        const auto& lambda = rec.result().lambda;
        QCOMPARE(lambda.size(), ref.size());
        double worst = 0.0;
        size_t flagsDiffer = 0, surface = 0;
        for (size_t i = 0; i < pts.size(); ++i) {
            worst = std::max(worst, std::abs(double(lambda[i]) - double(ref[i])));
            surface += rec.result().surfaceFlag[i];
            flagsDiffer += (ref[i] <= s.lambdaMin) != bool(rec.result().surfaceFlag[i]);
        }
        qInfo("%zu particles, %zu surface, max |dlambda| = %.2e, flags differing %zu", pts.size(), surface,
              worst, flagsDiffer);
        QVERIFY(worst <= 1e-4);
        QVERIFY(surface > 0 && surface < pts.size());
        QVERIFY(flagsDiffer <= pts.size() / 10000); // only particles within 1e-4 of the threshold
        // The closed-form eigenvalue agrees with Eigen's solver on random symmetric matrices.
        std::uniform_real_distribution<float> u(-2.0f, 2.0f);
        for (int k = 0; k < 2000; ++k) {
            Mat3f m;
            for (int a = 0; a < 3; ++a)
                for (int b = a; b < 3; ++b)
                    m(a, b) = m(b, a) = (k % 3 == 0 && a != b) ? 1e-4f * u(rng) : u(rng);
            Eigen::SelfAdjointEigenSolver<Mat3d> es(m.cast<double>(), Eigen::EigenvaluesOnly);
            QVERIFY(std::abs(double(smallestSymmetricEigenvalue(m)) - es.eigenvalues()[0]) <= 1e-5);
            // The distance field's EVmax, of a non-symmetric matrix's symmetric part.
            Mat3f j = m;
            j(0, 1) += u(rng);
            j(2, 0) -= u(rng);
            Eigen::SelfAdjointEigenSolver<Mat3d> ej((0.5 * (j + j.transpose())).cast<double>(),
                                                    Eigen::EigenvaluesOnly);
            QVERIFY(std::abs(double(largestSymmetricEigenvalue(j)) - ej.eigenvalues()[2]) <= 1e-5);
        }
        // Repeated eigenvalues (r = -1 and r = 1 of the shifted cubic) and a rank-one matrix.
        QCOMPARE(largestSymmetricEigenvalue(Vec3f(2, 2, -1).asDiagonal()), 2.0f);
        QCOMPARE(largestSymmetricEigenvalue(Vec3f(3, -1, -1).asDiagonal()), 3.0f);
        QCOMPARE(smallestSymmetricEigenvalue(Vec3f(2, 2, -1).asDiagonal()), -1.0f);
        QVERIFY(std::abs(largestSymmetricEigenvalue(Vec3f(1, 1, 1) * Vec3f(1, 1, 1).transpose()) - 3.0f) <=
                1e-6f);
        QCOMPARE(smallestSymmetricEigenvalue(Mat3f::Zero()), 0.0f);
        QCOMPARE(smallestSymmetricEigenvalue(Mat3f::Identity()), 1.0f);
    }

    void sphereIsClosedManifold() {
        // Lattice-sampled ball: terraced outer layer, still one closed surface.
        {
            const auto pts = latticeSphere(Vec3f::Zero(), 0.5f, kD0);
            SurfaceReconstructor rec;
            rec.reconstruct(pts, {}, settingsFor(SurfaceMethod::Octree));
            const auto topo = test::checkTopology(rec.result().mesh);
            QVERIFY(topo.closedManifold);
            QCOMPARE(topo.euler, 2L);
            QVERIFY(!topo.duplicateVertices);
        }
        // Shell-sampled ball (smooth outer layer at radius - r): the distance check.
        const float radius = 0.5f;
        const auto pts = shellSphere(Vec3f::Zero(), radius, kD0);
        SurfaceReconstructor rec;
        rec.reconstruct(pts, {}, settingsFor(SurfaceMethod::Octree));
        const auto& res = rec.result();
        const auto topo = test::checkTopology(res.mesh);
        qInfo("sphere: %zu particles, %llu surface, %llu cubes (uniform %llu), %zu vertices, %zu triangles, "
              "%.1f ms",
              pts.size(), (unsigned long long)res.stats.surfaceParticles, (unsigned long long)res.stats.cubes,
              (unsigned long long)res.stats.cubesUniform, res.mesh.vertices.size(), res.mesh.triangles.size(),
              res.stats.tTotalMs);
        QVERIFY2(topo.closedManifold,
                 qPrintable(QString("bad edges: %1 %2").arg(topo.badEdges).arg(topo.problem.c_str())));
        QCOMPARE(topo.euler, 2L);
        QVERIFY(!topo.duplicateVertices);
        QCOMPARE(res.mesh.normals.size(), res.mesh.vertices.size());

        // Expected surface radius. The shells sit at radius - r - k d0, so the ball of fluid they
        // stand for has the given radius. Flat-face model: particle layers at depths r + k d0 below
        // the boundary, a point at height t above it. Integrating w = (1 - s^2)^3 over a layer's
        // plane gives pi R^2 (1 - u^2)^4 / 4 with u = (layer height - point height) / R, so
        // x - xbar = sum_k (1 - u_k^2)^4 (t + r + k d0) / sum_k (1 - u_k^2)^4. Deep in a flat
        // face grad xbar has eigenvalues 1 (tangential) and < 1 (normal), so EVmax = 1 and
        // f = 1 - (1 - (3.5 - 1) / 3.1)^3 = 0.9927. phi = |x - xbar| - r f = 0 then gives
        // t = -0.135 r (R = 4r; it would be +0.014 r with the mass smeared continuously). The
        // sphere's curvature lowers the boundary seen by the kernel by <a^2> / (2 radius), with
        // <a^2> = 0.2 R^2 the kernel-weighted mean square lateral offset: 0.032 r. Expected
        // surface: radius - 0.167 r.
        const double expected = double(radius) - 0.167 * double(kR);
        double worst = 0.0, mean = 0.0;
        for (const Vec3f& v : res.mesh.vertices) {
            const double dev = double(v.norm()) - expected;
            mean += dev;
            worst = std::max(worst, std::abs(dev));
        }
        mean /= double(res.mesh.vertices.size());
        qInfo("sphere radius: expected %.5f, mean deviation %.5f (%.2f r), worst %.5f (%.2f r)", expected,
              mean, mean / kR, worst, worst / kR);
        QVERIFY(worst <= 0.5 * kR);
        // Outward orientation: normals point away from the centre.
        size_t outward = 0;
        for (size_t i = 0; i < res.mesh.vertices.size(); ++i)
            outward += res.mesh.normals[i].dot(res.mesh.vertices[i]) > 0.0f;
        QCOMPARE(outward, res.mesh.vertices.size());
    }

    void thinSheetHasNoHoles() {
        const int n = 50;
        const auto pts = latticeBlock(Vec3f::Zero(), n, 1, n, kD0);
        const double sheetArea = double(n * kD0) * double(n * kD0); // each particle covers d0^2
        for (float enlargement : {1.0f, 0.5f}) {
            for (SurfaceMethod m : {SurfaceMethod::Octree, SurfaceMethod::Uniform}) {
                SurfaceReconstructor rec;
                SurfaceSettings s = settingsFor(m);
                s.sEnlargementFactor = enlargement;
                rec.reconstruct(pts, {}, s);
                const auto& mesh = rec.result().mesh;
                const auto topo = test::checkTopology(mesh);
                double projected = 0.0; // area projected on the sheet's plane, both sides
                for (const auto& t : mesh.triangles) {
                    const Vec3f c = (mesh.vertices[t[1]] - mesh.vertices[t[0]])
                                        .cross(mesh.vertices[t[2]] - mesh.vertices[t[0]]);
                    projected += 0.5 * std::abs(double(c.y()));
                }
                projected *= 0.5;
                qInfo("sheet (%s, l = %.1f R): projected area %.4f vs %.4f, closed %d, euler %ld",
                      surfaceMethodName(m), enlargement, projected, sheetArea, int(topo.closedManifold),
                      topo.euler);
                QVERIFY(topo.closedManifold);
                QCOMPARE(topo.euler, 2L); // one closed sheet: no holes (a hole would lower it by 2)
                QVERIFY(std::abs(projected - sheetArea) <= 0.05 * sheetArea);
            }
        }
    }

    void octreeScalesWithSurface() {
        uint64_t octree[2], uniform[2];
        for (int k = 0; k < 2; ++k) {
            const int n = 20 << k;
            SurfaceReconstructor rec;
            rec.reconstruct(latticeBlock(Vec3f::Zero(), n, n, n, kD0), {},
                            settingsFor(SurfaceMethod::Octree));
            octree[k] = rec.result().stats.cubes;
            uniform[k] = rec.result().stats.cubesUniform;
        }
        const double ro = double(octree[1]) / double(octree[0]), ru = double(uniform[1]) / double(uniform[0]);
        qInfo("block 20^3 -> 40^3: octree cubes %llu -> %llu (x%.2f), uniform %llu -> %llu (x%.2f)",
              (unsigned long long)octree[0], (unsigned long long)octree[1], ro,
              (unsigned long long)uniform[0], (unsigned long long)uniform[1], ru);
        QVERIFY(ro <= 4.5);
        // The uniform box is the particles' box plus a margin R + L per side, so its cell count
        // goes as (a + 2(R + L))^3: x6.2 here, tending to x8 for large blocks.
        QVERIFY(ru > 6.0 && ru <= 8.0);
        QVERIFY(ru > ro + 1.5);
    }

    void methodsAgree_data() {
        QTest::addColumn<int>("shape");
        QTest::addColumn<int>("field");
        for (SurfaceField f : {SurfaceField::Distance, SurfaceField::Anisotropic}) {
            const std::string n = surfaceFieldName(f);
            QTest::newRow(("sphere " + n).c_str()) << 0 << int(f);
            QTest::newRow(("block " + n).c_str()) << 1 << int(f);
            QTest::newRow(("sheet " + n).c_str()) << 2 << int(f);
            QTest::newRow(("dambreak " + n).c_str()) << 3 << int(f);
        }
    }
    void methodsAgree() {
        QFETCH(int, shape);
        QFETCH(int, field);
        std::vector<Vec3f> pts = shape == 0   ? shellSphere(Vec3f::Zero(), 0.3f, kD0)
                                 : shape == 1 ? latticeBlock(Vec3f::Zero(), 30, 20, 25, kD0)
                                 : shape == 2 ? latticeBlock(Vec3f::Zero(), 40, 1, 30, kD0)
                                              : damBreakFrame(20000, kD0); // wedge, tongue and splash
        TriangleMesh meshes[4];
        uint64_t cubes[4];
        for (int m = 0; m < 4; ++m) {
            SurfaceReconstructor rec;
            SurfaceSettings s = settingsFor(SurfaceMethod(m), SurfaceField(field));
            s.sEnlargementFactor = 1.0f; // the paper's l = R, the narrow band's rule
            rec.reconstruct(pts, {}, s);
            meshes[m] = rec.result().mesh;
            cubes[m] = rec.result().stats.cubes;
        }
        qInfo("cubes octree %llu uniform %llu narrow %llu sparse %llu; vertices %zu %zu %zu %zu",
              (unsigned long long)cubes[0], (unsigned long long)cubes[1], (unsigned long long)cubes[2],
              (unsigned long long)cubes[3], meshes[0].vertices.size(), meshes[1].vertices.size(),
              meshes[2].vertices.size(), meshes[3].vertices.size());
        const auto& uni = meshes[int(SurfaceMethod::Uniform)];
        const auto& sparse = meshes[int(SurfaceMethod::Sparse)];
        QVERIFY(!uni.empty());
        QVERIFY(uni.vertices == sparse.vertices);
        QVERIFY(uni.triangles == sparse.triangles);
        for (SurfaceMethod m : {SurfaceMethod::Octree, SurfaceMethod::Narrow}) {
            const auto& other = meshes[int(m)];
            QCOMPARE(other.vertices.size(), uni.vertices.size());
            QCOMPARE(other.triangles.size(), uni.triangles.size());
            QVERIFY(test::maxVertexDifference(other, uni) <= 1e-4);
        }
        QVERIFY(cubes[int(SurfaceMethod::Octree)] < cubes[int(SurfaceMethod::Uniform)]);
        QCOMPARE(cubes[int(SurfaceMethod::Octree)], cubes[int(SurfaceMethod::Narrow)]); // same rule, no tree

        // The default S-set enlargement l = 0.75 R (r + sqrt(3) L at the automatic L) loses nothing.
        SurfaceReconstructor rec;
        SurfaceSettings tight = settingsFor(SurfaceMethod::Octree, SurfaceField(field));
        tight.sEnlargementFactor = 0.75f;
        rec.reconstruct(pts, {}, tight);
        qInfo("l = 0.75 R: %llu cubes (%.0f %% of l = R)", (unsigned long long)rec.result().stats.cubes,
              100.0 * double(rec.result().stats.cubes) / double(cubes[0]));
        QVERIFY(rec.result().stats.cubes < cubes[0]);
        QVERIFY(rec.result().mesh.triangles == uni.triangles);
        QVERIFY(test::maxVertexDifference(rec.result().mesh, uni) == 0.0);
    }

    void distanceFieldMatchesPlainReference_data() {
        QTest::addColumn<int>("shape");
        QTest::newRow("sphere") << 0;
        QTest::newRow("dambreak") << 1;
    }
    void distanceFieldMatchesPlainReference() {
        // Every mesh vertex on a lattice edge must sit where the plain reference field puts the
        // crossing: the fast corner evaluation (shared candidate lists, SIMD sums, closed-form
        // eigenvalue) may only differ from it by rounding.
        QFETCH(int, shape);
        const auto pts = shape == 0 ? shellSphere(Vec3f::Zero(), 0.25f, kD0) : damBreakFrame(15000, kD0);
        const SurfaceSettings s = settingsFor(SurfaceMethod::Octree);
        SurfaceReconstructor rec;
        rec.reconstruct(pts, {}, s);
        const auto& mesh = rec.result().mesh;
        const Lattice& lat = rec.lattice();
        const float R = s.kernelRadiusFactor * s.particleRadius;
        NeighborGrid grid;
        grid.setDomainFromPoints(pts, R);
        grid.build(pts);
        std::vector<Vec3f> xs;
        grid.gather(std::span<const Vec3f>(pts), xs);
        auto phiAt = [&](const Vec3i& c) {
            return referencePhi(lat.corner(c.x(), c.y(), c.z()), grid, xs, s.particleRadius, R, s.tLow,
                                s.tHigh);
        };
        size_t onEdges = 0, nearZero = 0;
        double worst = 0.0;
        for (const Vec3f& v : mesh.vertices) {
            const Vec3d u = ((v - lat.origin).cast<double>()) / double(lat.cell);
            int axis = -1, fractional = 0;
            for (int a = 0; a < 3; ++a)
                if (std::abs(u[a] - std::round(u[a])) > 1e-3) {
                    axis = a;
                    ++fractional;
                }
            if (fractional != 1)
                continue; // a loop-centre vertex inside a cell
            ++onEdges;
            Vec3i c0;
            for (int a = 0; a < 3; ++a)
                c0[a] = int(a == axis ? std::floor(u[a]) : std::round(u[a]));
            Vec3i c1 = c0;
            c1[axis] += 1;
            const double p0 = phiAt(c0), p1 = phiAt(c1);
            if (std::min(std::abs(p0), std::abs(p1)) < 1e-6 * kR) {
                ++nearZero; // a corner this close to zero may take either sign after rounding
                continue;
            }
            QVERIFY2((p0 < 0.0) != (p1 < 0.0), "the reference field has no crossing on a vertex's edge");
            const double t = std::clamp(p0 / (p0 - p1), 1e-3, 1.0 - 1e-3);
            worst = std::max(worst, std::abs(u[axis] - (double(c0[axis]) + t)) * double(lat.cell));
        }
        qInfo("%zu vertices on edges (%zu beside a zero corner), worst offset from the reference %.3g m "
              "(%.2g L)",
              onEdges, nearZero, worst, worst / double(lat.cell));
        QVERIFY(onEdges > mesh.vertices.size() / 2);
        QVERIFY(worst <= 2e-4 * double(lat.cell)); // float rounding near small |phi|
    }

    void octreeMatchesPlainReference_data() {
        QTest::addColumn<int>("shape");
        QTest::addColumn<float>("enlargement");
        QTest::newRow("sphere") << 0 << 1.0f;
        QTest::newRow("dambreak") << 1 << 1.0f;
        QTest::newRow("dambreak l=0.75R") << 1 << 0.75f;
    }
    void octreeMatchesPlainReference() {
        // The fast build (top levels split in parallel, the last three levels read off per-block
        // cell masks) must give the paper's tree: the same nodes, leaves and classes.
        QFETCH(int, shape);
        QFETCH(float, enlargement);
        const auto pts = shape == 0 ? shellSphere(Vec3f::Zero(), 0.12f, kD0) : damBreakFrame(4000, kD0);
        SurfaceSettings s = settingsFor(SurfaceMethod::Octree);
        s.storeLeaves = true;
        s.sEnlargementFactor = enlargement;
        SurfaceReconstructor rec;
        rec.reconstruct(pts, {}, s);
        const auto& res = rec.result();
        const float R = s.kernelRadiusFactor * s.particleRadius;
        std::vector<Vec3f> surface;
        for (size_t i = 0; i < pts.size(); ++i)
            if (res.surfaceFlag[i])
                surface.push_back(pts[i]);
        ReferenceOctree ref;
        ref.lattice = rec.lattice();
        ref.depth = Octree_Shao2016::depthFor(ref.lattice.dims);
        ref.lS = enlargement * R;
        ref.lF = R;
        ref.xs = &pts;
        ref.node(0, Vec3i::Zero(), surface);
        auto key = [](const OctreeLeaf& l) {
            return std::make_tuple(l.depth, l.min.z(), l.min.y(), l.min.x(), int(l.cls), l.edge);
        };
        auto sorted = [&](std::vector<OctreeLeaf> v) {
            std::sort(v.begin(), v.end(),
                      [&](const OctreeLeaf& a, const OctreeLeaf& b) { return key(a) < key(b); });
            return v;
        };
        const auto mine = sorted(res.leaves), theirs = sorted(ref.leaves);
        qInfo("%zu surface particles, depth %d: %llu nodes, %zu leaves (reference %llu, %zu)", surface.size(),
              ref.depth, (unsigned long long)res.stats.octreeNodes, mine.size(),
              (unsigned long long)ref.nodes, theirs.size());
        QCOMPARE(res.stats.octreeNodes, ref.nodes);
        QCOMPARE(res.stats.octreeLeaves, uint64_t(theirs.size()));
        QCOMPARE(mine.size(), theirs.size());
        size_t differ = 0;
        for (size_t i = 0; i < mine.size(); ++i)
            differ += key(mine[i]) != key(theirs[i]);
        QCOMPARE(differ, size_t(0));
        const auto surfaceLeaves = size_t(std::count_if(
            theirs.begin(), theirs.end(), [](const OctreeLeaf& l) { return l.cls == CellClass::Surface; }));
        QCOMPARE(res.stats.cubes, uint64_t(surfaceLeaves));
    }

    void octreeCellsMatchTree_data() {
        octreeMatchesPlainReference_data();
        QTest::newRow("ball, L = 4r (depth 3: one block)") << 2 << 1.0f;
        QTest::newRow("two balls 5 m apart (block grid too large to mark: the tree)") << 3 << 0.75f;
    }
    void octreeCellsMatchTree() {
        // Without stored leaves the surface leaves are marked cell by cell (no top-down lists):
        // the same counts, cells and mesh as the tree built for drawing.
        QFETCH(int, shape);
        QFETCH(float, enlargement);
        auto pts = shape == 0   ? shellSphere(Vec3f::Zero(), 0.12f, kD0)
                   : shape == 1 ? damBreakFrame(4000, kD0)
                                : latticeSphere(Vec3f::Zero(), shape == 2 ? 0.03f : 0.05f, kD0);
        if (shape == 3)
            for (const Vec3f& p : latticeSphere(Vec3f::Constant(5.0f), 0.05f, kD0))
                pts.push_back(p);
        SurfaceSettings s = settingsFor(SurfaceMethod::Octree);
        s.sEnlargementFactor = enlargement;
        if (shape == 2)
            s.leafSize = 4.0f * kR;
        SurfaceReconstructor tree, cells;
        s.storeLeaves = true;
        tree.reconstruct(pts, {}, s);
        s.storeLeaves = false;
        cells.reconstruct(pts, {}, s);
        const SurfaceStats &a = tree.result().stats, &b = cells.result().stats;
        QVERIFY(a.cubes > 0);
        QCOMPARE(b.octreeNodes, a.octreeNodes);
        QCOMPARE(b.octreeLeaves, a.octreeLeaves);
        QCOMPARE(b.cubes, a.cubes);
        QCOMPARE(b.corners, a.corners);
        QVERIFY(cells.result().leaves.empty());
        if (shape == 2)
            QVERIFY(b.octreeDepth <= 3);
        const TriangleMesh &ma = tree.result().mesh, &mb = cells.result().mesh;
        QCOMPARE(mb.vertices.size(), ma.vertices.size());
        QVERIFY(mb.vertices == ma.vertices);
        QVERIFY(mb.triangles == ma.triangles);
    }

    void workspaceIsReusedAndInputChecked() {
        SurfaceReconstructor rec;
        const auto pts = latticeSphere(Vec3f::Zero(), 0.2f, kD0);
        rec.reconstruct(pts, {}, settingsFor(SurfaceMethod::Octree));
        const auto first = rec.result().stats;
        rec.reconstruct(pts, {}, settingsFor(SurfaceMethod::Octree));
        const auto second = rec.result().stats;
        QCOMPARE(second.triangles, first.triangles);
        // Capacities are kept: a repeat frame allocates (almost) nothing new. Per-thread scratch
        // may still grow a little when the scheduler hands a thread a bigger subtree.
        QVERIFY(second.peakBytes <= first.peakBytes + first.peakBytes / 10);
        QVERIFY(first.peakBytes > 0);
        // Given densities equal to the computed ones reproduce lambda.
        std::vector<float> rho(pts.size(), 1000.0f);
        rec.reconstruct(pts, rho, settingsFor(SurfaceMethod::Octree));
        QVERIFY(rec.result().stats.triangles > 0);
        auto bad = pts;
        bad[3].y() = std::nanf("");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 rec.reconstruct(bad, {}, settingsFor(SurfaceMethod::Octree)));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, rec.reconstruct(pts, std::vector<float>(3, 1.0f),
                                                                        settingsFor(SurfaceMethod::Octree)));
        rec.reconstruct({}, {}, settingsFor(SurfaceMethod::Octree));
        QVERIFY(rec.result().mesh.empty());
    }
};

QTEST_APPLESS_MAIN(TestSurfaceReconstruction)
#include "test_surface_reconstruction.moc"
