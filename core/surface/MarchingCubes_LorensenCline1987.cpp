#include "surface/MarchingCubes_LorensenCline1987.h"

#include "common/Types.h"

#include <stdexcept>
#include <vector>

namespace octo {

namespace {

Vec3f cornerPos(int c) {
    return Vec3f(float(c & 1), float((c >> 1) & 1), float((c >> 2) & 1));
}

class Generator {
public:
    MarchingCubesTable t;

    Generator() {
        for (auto& row : edgeOf_)
            for (int& e : row)
                e = -1;
        int e = 0;
        for (int axis = 0; axis < 3; ++axis)
            for (int c = 0; c < 8; ++c)
                if (!(c & (1 << axis))) {
                    t.edgeCornerIdx[size_t(e)] = uint8_t(c);
                    t.edgeAxisIdx[size_t(e)] = uint8_t(axis);
                    edgeOf_[c][c | (1 << axis)] = edgeOf_[c | (1 << axis)][c] = e;
                    // The two faces containing the edge: perpendicular to the other axes.
                    for (int b = 0; b < 3; ++b)
                        if (b != axis)
                            edgeFaces_[e] |= 1u << (2 * b + ((c >> b) & 1));
                    ++e;
                }
        const int uv[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
        for (int a = 0; a < 3; ++a)
            for (int side = 0; side < 2; ++side) {
                const int u = (a + 1) % 3, v = (a + 2) % 3;
                for (int k = 0; k < 4; ++k)
                    t.faceCorners[size_t(2 * a + side)][size_t(k)] =
                        uint8_t((side << a) | (uv[k][0] << u) | (uv[k][1] << v));
            }
        // Orientation: with only corner 0 inside, the normal must point away from corner 0.
        const auto probe = entry(1, 0);
        const auto& tr = probe.triangles;
        const Vec3f A = edgeMid(tr[0]), B = edgeMid(tr[1]), C = edgeMid(tr[2]);
        flip_ = (B - A).cross(C - A).dot(A - cornerPos(0)) < 0.0f;
        for (int cs = 0; cs < 256; ++cs) {
            int k = 0;
            for (int f = 0; f < 6; ++f)
                if (ambiguous(cs, f)) {
                    t.ambiguousFaces[size_t(cs)] |= uint8_t(1u << f);
                    ++k;
                }
            t.entryBase[size_t(cs)] = uint16_t(t.entries.size());
            for (unsigned bits = 0; bits < (1u << k); ++bits)
                t.entries.push_back(entry(cs, bits));
            t.edgeMask[size_t(cs)] = edgeMask_;
        }
    }

private:
    int edgeOf_[8][8];
    unsigned edgeFaces_[12] = {};
    bool flip_ = false;
    uint16_t edgeMask_ = 0;

    Vec3f edgeMid(int e) const {
        Vec3f p = cornerPos(t.edgeCorner(e));
        p[t.edgeAxis(e)] += 0.5f;
        return p;
    }
    static bool inside(int cs, int c) { return (cs >> c) & 1; }
    bool ambiguous(int cs, int f) const {
        const auto& q = t.faceCorners[size_t(f)];
        return inside(cs, q[0]) == inside(cs, q[2]) && inside(cs, q[1]) == inside(cs, q[3]) &&
               inside(cs, q[0]) != inside(cs, q[1]);
    }

    // A segment (edge pair) of the surface on one face, with a reference point on its inside
    // (left) side, or on the outside (right) side for cut-off outside corners.
    struct Seg {
        int a, b;
        Vec3f ref;
        bool refInside;
    };

    // Face f's segments in case cs; an ambiguous face takes the next bit of bits (ambiguousSeen:
    // the ambiguous faces before it, advanced).
    std::vector<Seg> faceSegments(int cs, int f, unsigned bits, int& ambiguousSeen) const {
        const auto& q = t.faceCorners[size_t(f)];
        int fe[4], crossings = 0;
        for (int k = 0; k < 4; ++k) {
            fe[k] = edgeOf_[q[k]][q[(k + 1) % 4]];
            crossings += inside(cs, q[k]) != inside(cs, q[(k + 1) % 4]) ? 1 : 0;
        }
        std::vector<Seg> segs;
        if (crossings == 2) {
            int e2[2], m = 0, nin = 0;
            Vec3f centroid = Vec3f::Zero();
            for (int k = 0; k < 4; ++k) {
                if (inside(cs, q[k]) != inside(cs, q[(k + 1) % 4]))
                    e2[m++] = fe[k];
                if (inside(cs, q[k])) {
                    centroid += cornerPos(q[k]);
                    ++nin;
                }
            }
            segs.push_back({e2[0], e2[1], centroid / float(nin), true});
        } else if (crossings == 4) {
            const bool joinInside = (bits >> ambiguousSeen++) & 1u;
            // Joined inside corners: cut off each outside corner; else cut off each inside one.
            for (int k = 0; k < 4; ++k)
                if (inside(cs, q[k]) != joinInside)
                    segs.push_back({fe[(k + 3) % 4], fe[k], cornerPos(q[k]), !joinInside});
        }
        return segs;
    }

    // Orients face f's segments by their reference points (n: the face's outward normal) and links
    // them: next[a] = b. Returns the edges they use.
    uint16_t linkSegments(int f, const std::vector<Seg>& segs, int (&next)[12]) const {
        Vec3f n = Vec3f::Zero();
        n[f / 2] = (f & 1) ? 1.0f : -1.0f;
        uint16_t mask = 0;
        for (Seg s : segs) {
            const Vec3f A = edgeMid(s.a), B = edgeMid(s.b);
            const float side2 = n.cross(B - A).dot(s.ref - A);
            if (!(s.refInside ? side2 > 0.0f : side2 < 0.0f))
                std::swap(s.a, s.b);
            if (next[s.a] != -1)
                throw std::logic_error("marching cubes table: inconsistent loop");
            next[s.a] = s.b;
            mask |= uint16_t(1u << s.a) | uint16_t(1u << s.b);
        }
        return mask;
    }

    // Appends loop's triangles to out (tri: its triangles so far): a fan from the first edge
    // whose point shares no face with the non-adjacent ones, else a fan around a loop centre.
    void triangulateLoop(const std::vector<int>& loop, MarchingCubesTable::Entry& out, int& tri) const {
        auto emit = [&](int a, int b, int c) {
            if (flip_)
                std::swap(b, c);
            out.triangles[size_t(3 * tri)] = int8_t(a);
            out.triangles[size_t(3 * tri + 1)] = int8_t(b);
            out.triangles[size_t(3 * tri + 2)] = int8_t(c);
            ++tri;
        };
        const int n = int(loop.size());
        int start = -1;
        for (int s = 0; s < n && start < 0; ++s) {
            bool ok = true;
            for (int k = 2; k + 1 < n && ok; ++k)
                ok = !(edgeFaces_[loop[size_t(s)]] & edgeFaces_[loop[size_t((s + k) % n)]]);
            if (ok)
                start = s;
        }
        if (start >= 0) {
            for (int k = 1; k + 1 < n; ++k)
                emit(loop[size_t(start)], loop[size_t((start + k) % n)], loop[size_t((start + k + 1) % n)]);
        } else {
            if (out.extraCount >= out.extraLoops.size())
                throw std::logic_error("marching cubes table: too many loop centres");
            uint16_t loopMask = 0;
            for (int e : loop)
                loopMask |= uint16_t(1u << e);
            const int x = 12 + out.extraCount;
            out.extraLoops[out.extraCount++] = loopMask;
            for (int k = 0; k < n; ++k)
                emit(x, loop[size_t(k)], loop[size_t((k + 1) % n)]);
        }
    }

    // Case cs with its k-th ambiguous face resolved by bit k of bits (1: inside corners joined).
    MarchingCubesTable::Entry entry(int cs, unsigned bits) {
        int next[12];
        for (int& n : next)
            n = -1;
        uint16_t mask = 0;
        int ambiguousSeen = 0;
        for (int f = 0; f < 6; ++f)
            mask |= linkSegments(f, faceSegments(cs, f, bits, ambiguousSeen), next);
        edgeMask_ = mask;
        // Follow the loops and fan-triangulate each one.
        MarchingCubesTable::Entry out;
        int tri = 0;
        bool used[12] = {};
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
            triangulateLoop(loop, out, tri);
        }
        out.triangles[size_t(3 * tri)] = -1;
        out.triangleCount = uint8_t(tri);
        return out;
    }
};

} // namespace

const MarchingCubesTable& marchingCubesTable() {
    static const MarchingCubesTable table = Generator().t;
    return table;
}

} // namespace octo
