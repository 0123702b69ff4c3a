// FluidModel's cached neighbour lists against brute force: every fluid and boundary neighbour
// within h is listed once, and the walls' reversed lists are each wall sample's fluid neighbours in
// ascending order. The search skips the boundary for particles whose boundary cell has no samples
// in its 3x3x3 block and copies the boundary's positions only when it changed: a body moved
// between steps must still be found where it went.
#include "sph/BoundaryModel.h"
#include "sph/FluidModel.h"

#include <QtTest>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

using namespace octo;

namespace {

std::vector<uint32_t> sorted(const uint32_t* p, uint32_t count) {
    std::vector<uint32_t> v(p, p + count);
    std::sort(v.begin(), v.end());
    return v;
}

/// Points on the faces of a cube of edge a centred at the origin, spacing ~d.
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

/// Counts the boundary pairs found into boundaryPairs (the caller checks the case is not empty).
void checkLists(const FluidModel& model, size_t& boundaryPairs) {
    const float h2 = model.supportRadius() * model.supportRadius();
    const auto& x = model.state.positions;
    const auto xb = model.boundary().sortedPositions();
    const auto wall = model.boundary().sortedWall();
    const auto& L = model.lists;
    const size_t n = x.size();
    boundaryPairs = 0;
    std::vector<std::vector<uint32_t>> wallFluid(xb.size());
    for (uint32_t i = 0; i < n; ++i) {
        std::vector<uint32_t> fluid, boundary;
        for (uint32_t j = 0; j < n; ++j)
            if (j != i && (x[i] - x[j]).squaredNorm() < h2)
                fluid.push_back(j);
        for (uint32_t k = 0; k < xb.size(); ++k)
            if ((x[i] - xb[k]).squaredNorm() < h2) {
                boundary.push_back(k);
                if (wall[k])
                    wallFluid[k].push_back(i);
            }
        QVERIFY2(sorted(L.fluid(i), L.fluidCount[i]) == fluid,
                 qPrintable(QString("fluid list of %1").arg(i)));
        QVERIFY2(sorted(L.boundary(i), L.boundaryCount[i]) == boundary,
                 qPrintable(QString("boundary list of %1").arg(i)));
        boundaryPairs += boundary.size();
    }
    for (uint32_t k = 0; k < xb.size(); ++k) {
        const std::vector<uint32_t> listed(L.wallFluid.begin() + L.wallBegin[k],
                                           L.wallFluid.begin() + L.wallBegin[k + 1]);
        // Ascending i, as brute force visits them.
        QVERIFY2(listed == wallFluid[k], qPrintable(QString("wall list of %1").arg(k)));
    }
}

} // namespace

/// A fluid model over a boundary, configured for particles of radius r in box (the domain).
struct Setup {
    BoundaryModel boundary;
    FluidModel model{boundary};
    Setup(const Aabb& box, float r) {
        SphConfig c;
        c.particleRadius = r;
        c.domain = box;
        model.setConfig(c);
    }
};

class TestNeighborLists : public QObject {
    Q_OBJECT
private slots:
    void listsEqualBruteForceWithWallsAndAMovingBody() {
        const float r = 0.02f, d0 = 2.0f * r;
        const Aabb box(Vec3f::Zero(), Vec3f(0.8f, 0.5f, 0.4f));
        Setup setup(box, r);
        BoundaryModel& boundary = setup.boundary;
        FluidModel& model = setup.model;
        boundary.setWall(boundary.addObject(sampleBoxWalls(box, d0, 2), true));
        const int body = boundary.addObject(cubeShell(0.1f, d0), false);
        boundary.setObjectTransform(body, Mat3f::Identity(), Vec3f(0.2f, 0.25f, 0.2f));
        // Random particles over the whole box: some at the walls, most far from them.
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> ux(0.0f, 0.8f), uy(0.0f, 0.5f), uz(0.0f, 0.4f);
        std::vector<Vec3f> x(3000);
        for (Vec3f& p : x)
            p = Vec3f(ux(rng), uy(rng), uz(rng));
        model.setParticles(x, {});
        SphStepResult res;
        QVERIFY(model.prepareStep(res, 1e-3f, {}));
        size_t pairs = 0;
        checkLists(model, pairs);
        QVERIFY(!QTest::currentTestFailed());
        QVERIFY(pairs > 1000);
        // The body moves to the far side and the particles move a little: the next step's lists
        // must follow both (the boundary's copies are refreshed only when it changed).
        boundary.setObjectTransform(body, Mat3f::Identity(), Vec3f(0.6f, 0.25f, 0.2f));
        for (Vec3f& p : model.state.positions)
            p += 0.3f * r * Vec3f(ux(rng) / 0.8f - 0.5f, uy(rng) / 0.5f - 0.5f, uz(rng) / 0.4f - 0.5f);
        QVERIFY(model.prepareStep(res, 1e-3f, {}));
        checkLists(model, pairs);
        QVERIFY(!QTest::currentTestFailed());
        QVERIFY(pairs > 1000);
        // A step without a boundary change (the copies kept) is searched as well.
        for (Vec3f& p : model.state.positions)
            p.y() -= 0.5f * r;
        QVERIFY(model.prepareStep(res, 1e-3f, {}));
        checkLists(model, pairs);
        QVERIFY(!QTest::currentTestFailed());
        QVERIFY(pairs > 1000);
    }

    // A pressure solver's per-particle state passed to prepareStep follows the particles through the
    // sort (here each particle's id as a float), and an array of another size is refused, in Release
    // too, instead of being read out of bounds.
    void arraysSortedAlongFollowTheParticles() {
        Setup setup(Aabb(Vec3f::Zero(), Vec3f(0.4f, 0.4f, 0.4f)), 0.02f);
        FluidModel& model = setup.model;
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(0.0f, 0.4f);
        std::vector<Vec3f> x(2000);
        for (Vec3f& p : x)
            p = Vec3f(u(rng), u(rng), u(rng));
        model.setParticles(x, {});
        std::vector<float> carried(x.size());
        for (size_t i = 0; i < x.size(); ++i)
            carried[i] = float(model.state.ids[i]);
        SphStepResult res;
        QVERIFY(model.prepareStep(res, 1e-3f, {&carried}));
        size_t moved = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            QCOMPARE(carried[i], float(model.state.ids[i]));
            moved += model.state.ids[i] != i;
        }
        QVERIFY(moved > x.size() / 2); // random positions: the sort did reorder them
        std::vector<float> shorter(x.size() - 1, 0.0f);
        QVERIFY_THROWS_EXCEPTION(std::logic_error, model.prepareStep(res, 1e-3f, {&shorter}));
        QCOMPARE(model.state.size(), x.size()); // nothing was lost
    }
};

QTEST_MAIN(TestNeighborLists)
#include "test_neighbor_lists.moc"
