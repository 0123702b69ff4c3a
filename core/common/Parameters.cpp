#include "common/Parameters.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace octo {

namespace {
using K = ParameterInfo::Kind;

ParameterInfo real(std::string name, std::string group, std::string label, std::string unit, double lo,
                   double hi, double def, bool reset, std::string desc) {
    ParameterInfo p;
    p.name = std::move(name);
    p.group = std::move(group);
    p.label = std::move(label);
    p.unit = std::move(unit);
    p.minValue = lo;
    p.maxValue = hi;
    p.defaultValue = def;
    p.needsReset = reset;
    p.description = std::move(desc);
    return p;
}
ParameterInfo integer(std::string name, std::string group, std::string label, double lo, double hi,
                      double def, bool reset, std::string desc) {
    ParameterInfo p =
        real(std::move(name), std::move(group), std::move(label), "1", lo, hi, def, reset, std::move(desc));
    p.kind = K::Integer;
    return p;
}
ParameterInfo boolean(std::string name, std::string group, std::string label, bool def, std::string desc) {
    ParameterInfo p = real(std::move(name), std::move(group), std::move(label), "", 0, 1, def ? 1 : 0, false,
                           std::move(desc));
    p.kind = K::Boolean;
    return p;
}
ParameterInfo choice(std::string name, std::string group, std::string label, std::vector<std::string> choices,
                     int def, std::string desc) {
    ParameterInfo p = real(std::move(name), std::move(group), std::move(label), "", 0,
                           double(choices.size() - 1), def, false, std::move(desc));
    p.kind = K::Choice;
    p.choices = std::move(choices);
    return p;
}

// OCTO_PRESSURE_SOLVER=dfsph makes DFSPH the default pressure solver, so the physics tests can be run
// with DFSPH by hand (`OCTO_PRESSURE_SOLVER=dfsph ctest ...`; CTest itself runs them with PCISPH); a
// scene file or --set still chooses.
int defaultPressureSolver() {
    const char* env = std::getenv("OCTO_PRESSURE_SOLVER");
    if (!env || !*env || std::string(env) == "pcisph")
        return 0;
    if (std::string(env) == "dfsph")
        return 1;
    std::fprintf(stderr, "octofluid: OCTO_PRESSURE_SOLVER='%s' is neither pcisph nor dfsph; using pcisph\n",
                 env);
    return 0;
}

/// A parameter the scene is built with: changing it rebuilds the scene.
ParameterInfo rebuilds(ParameterInfo p) {
    p.needsReset = true;
    return p;
}

ParameterInfo kernelChoice() {
    ParameterInfo p =
        choice("kernel", "Solver", "SPH kernel", {"cubic", "wendland"}, 0,
               "cubic: the cubic spline (Monaghan 1992); wendland: Wendland C2, free of the pairing "
               "instability (Dehnen & Aly 2012) that moves a resting simple cubic lattice. Support h = 4r.");
    p.needsReset = true; // wall and body volumes are computed with it when the scene is built
    return p;
}

// One entry per parameter, in display order: a table, long because the parameters are many.
std::vector<ParameterInfo> makeTable() {
    return {
        // --- Solver: PCISPH (Solenthaler & Pajarola 2009) ---
        real("particleRadius", "Solver", "Particle radius r", "m", 1e-4, 0.2, 0.01, true,
             "Fluid particle radius; rest spacing d0 = 2r, support h = 4r."),
        real("restDensity", "Solver", "Rest density rho0", "kg/m^3", 100, 20000, 1000, true,
             "Fluid rest density."),
        choice("pressureSolver", "Solver", "Pressure solver", {"pcisph", "dfsph"}, defaultPressureSolver(),
               "pcisph: Solenthaler & Pajarola 2009 (the paper's solver); dfsph: Bender & Koschier "
               "2017, a divergence-free and a constant-density solve, warm-started (fewer iterations)."),
        kernelChoice(),
        real("densityErrorTolerance", "Solver", "Density error eta", "1", 1e-4, 0.1, 0.01, false,
             "Both pressure solvers iterate until the maximum density error is below this fraction "
             "(DFSPH's paper uses the mean; a mean of 1 % left 5 % local errors)."),
        real("divergenceErrorTolerance", "Solver", "Divergence error eta_v", "1/s", 1e-3, 10.0, 0.1, false,
             "DFSPH's divergence-free solve iterates until the mean compressive D rho/Dt is below this "
             "fraction of rho0 per second (0.1: 0.1 % of rho0 per second; SPlisHSPlasH's 0.1 % per step is "
             "0.4 at a 2.5 ms step and left DFSPH's resting columns and Martin & Moyce's late front off)."),
        boolean("dfsphMirrorWalls", "Solver", "DFSPH mirrored walls", true,
                "DFSPH only: walls and bodies as the mirror image of the particle beside them (ghost "
                "particles, Colagrossi & Landrini 2003; Band et al. 2018's pressure mirroring continued "
                "hydrostatically, Adami et al. 2012) in the force, the rates and alpha alike. A held box "
                "feels 1.02 of Archimedes' force with it; off (Akinci's p_i alone, eq. 10) 0.85, and water "
                "at rest sinks into the walls' edges."),
        integer(
            "minIterations", "Solver", "Min iterations", 1, 50, 3, false,
            "Minimum PCISPH corrections per step (DFSPH: its paper's 2 density and 1 divergence sweeps)."),
        integer("maxIterations", "Solver", "Max iterations", 3, 1000, 50, false,
                "Maximum corrections per step (PCISPH; each of DFSPH's two solves)."),
        real("timeStepMin", "Solver", "dt min", "s", 1e-7, 0.01, 1e-5, false,
             "Lower bound of the adaptive time step."),
        real("timeStepMax", "Solver", "dt max", "s", 1e-5, 0.05, 0.005, false,
             "Upper bound of the adaptive time step."),
        real("cflFactor", "Solver", "CFL factor", "1", 0.01, 1.0, 0.5, false, "dt <= cfl * 2r / max|v|."),
        real("viscosity", "Solver", "Viscosity alpha", "1", 0.0, 1.0, 0.01, false,
             "Monaghan's artificial viscosity alpha: nu = 2 alpha h c / (rho_i + rho_j); dissipative only."),
        real(
            "velocityFilter", "Solver", "Velocity filter eps4", "1", 0.0, 1.0, 0.8, false,
            "In-house bi-Laplacian XSPH filter v -= eps L(L(v)) once per step inside the fluid (not from a "
            "paper): damps the particle-scale noise of a resting tank (2-4x quieter) but also real flow (a "
            "settled 0.3 m/s swirl keeps 0.4 % of its energy after 1 s instead of 7.8 %, a cylinder wake's "
            "enstrophy halves) and drags on a linear shear in the two layers at a wall or under the free "
            "surface (0.9-1.8 % per step); per step, not per second, so shorter steps damp more; 6-13 % of a "
            "step; 0 = off."),
        boolean("velocityFilterRate", "Solver", "Velocity filter per second", false,
                "The filter's eps per 2.5 ms of simulated time (scaled by dt, capped at the stability bound) "
                "instead of per step, so a second of flow is damped alike at any dt. Off by default: with it "
                "on, the resting columns at 4.5 mm move at 0.08 m/s (their shorter steps damp less) and a "
                "wake's vorticity confinement gains 1.07x instead of 1.48x."),
        boolean("velocityFilterLinearExact", "Solver", "Velocity filter linear-exact", false,
                "L without its first-order error (delta-SPH's correction with a least-squares gradient, "
                "Antuono et al. 2010): a linear shear at a wall or under the free surface is left alone. "
                "Off by default: the resting columns and Martin & Moyce's front rely on that drag (with it "
                "on, 0.056-0.10 m/s at 0.5 s, front RMS 0.127); 3.6x the filter's cost."),
        real("startSettling", "Solver", "Start settling", "s", 0.0, 2.0, 0.0, true,
             "Before t = 0 the blocks standing on the floor at rest run this long with their motion damped "
             "and gravity ramped in (Adami et al. 2012), each held in its box (a dam-break column stays "
             "up); the scene starts from that equilibrium at rest. Costs as much as simulating it; 0 = off."),
        real("boundaryFriction", "Boundary", "Boundary viscosity sigma", "1", 0.0, 1.0, 0.05, false,
             "Akinci 2012 boundary viscosity sigma (eq. 11, nu_b = sigma h c / (2 rho_i)): friction of the "
             "fluid "
             "on walls and bodies."),
        integer("boundaryLayers", "Boundary", "Wall layers", 1, 4, 2, true,
                "Layers of boundary particles (spacing 2r) sampling the container walls."),
        rebuilds(boolean(
            "wallFit", "Boundary", "Fit wall volumes", false,
            "Fit the container walls' Psi so that the rest lattice has rho0 in their edges and corners too "
            "(the density-map condition of Koschier & Bender 2017; Akinci's volumes leave them 0.5-1.9 % "
            "under). Calms a resting column's first frames; DFSPH's fine column peaks higher with it.")),
        real("gravityX", "Solver", "Gravity x", "m/s^2", -100, 100, 0.0, false, "Gravity, x component."),
        real("gravityY", "Solver", "Gravity y", "m/s^2", -100, 100, -9.81, false,
             "Gravity, y component (up is +y)."),
        real("gravityZ", "Solver", "Gravity z", "m/s^2", -100, 100, 0.0, false, "Gravity, z component."),

        // --- Forces beyond the paper's PCISPH: surface tension and adhesion (Akinci 2013), vorticity
        // confinement (Fedkiw 2001); in the Solver / Boundary docks (the GUI lists its groups by name) ---
        real("surfaceTension", "Solver", "Surface tension gamma", "1", 0.0, 20.0, 0.0, false,
             "Akinci 2013 cohesion + curvature coefficient; pulls the fluid into round drops (0 = off)."),
        real("adhesion", "Boundary", "Adhesion beta", "1", 0.0, 200.0, 0.0, false,
             "Akinci 2013 adhesion coefficient between fluid and walls / bodies (0 = off)."),
        real("wallCohesion", "Boundary", "Wall cohesion", "1", 0.0, 1.0, 0.0, false,
             "With surface tension: walls and bodies pull on the fluid like fluid (1) or not at all (0, "
             "Akinci 2013: walls act as air, particles in wall edges keep rattling)."),
        real(
            "vorticityConfinement", "Solver", "Vorticity confinement eps", "1", 0.0, 2.0, 0.0, false,
            "Puts back vortices lost to smoothing: fraction of the centripetal acceleration at h (0 = off)."),

        // --- Surface: detection (Marrone 2010), octree (Shao 2016), distance field (Solenthaler 2007) ---
        boolean("surfaceEnabled", "Surface", "Reconstruct surface", true,
                "Rebuild the surface mesh once per simulated frame."),
        choice("surfaceMethod", "Surface", "Method", {"octree", "uniform", "narrow", "sparse"}, 0,
               "Which corner set gets distance values: adaptive octree or a baseline."),
        real(
            "lambdaMin", "Surface", "lambda min", "1", 0.0, 1.0, 0.75, false,
            "A particle is a surface particle when the smallest eigenvalue of its L matrix is <= lambdaMin."),
        real("leafSize", "Surface", "Leaf edge L", "m", 0.0, 1.0, 0.0, false,
             "Octree leaf / grid cell edge; 0 = automatic 2r/sqrt(3) (thin sheets stay hole-free)."),
        real("kernelRadiusFactor", "Surface", "R / r", "1", 1.0, 10.0, 4.0, false,
             "Distance-field kernel radius R in units of the particle radius."),
        real("tLow", "Surface", "t_low", "1", 0.0, 10.0, 0.4, false,
             "Solenthaler f: no radius shrink below this EVmax."),
        real("tHigh", "Surface", "t_high", "1", 0.0, 20.0, 3.5, false,
             "Solenthaler f: full radius shrink above this EVmax."),
        real("surfaceSEnlargement", "Surface", "S enlargement l / R", "1", 0.1, 1.0, 0.75, false,
             "Octree S-set enlargement l in units of R (paper: 1); smaller keeps a thinner band of cells. "
             "0.75 = (r + sqrt(3) L) / R at the automatic L: the band the zero level can reach."),
        choice("surfaceField", "Surface", "Field", {"anisotropic", "distance"}, 0,
               "Scalar field at the corners: anisotropic kernels (Yu & Turk 2013) with volume-preserving "
               "mesh smoothing, the smooth default; or the paper's distance field (Solenthaler 2007)."),
        integer("surfaceSmoothing", "Surface", "Mesh smoothing steps", 0, 100, 20, false,
                "Volume-preserving smoothing steps of the anisotropic field's mesh (0 = none)."),
    };
}
} // namespace

