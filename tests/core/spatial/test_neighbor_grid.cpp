// Neighbour search equals brute force, including points on cell boundaries and outside the domain.
#include "spatial/Lanes.h"
#include "spatial/NeighborGrid.h"
#include "spatial/PointColumns.h"

#include <QtTest>
#include <algorithm>
#include <cstring>
#include <limits>
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

    /// Sorted points' candidates within r2 (not skip), four at a time from the coordinate columns,
    /// the cells pruned by their boxes through their places in the 3x3x3 block (the solver's
    /// neighbour lists, FluidModel::buildNeighborLists, are built this way).
    static std::vector<uint32_t> fourLaneCandidates(const NeighborGrid& grid, const PointColumns& xs,
                                                    const Vec3f& x, float radius, uint32_t skip) {
        const float r2 = radius * radius;
        float lo[3][3], hi[3][3];
        struct Cell {
            uint32_t b, e;
            Vec3i q;
        };
        std::vector<Cell> cells;
        grid.forEachCandidateCell(
            x, radius, [&](uint32_t b, uint32_t e, const Vec3f& cl, const Vec3f& ch, const Vec3i& q) {
                cells.push_back({b, e, q});
                for (int a = 0; a < 3; ++a)
                    lo[a][q[a]] = cl[a], hi[a][q[a]] = ch[a];
            });
        std::vector<uint32_t> out;
        const Float4 px = broadcast4(x.x()), py = broadcast4(x.y()), pz = broadcast4(x.z());
        const Int4 lane = {0, 1, 2, 3};
        for (const Cell& c : cells) {
            float d[3];
            for (int a = 0; a < 3; ++a)
                d[a] = std::max(std::max(lo[a][c.q[a]] - x[a], x[a] - hi[a][c.q[a]]), 0.0f);
            if (!(d[0] * d[0] + (d[1] * d[1] + d[2] * d[2]) < r2))
                continue;
            for (uint32_t j = c.b; j < c.e; j += 4) {
                Float4 xj, yj, zj;
                std::memcpy(&xj, xs.x.data() + j, sizeof xj);
                std::memcpy(&yj, xs.y.data() + j, sizeof yj);
                std::memcpy(&zj, xs.z.data() + j, sizeof zj);
                const Float4 dx = px - xj, dy = py - yj, dz = pz - zj;
                const Float4 r2j = sum3(dx * dx, dy * dy, dz * dz);
                const Int4 idx = Int4{} + int32_t(j) + lane;
                const Int4 keep = (r2j < broadcast4(r2)) & (idx != Int4{} + int32_t(skip)) &
                                  (lane < Int4{} + int32_t(c.e - j));
                const unsigned bits = laneBits4(keep);
                for (int l = 0; l < 4; ++l)
                    if (bits >> l & 1)
                        out.push_back(j + uint32_t(l));
            }
        }
        return out;
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

    void candidateCellPlaceInBlock() {
        // The fifth argument is the cell's offset from the block's first cell: the cell it names
        // holds exactly the range passed, and its box is that cell's (border cells reach to infinity).
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> u(-0.1f, 1.1f);
        std::vector<Vec3f> pts(4000);
        for (auto& p : pts)
            p = Vec3f(u(rng), u(rng), u(rng));
        NeighborGrid grid;
        grid.setDomain(Aabb(Vec3f::Zero(), Vec3f::Ones()), 0.1f);
        grid.build(pts);
        const float inf = std::numeric_limits<float>::infinity();
        for (float radius : {0.1f, 0.06f, 0.2f}) { // the 3x3x3 path, and the general loop (5x5x5)
            const int reach = radius > 0.1f ? 2 : 1;
            for (size_t k = 0; k < pts.size(); k += 7) {
                const Vec3f x = pts[k];
                const Vec3i c = grid.cellOf(x);
                const Vec3i c0 = (c - Vec3i::Constant(reach)).cwiseMax(Vec3i::Zero());
                const Vec3i c1 = (c + Vec3i::Constant(reach)).cwiseMin(grid.dims() - Vec3i::Ones());
                std::vector<Vec3i> seen;
                grid.forEachCandidateCell(
                    x, radius, [&](uint32_t b, uint32_t e, const Vec3f& lo, const Vec3f& hi, const Vec3i& q) {
                        const Vec3i cell = c0 + q;
                        QVERIFY(q.minCoeff() >= 0 && q.maxCoeff() <= 2 * reach);
                        QVERIFY((cell.array() <= c1.array()).all());
                        const auto range = grid.cellRange(grid.rankOf(cell));
                        QCOMPARE(range.first, b);
                        QCOMPARE(range.second, e);
                        for (int a = 0; a < 3; ++a) {
                            const float m = grid.domain().min[a], s = grid.cellSize();
                            const float l = cell[a] == 0 ? -inf : m + float(cell[a]) * s;
                            const float h = cell[a] == grid.dims()[a] - 1 ? inf : m + float(cell[a] + 1) * s;
                            QCOMPARE(lo[a], l);
                            QCOMPARE(hi[a], h);
                        }
                        seen.push_back(q);
                    });
                // Every non-empty cell of the block, once each.
                size_t nonEmpty = 0;
                for (int z = c0.z(); z <= c1.z(); ++z)
                    for (int y = c0.y(); y <= c1.y(); ++y)
                        for (int xx = c0.x(); xx <= c1.x(); ++xx) {
                            const auto r = grid.cellRange(grid.rankOf(Vec3i(xx, y, z)));
                            nonEmpty += r.first != r.second;
                        }
                QCOMPARE(seen.size(), nonEmpty);
                for (size_t i = 0; i < seen.size(); ++i)
                    for (size_t j = i + 1; j < seen.size(); ++j)
                        QVERIFY(seen[i] != seen[j]);
            }
        }
    }

    void pointColumnsHoldThePointsPadded() {
        const std::vector<Vec3f> pts = {Vec3f(1, 2, 3), Vec3f(-4, 5.5f, 6), Vec3f(7, 8, -9)};
        PointColumns cols;
        cols.x.assign(10, 42.0f); // stale contents are overwritten
        cols.assign(pts);
        QCOMPARE(cols.x.size(), pts.size() + 3);
        QCOMPARE(cols.z.size(), pts.size() + 3);
        for (size_t i = 0; i < pts.size(); ++i)
            QVERIFY(cols.x[i] == pts[i].x() && cols.y[i] == pts[i].y() && cols.z[i] == pts[i].z());
        for (size_t i = pts.size(); i < pts.size() + 3; ++i)
            QVERIFY(cols.x[i] == 0.0f && cols.y[i] == 0.0f && cols.z[i] == 0.0f);
    }

    void fourLaneCandidatesEqualBruteForce() {
        // Random points, part outside the domain, plus a lattice of spacing h / 2 whose neighbours
        // lie at distance h exactly (a neighbour is strictly closer than h, as the solver's lists).
        std::mt19937 rng(17);
        std::uniform_real_distribution<float> u(-0.05f, 0.55f);
        std::vector<Vec3f> pts(3000);
        for (auto& p : pts)
            p = Vec3f(u(rng), u(rng), u(rng));
        const float h = 0.05f;
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)
                for (int k = 0; k < 6; ++k)
                    pts.emplace_back(0.2f + 0.025f * i, 0.2f + 0.025f * j, 0.2f + 0.025f * k);
        NeighborGrid grid;
        grid.setDomain(Aabb(Vec3f::Zero(), Vec3f::Constant(0.5f)), h);
        grid.build(pts);
        std::vector<Vec3f> sorted;
        grid.gather(std::span<const Vec3f>(pts), sorted);
        PointColumns cols;
        cols.assign(sorted);
        const float r2 = h * h;
        size_t pairs = 0;
        for (uint32_t i = 0; i < sorted.size(); ++i) {
            const Vec3f x = sorted[i];
            const std::vector<uint32_t> lanes = fourLaneCandidates(grid, cols, x, h, i);
            // The scalar loop over the same cells: the same list in the same order.
            std::vector<uint32_t> scalar;
            grid.forEachCandidateCell(x, h, [&](uint32_t b, uint32_t e, const Vec3f&, const Vec3f&) {
                for (uint32_t j = b; j < e; ++j)
                    if (j != i && (x - sorted[j]).squaredNorm() < r2)
                        scalar.push_back(j);
            });
            QCOMPARE(lanes, scalar);
            // Brute force over all pairs: the same set.
            std::vector<uint32_t> brute;
            for (uint32_t j = 0; j < sorted.size(); ++j)
                if (j != i && (x - sorted[j]).squaredNorm() < r2)
                    brute.push_back(j);
            std::vector<uint32_t> found = lanes;
            std::sort(found.begin(), found.end());
            QCOMPARE(found, brute);
            pairs += brute.size();
        }
        QVERIFY(pairs > 5 * sorted.size()); // the comparison saw real neighbourhoods (about 7 each)
    }
};

QTEST_APPLESS_MAIN(TestNeighborGrid)
#include "test_neighbor_grid.moc"
