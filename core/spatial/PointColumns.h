#pragma once
// Points as three columns (x, y, z), padded with 3 zeros: a loop over a range of points loads four
// of each coordinate at once, reading up to 3 points past the range's end (masked off by the caller).
#include "common/Types.h"

#include <tbb/parallel_for.h>

#include <span>
#include <vector>

namespace octo {

struct PointColumns {
    std::vector<float> x, y, z;

    /// n points, to be written with set() (the padding is zeroed here).
    void resize(size_t n) {
        x.resize(n + 3), y.resize(n + 3), z.resize(n + 3);
        for (size_t i = n; i < n + 3; ++i)
            x[i] = y[i] = z[i] = 0.0f;
    }
    void set(size_t i, const Vec3f& p) { x[i] = p.x(), y[i] = p.y(), z[i] = p.z(); }

    void assign(std::span<const Vec3f> points) {
        const size_t n = points.size();
        x.resize(n + 3), y.resize(n + 3), z.resize(n + 3);
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 8192), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i < r.end(); ++i)
                x[i] = points[i].x(), y[i] = points[i].y(), z[i] = points[i].z();
        });
        for (size_t i = n; i < n + 3; ++i)
            x[i] = y[i] = z[i] = 0.0f;
    }
};

} // namespace octo