const std::vector<ParameterOrder>& parameterOrders() {
    static const std::vector<ParameterOrder> orders{
        {"minIterations", "maxIterations"}, {"timeStepMin", "timeStepMax"}, {"tLow", "tHigh", true}};
    return orders;
}

namespace {
/// The table and ParameterId.h name the same parameters, each once.
std::vector<ParameterInfo> checkedTable() {
    std::vector<ParameterInfo> table = makeTable();
    std::vector<int> seen(kParameterCount, 0);
    for (const ParameterInfo& p : table) {
        const auto it = std::find(kParameterNames.begin(), kParameterNames.end(), p.name);
        if (it == kParameterNames.end())
            throw std::logic_error("parameter '" + p.name + "' is in the table but not in ParameterId.h");
        ++seen[size_t(it - kParameterNames.begin())];
    }
    for (size_t i = 0; i < kParameterCount; ++i)
        if (seen[i] != 1)
            throw std::logic_error(
                "parameter '" + std::string(kParameterNames[i]) + "' is " +
                (seen[i] ? "in the table twice" : "in ParameterId.h but not in the table"));
    return table;
}
} // namespace

const std::vector<ParameterInfo>& parameterTable() {
    static const std::vector<ParameterInfo> table = checkedTable();
    return table;
}

Param parameterId(const std::string& name) {
    const auto it = std::find(kParameterNames.begin(), kParameterNames.end(), name);
    if (it == kParameterNames.end())
        throw ParameterError("unknown parameter '" + name + "'");
    return Param(it - kParameterNames.begin());
}

