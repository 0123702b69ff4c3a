#pragma once
// Water-height gauges read from SPH particles, and gauge records compared with an experiment's:
// SPHERIC Test 2 (Issa & Violeau 2006), the wire gauges H1-H4 of Kleefsman et al. 2005
// (docs/VALIDATION.md). Up is +y; a gauge stands at a horizontal point (x, z).
#include "common/Types.h"

#include <string>
#include <vector>

namespace octo {

/// How a gauge turns particles into a water height.
enum class GaugeMethod {
    /// The highest y where the SPH fill fraction phi(y) = sum_j (2r)^3 W(|p - x_j|) (the cubic
    /// spline, support 4r, of the solver) is at least 1/2: the kernel-interpolated fluid volume
    /// fraction, which is 1/2 on the surface of a half-space of particles, r above the top layer.
    /// A lone droplet peaks at phi = 1/pi and two touching ones at 1.25/pi: spray is not counted.
    Fill,
    /// The highest particle centre within |dx|, |dz| <= 2 spacings (4r) of the gauge, plus r: the
    /// height sensor of AQUAgpusph's SPHERIC Test 2 example (Cercos-Pita 2015, Comput. Phys.
    /// Commun. 192:295; examples/3D/spheric_testcase2_dambreak). Any droplet above the gauge counts.
    TopParticle,
    /// The length of the vertical line where phi >= 1/2, i.e. the water the line passes through
    /// (a sheet or jet crossing above the gauge adds its thickness, not its height): what a wire
    /// gauge reads if its signal is proportional to its wetted length.
    WettedLength,
};

/// Water height above `floorY` at the gauge (x, z); 0 when no particle is near it.
float gaugeHeight(const std::vector<Vec3f>& positions, float particleRadius, float x, float z,
                  GaugeMethod method, float floorY = 0.0f);

/// A gauge's horizontal position in scene coordinates.
struct GaugeLocation {
    std::string name;
    float x = 0.0f, z = 0.0f;
};

/// The height gauges (kind "height") of a probe table like tests/data/validation/kleefsman_probes.csv,
/// columns name,kind,x_spheric,x_flow,w,z: scene x = x_flow (the reservoir at x < 1.228, the water
/// flowing to +x), scene z = w (across). Throws std::runtime_error naming the file.
std::vector<GaugeLocation> readHeightGauges(const std::string& probesCsv);

/// Water heights of several gauges at common sample times.
struct GaugeSeries {
    std::vector<std::string> names;           ///< "H1", ...
    std::vector<double> times;                ///< s, increasing
    std::vector<std::vector<double>> heights; ///< [gauge][sample], m

    /// Gauge `g` at time t, linear between samples (held constant outside them).
    double at(size_t g, double t) const;
    /// First sample time at which gauge `g` reaches `level`; -1 when it never does.
    double firstTimeAtOrAbove(size_t g, double level) const;
    size_t gaugeIndex(const std::string& name) const; ///< throws std::out_of_range
};

/// A CSV "t_s,H1_m,H2_m,..." (lines starting with '#' are comments; a trailing "_m" is dropped
/// from the names). Throws std::runtime_error naming the file and line.
GaugeSeries readGaugeCsv(const std::string& path);

struct GaugeError {
    std::string name;
    double rms = 0.0;  ///< m
    double bias = 0.0; ///< mean of simulation - experiment, m
    size_t samples = 0;
};

struct GaugeComparison {
    std::vector<GaugeError> gauges; ///< in the simulation's gauge order
    double pooledRms = 0.0;         ///< over every gauge's samples together
    double lastTime = 0.0;          ///< latest sample compared
};

/// RMS of simulation - experiment per gauge (matched by name) over the simulation's samples in
/// [tBegin, tEnd], the experiment interpolated to them; pooled over all gauges' squared errors.
GaugeComparison compareGauges(const GaugeSeries& simulation, const GaugeSeries& experiment, double tBegin,
                              double tEnd);

} // namespace octo
