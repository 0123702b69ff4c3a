#include "surface/MarchingCubes_LorensenCline1987.h"

#include "common/Types.h"

#include <stdexcept>
#include <vector>

namespace octo {

namespace {

Vec3f cornerPos(int c) {
    return Vec3f(float(c & 1), float((c >> 1) & 1), float((c >> 2) & 1));
}

MarchingCubesTable generate() {
    MarchingCubesTable t;
    int edgeOf[8][8];
    for (auto& row : edgeOf)
        for (int& e : row)
            e = -1;
    {
        int e = 0;
        for (int axis = 0; axis < 3; ++axis)
            for (int c = 0; c < 8; ++c)
                if (!(c & (1 << axis))) {
                    t.edgeCornerIdx[size_t(e)] = uint8_t(c);
                    t.edgeAxisIdx[size_t(e)] = uint8_t(axis);
                    edgeOf[c][c | (1 << axis)] = edgeOf[c | (1 << axis)][c] = e;
                    ++e;
                }
    }
    auto edgeMid = [&](int e) {
        Vec3f p = cornerPos(t.edgeCorner(e));
        p[t.edgeAxis(e)] += 0.5f;
        return p;
    };

    bool flip = false;
    for (int pass = 0; pass < 2; ++pass) {
        for (int cs = 0; cs < 256; ++cs) {
            auto inside = [&](int c) { return (cs >> c) & 1; };
            int next[12];
            for (int& n : next)
                n = -1;
            uint16_t mask = 0;
            for (int a = 0; a < 3; ++a)
                for (int side = 0; side < 2; ++side) {
                    const int u = (a + 1) % 3, v = (a + 2) % 3;
                    // Face corners in cyclic order in the (u, v) plane.
                    int q[4];
                    const int uv[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
                    for (int k = 0; k < 4; ++k)
                        q[k] = (side << a) | (uv[k][0] << u) | (uv[k][1] << v);
                    Vec3f n = Vec3f::Zero();
                    n[a] = side ? 1.0f : -1.0f;
                    int fe[4];
                    int crossings = 0;
                    for (int k = 0; k < 4; ++k) {
                        fe[k] = edgeOf[q[k]][q[(k + 1) % 4]];
                        if (inside(q[k]) != inside(q[(k + 1) % 4]))
                            ++crossings;
                    }
                    // Segments (edge pairs) with a reference point on the inside (left) side,
                    // or on the outside (right) side for cut-off outside corners.
                    struct Seg {
                        int a, b;
                        Vec3f ref;
                        bool refInside;
                    };
                    std::vector<Seg> segs;
                    if (crossings == 2) {
                        int e2[2], m = 0;
                        Vec3f centroid = Vec3f::Zero();
                        int nin = 0;
                        for (int k = 0; k < 4; ++k) {
                            if (inside(q[k]) != inside(q[(k + 1) % 4]))
                                e2[m++] = fe[k];
                            if (inside(q[k])) {
                                centroid += cornerPos(q[k]);
                                ++nin;
                            }
                        }
                        segs.push_back({e2[0], e2[1], centroid / float(nin), true});
                    } else if (crossings == 4) {
                        // Ambiguous face: keep the inside corners connected, cut off each outside one.
                        for (int k = 0; k < 4; ++k)
                            if (!inside(q[k]))
                                segs.push_back({fe[(k + 3) % 4], fe[k], cornerPos(q[k]), false});
                    }
                    for (Seg s : segs) {
                        const Vec3f A = edgeMid(s.a), B = edgeMid(s.b);
                        const float side2 = n.cross(B - A).dot(s.ref - A);
                        const bool ok = s.refInside ? side2 > 0.0f : side2 < 0.0f;
                        if (!ok)
                            std::swap(s.a, s.b);
                        if (next[s.a] != -1)
                            throw std::logic_error("marching cubes table: inconsistent loop");
                        next[s.a] = s.b;
                        mask |= uint16_t(1u << s.a) | uint16_t(1u << s.b);
                    }
                }
            t.edgeMask[size_t(cs)] = mask;
            // Follow the loops and fan-triangulate each one.
            int tri = 0;
            bool used[12] = {};
            auto& out = t.triangles[size_t(cs)];
            for (int e0 = 0; e0 < 12; ++e0) {
                if (!(mask & (1u << e0)) || used[e0])
                    continue;
                std::vector<int> loop;
                for (int e = e0; !used[e]; e = next[e]) {
                    if (next[e] < 0)
                        throw std::logic_error("marching cubes table: open loop");
                    used[e] = true;
                    loop.push_back(e);
                }
                for (size_t k = 1; k + 1 < loop.size(); ++k) {
                    int a = loop[0], b = loop[k], c = loop[k + 1];
                    if (flip)
                        std::swap(b, c);
                    out[size_t(3 * tri)] = int8_t(a);
                    out[size_t(3 * tri + 1)] = int8_t(b);
                    out[size_t(3 * tri + 2)] = int8_t(c);
                    ++tri;
                }
            }
            out[size_t(3 * tri)] = -1;
            t.triangleCount[size_t(cs)] = uint8_t(tri);
        }
        if (pass == 0) {
            // Orientation: with only corner 0 inside, the normal must point away from corner 0.
            const auto& tr = t.triangles[1];
            const Vec3f A = edgeMid(tr[0]), B = edgeMid(tr[1]), C = edgeMid(tr[2]);
            const Vec3f nrm = (B - A).cross(C - A);
            if (nrm.dot(A - cornerPos(0)) > 0.0f)
                break;
            flip = true;
        }
    }
    return t;
}

} // namespace

const MarchingCubesTable& marchingCubesTable() {
    static const MarchingCubesTable table = generate();
    return table;
}

} // namespace octo