const ParameterInfo* findParameter(const std::string& name) {
    for (const auto& p : parameterTable())
        if (p.name == name)
            return &p;
    return nullptr;
}

ParameterSet::ParameterSet() {
    for (const auto& p : parameterTable())
        store(p.name, p.defaultValue);
}

void ParameterSet::store(const std::string& name, double value) {
    values_[name] = value;
    byId_[size_t(parameterId(name))] = value;
}

std::string ParameterSet::rangeText(const ParameterInfo& info) {
    std::ostringstream s;
    if (info.kind == K::Choice) {
        s << "one of ";
        for (size_t i = 0; i < info.choices.size(); ++i)
            s << (i ? "|" : "") << info.choices[i];
    } else if (info.kind == K::Boolean) {
        s << "true|false";
    } else {
        s << "[" << info.minValue << ", " << info.maxValue << "]";
        if (!info.unit.empty() && info.unit != "1")
            s << " " << info.unit;
    }
    return s.str();
}

void ParameterSet::set(const std::string& name, double value) {
    const ParameterInfo* info = findParameter(name);
    if (!info)
        throw ParameterError("unknown parameter '" + name + "'");
    const bool integral = info->kind != K::Real;
    if (!std::isfinite(value) || value < info->minValue || value > info->maxValue ||
        (integral && value != std::floor(value))) {
        std::ostringstream s;
        s << "parameter '" << name << "' = " << value << " is out of range " << rangeText(*info);
        throw ParameterError(s.str());
    }
    store(name, value);
}

