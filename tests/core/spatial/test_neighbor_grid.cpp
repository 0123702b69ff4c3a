// Neighbour search equals brute force, including points on cell boundaries and outside the domain.
#include "spatial/NeighborGrid.h"

#include <QtTest>
#include <algorithm>
#include <random>

using namespace octo;

class TestNeighborGrid : public QObject {
    Q_OBJECT
private:
    static void compareWithBruteForce(const std::vector<Vec3f>& pts, NeighborGrid& grid, float radius) {
        grid.build(pts);
        std::vector<Vec3f> sorted;
        grid.gather(std::span<const Vec3f>(pts), sorted);
        const auto order = grid.order();
        QCOMPARE(order.size(), pts.size());
        std::vector<char> seen(pts.size(), 0);
        for (uint32_t o : order) {
            QVERIFY(o < pts.size());
            QVERIFY(!seen[o]);
            seen[o] = 1;
        }
        const float r2 = radius * radius;
        for (size_t k = 0; k < sorted.size(); ++k) {
            std::vector<uint32_t> found;
            grid.forEachNeighbor(sorted[k], radius, sorted,
                                 [&](uint32_t j, const Vec3f&, float) { found.push_back(order[j]); });
            std::vector<uint32_t> expected;
            for (size_t j = 0; j < pts.size(); ++j)
                if ((pts[j] - sorted[k]).squaredNorm() <= r2)
                    expected.push_back(uint32_t(j));
            std::sort(found.begin(), found.end());
            QCOMPARE(found, expected);
        }
    }

private slots:
    void randomPointsMatchBruteForce() {
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-0.2f, 1.2f); // part outside the domain
        std::vector<Vec3f> pts(3000);
        for (auto& p : pts)
            p = Vec3f(u(rng), u(rng), u(rng));
        NeighborGrid grid;
        grid.setDomain(Aabb(Vec3f::Zero(), Vec3f::Ones()), 0.1f);
        compareWithBruteForce(pts, grid, 0.1f);
        compareWithBruteForce(pts, grid, 0.07f);
        compareWithBruteForce(pts, grid, 0.25f); // radius larger than a cell
    }

    void pointsOnCellBoundaries() {
        std::vector<Vec3f> pts;
        for (int i = 0; i <= 10; ++i)
            for (int j = 0; j <= 10; ++j)
                for (int k = 0; k <= 10; ++k)
                    pts.emplace_back(0.1f * i, 0.1f * j, 0.1f * k);
        NeighborGrid grid;
        grid.setDomain(Aabb(Vec3f::Zero(), Vec3f::Ones()), 0.1f);
        compareWithBruteForce(pts, grid, 0.1f);
    }

    void domainFromPointsWithOutliers() {
        std::mt19937 rng(3);
        std::normal_distribution<float> g(0.0f, 0.05f);
        std::vector<Vec3f> pts(2000);
        for (auto& p : pts)
            p = Vec3f(g(rng), g(rng), g(rng));
        pts.push_back(Vec3f(1000.f, -500.f, 20.f)); // far outlier must not explode memory
        NeighborGrid grid;
        grid.setDomainFromPoints(pts, 0.02f);
        QVERIFY(grid.cellCount() <= std::max<size_t>(size_t(1) << 18, 8 * pts.size()) * 2);
        compareWithBruteForce(pts, grid, 0.02f);
    }

    void sortIsSpatiallyCoherent() {
        // Consecutive sorted points are mostly in the same or adjacent cells.
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> u(0.f, 1.f);
        std::vector<Vec3f> pts(20000);
        for (auto& p : pts)
            p = Vec3f(u(rng), u(rng), u(rng));
        NeighborGrid grid;
        grid.setDomain(Aabb(Vec3f::Zero(), Vec3f::Ones()), 0.05f);
        grid.build(pts);
        std::vector<Vec3f> sorted;
        grid.gather(std::span<const Vec3f>(pts), sorted);
        int near = 0;
        for (size_t k = 1; k < sorted.size(); ++k)
            if ((sorted[k] - sorted[k - 1]).norm() < 0.15f)
                ++near;
        QVERIFY2(near > int(0.9 * sorted.size()), qPrintable(QString::number(near)));
    }
};

QTEST_APPLESS_MAIN(TestNeighborGrid)
#include "test_neighbor_grid.moc"
