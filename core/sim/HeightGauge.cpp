#include "sim/HeightGauge.h"

#include "spatial/CubicSplineKernel.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace octo {

namespace {

struct ColumnParticle {
    float horizontal2; ///< squared horizontal distance to the gauge
    float y;
};

/// phi(y) = sum_j (2r)^3 W(|(x, y, z) - x_j|) on the vertical line through the gauge.
class FillProfile {
public:
    FillProfile(const std::vector<Vec3f>& positions, float r, float x, float z)
        : kernel_(4.0f * r), volume_(8.0f * r * r * r) {
        const float support = 4.0f * r;
        for (const Vec3f& p : positions) {
            const float d2 = (p.x() - x) * (p.x() - x) + (p.z() - z) * (p.z() - z);
            if (d2 < support * support) {
                column_.push_back({d2, p.y()});
                top_ = std::max(top_, p.y() + support);
            }
        }
    }
    float operator()(float y) const {
        float phi = 0.0f;
        for (const ColumnParticle& c : column_)
            phi += kernel_.W(std::sqrt(c.horizontal2 + (y - c.y) * (y - c.y)));
        return volume_ * phi;
    }
    /// Above this phi is 0.
    float top() const { return top_; }

private:
    CubicSplineKernel kernel_;
    float volume_; ///< (2r)^3: each particle's share of the rest lattice
    std::vector<ColumnParticle> column_;
    float top_ = -std::numeric_limits<float>::max();
};

// Samples r/4 apart, down from where phi vanishes; a crossing of 1/2 is interpolated between the
// two samples around it.
float fillHeight(const FillProfile& phi, float r, float floorY) {
    const float dy = 0.25f * r;
    float above = 0.0f;
    for (float y = phi.top(); y >= floorY; y -= dy) {
        const float p = phi(y);
        if (p >= 0.5f)
            return y + dy * (p - 0.5f) / (p - above) - floorY;
        above = p;
    }
    return 0.0f;
}

float wettedLength(const FillProfile& phi, float r, float floorY) {
    const float dy = 0.25f * r;
    float length = 0.0f;
    for (float y = floorY + 0.5f * dy; y < phi.top(); y += dy)
        if (phi(y) >= 0.5f)
            length += dy;
    return length;
}

float topParticleHeight(const std::vector<Vec3f>& positions, float r, float x, float z, float floorY) {
    const float reach = 4.0f * r; // two spacings
    float top = -1.0f;
    for (const Vec3f& p : positions)
        if (std::abs(p.x() - x) <= reach && std::abs(p.z() - z) <= reach)
            top = std::max(top, p.y() + r - floorY);
    return std::max(top, 0.0f);
}

std::vector<std::string> splitCsv(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ','))
        out.push_back(cell);
    return out;
}

double parseNumber(const std::string& text, const std::string& where) {
    size_t used = 0;
    double v = 0.0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(v))
        throw std::runtime_error(where + ": '" + text + "' is not a number");
    return v;
}

/// Calls row(cells, "path:line") for every line of the CSV file that is neither empty nor a comment.
template <class Row> void forEachCsvRow(const std::string& path, Row&& row) {
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read '" + path + "'");
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        if (line.empty() || line[0] == '#')
            continue;
        row(splitCsv(line), path + ":" + std::to_string(lineNo));
    }
}

} // namespace

float gaugeHeight(const std::vector<Vec3f>& positions, float particleRadius, float x, float z,
                  GaugeMethod method, float floorY) {
    if (method == GaugeMethod::TopParticle)
        return topParticleHeight(positions, particleRadius, x, z, floorY);
    const FillProfile phi(positions, particleRadius, x, z);
    return method == GaugeMethod::Fill ? fillHeight(phi, particleRadius, floorY)
                                       : wettedLength(phi, particleRadius, floorY);
}