void ParameterSet::setFromString(const std::string& name, const std::string& text) {
    const ParameterInfo* info = findParameter(name);
    if (!info)
        throw ParameterError("unknown parameter '" + name + "'");
    if (info->kind == K::Choice) {
        for (size_t i = 0; i < info->choices.size(); ++i)
            if (info->choices[i] == text)
                return set(name, double(i));
    }
    if (info->kind == K::Boolean) {
        if (text == "true" || text == "on" || text == "yes")
            return set(name, 1.0);
        if (text == "false" || text == "off" || text == "no")
            return set(name, 0.0);
    }
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end == text.c_str() || *end != '\0')
        throw ParameterError("parameter '" + name + "': cannot read '" + text + "', expected " +
                             rangeText(*info));
    set(name, v);
}

void ParameterSet::parseAssignment(const std::string& nameEqualsValue) {
    const auto eq = nameEqualsValue.find('=');
    if (eq == std::string::npos || eq == 0)
        throw ParameterError("expected name=value, got '" + nameEqualsValue + "'");
    setFromString(nameEqualsValue.substr(0, eq), nameEqualsValue.substr(eq + 1));
}

void ParameterSet::validate() const {
    for (const ParameterOrder& o : parameterOrders()) {
        const double lo = get(o.lower), hi = get(o.upper);
        if (lo > hi || (o.strict && lo == hi)) {
            std::ostringstream s;
            s << "parameters '" << o.lower << "' = " << lo << " and '" << o.upper << "' = " << hi
              << " conflict: '" << o.lower << "' must " << (o.strict ? "be below '" : "not exceed '")
              << o.upper << "'";
            throw ParameterError(s.str());
        }
    }
}

void ParameterSet::setConsistent(const std::string& name, double value) {
    const double old = get(name);
    set(name, value);
    try {
        validate();
    } catch (const ParameterError&) {
        store(name, old);
        throw;
    }
}

double ParameterSet::get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end())
        throw ParameterError("unknown parameter '" + name + "'");
    return it->second;
}

std::string ParameterSet::choice(Param p) const {
    return choice(std::string(parameterName(p)));
}

std::string ParameterSet::choice(const std::string& name) const {
    const ParameterInfo* info = findParameter(name);
    if (!info || info->kind != K::Choice)
        throw ParameterError("parameter '" + name + "' is not a choice");
    return info->choices.at(size_t(get(name)));
}

} // namespace octo