std::vector<GaugeLocation> readHeightGauges(const std::string& probesCsv) {
    std::vector<GaugeLocation> out;
    bool header = true;
    forEachCsvRow(probesCsv, [&](const std::vector<std::string>& c, const std::string& where) {
        if (header) {
            if (c.size() < 5 || c[0] != "name" || c[1] != "kind" || c[3] != "x_flow" || c[4] != "w")
                throw std::runtime_error(where + ": expected the header name,kind,x_spheric,x_flow,w,z");
            header = false;
            return;
        }
        if (c.size() < 5)
            throw std::runtime_error(where + ": expected name,kind,x_spheric,x_flow,w,z");
        if (c[1] == "height")
            out.push_back({c[0], float(parseNumber(c[3], where)), float(parseNumber(c[4], where))});
    });
    if (out.empty())
        throw std::runtime_error(probesCsv + ": no height gauges");
    return out;
}

double GaugeSeries::at(size_t g, double t) const {
    const std::vector<double>& h = heights.at(g);
    if (t <= times.front())
        return h.front();
    if (t >= times.back())
        return h.back();
    const size_t i = size_t(std::upper_bound(times.begin(), times.end(), t) - times.begin());
    const double u = (t - times[i - 1]) / (times[i] - times[i - 1]);
    return h[i - 1] + u * (h[i] - h[i - 1]);
}

double GaugeSeries::firstTimeAtOrAbove(size_t g, double level) const {
    for (size_t i = 0; i < times.size(); ++i)
        if (heights.at(g)[i] >= level)
            return times[i];
    return -1.0;
}

size_t GaugeSeries::gaugeIndex(const std::string& name) const {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
        throw std::out_of_range("no gauge '" + name + "'");
    return size_t(it - names.begin());
}

GaugeSeries readGaugeCsv(const std::string& path) {
    GaugeSeries s;
    forEachCsvRow(path, [&](const std::vector<std::string>& c, const std::string& where) {
        if (s.names.empty()) {
            if (c.size() < 2)
                throw std::runtime_error(where + ": expected a header t_s,<gauge>,...");
            for (size_t i = 1; i < c.size(); ++i) {
                std::string n = c[i];
                if (n.size() > 2 && n.compare(n.size() - 2, 2, "_m") == 0)
                    n.resize(n.size() - 2);
                s.names.push_back(n);
            }
            s.heights.resize(s.names.size());
            return;
        }
        if (c.size() != s.names.size() + 1)
            throw std::runtime_error(where + ": expected " + std::to_string(s.names.size() + 1) + " columns");
        const double t = parseNumber(c[0], where);
        if (!s.times.empty() && t <= s.times.back())
            throw std::runtime_error(where + ": times must increase");
        s.times.push_back(t);
        for (size_t g = 0; g < s.names.size(); ++g)
            s.heights[g].push_back(parseNumber(c[g + 1], where));
    });
    if (s.times.empty())
        throw std::runtime_error(path + ": no samples");
    return s;
}

GaugeComparison compareGauges(const GaugeSeries& simulation, const GaugeSeries& experiment, double tBegin,
                              double tEnd) {
    GaugeComparison out;
    double pooled = 0.0;
    size_t pooledCount = 0;
    for (size_t g = 0; g < simulation.names.size(); ++g) {
        const size_t e = experiment.gaugeIndex(simulation.names[g]);
        GaugeError err{simulation.names[g]};
        double sq = 0.0, sum = 0.0;
        for (size_t i = 0; i < simulation.times.size(); ++i) {
            const double t = simulation.times[i];
            if (t < tBegin || t > tEnd)
                continue;
            const double d = simulation.heights[g][i] - experiment.at(e, t);
            sq += d * d;
            sum += d;
            ++err.samples;
            out.lastTime = std::max(out.lastTime, t);
        }
        if (err.samples > 0) {
            err.rms = std::sqrt(sq / double(err.samples));
            err.bias = sum / double(err.samples);
        }
        pooled += sq;
        pooledCount += err.samples;
        out.gauges.push_back(err);
    }
    out.pooledRms = pooledCount > 0 ? std::sqrt(pooled / double(pooledCount)) : 0.0;
    return out;
}

} // namespace octo
