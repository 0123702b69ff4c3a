#include "surface/SurfaceSettings.h"

#include "common/Parameters.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace octo {

namespace {
// The names are the parameter table's choices (common/Parameters.cpp), in the enums' order
// (test_surface_reconstruction checks the round trip), so they are written once.
const std::vector<std::string>& choicesOf(const char* parameter) {
    return findParameter(parameter)->choices;
}

std::string expectedChoices(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& n : names)
        text += (text.empty() ? "" : "|") + n;
    return text;
}

template <class Enum> Enum parseChoice(const char* parameter, const char* what, const std::string& name) {
    const auto& names = choicesOf(parameter);
    for (size_t i = 0; i < names.size(); ++i)
        if (name == names[i])
            return Enum(i);
    throw std::invalid_argument("unknown surface " + std::string(what) + " '" + name + "', expected one of " +
                                expectedChoices(names));
}
} // namespace

const char* surfaceMethodName(SurfaceMethod m) {
    const auto& names = choicesOf("surfaceMethod");
    return size_t(m) < names.size() ? names[size_t(m)].c_str() : "?";
}

SurfaceMethod parseSurfaceMethod(const std::string& name) {
    return parseChoice<SurfaceMethod>("surfaceMethod", "method", name);
}

const char* surfaceFieldName(SurfaceField f) {
    const auto& names = choicesOf("surfaceField");
    return size_t(f) < names.size() ? names[size_t(f)].c_str() : "?";
}

SurfaceField parseSurfaceField(const std::string& name) {
    return parseChoice<SurfaceField>("surfaceField", "field", name);
}

float SurfaceSettings::effectiveLeafSize() const {
    // A slab of thickness 2r always holds a lattice corner when L*sqrt(3) <= 2r (docs/ALGORITHMS.md §5).
    return leafSize > 0.0f ? leafSize : 2.0f * particleRadius / std::sqrt(3.0f);
}

std::string SurfaceSettings::warning() const {
    const float lmax = 2.0f * particleRadius / std::sqrt(3.0f);
    if (leafSize > lmax * 1.0001f) {
        std::ostringstream s;
        s << "leaf size " << leafSize << " m is larger than 2r/sqrt(3) = " << lmax
          << " m: one-particle-thick sheets may open holes";
        return s.str();
    }
    return {};
}

void SurfaceSettings::validate() const {
    auto bad = [](const char* what, double v, const char* range) {
        std::ostringstream s;
        s << "surface setting " << what << " = " << v << " is invalid (" << range << ")";
        throw std::invalid_argument(s.str());
    };
    if (!(particleRadius > 0.0f) || !std::isfinite(particleRadius))
        bad("particleRadius", particleRadius, "> 0");
    if (!(restDensity > 0.0f) || !std::isfinite(restDensity))
        bad("restDensity", restDensity, "> 0");
    if (!(leafSize >= 0.0f) || !std::isfinite(leafSize))
        bad("leafSize", leafSize, ">= 0");
    if (!(kernelRadiusFactor >= 1.0f) || !std::isfinite(kernelRadiusFactor))
        bad("kernelRadiusFactor", kernelRadiusFactor, ">= 1");
    if (!(supportFactor >= 1.0f) || !std::isfinite(supportFactor))
        bad("supportFactor", supportFactor, ">= 1");
    if (!(tHigh > tLow))
        bad("tHigh", tHigh, "> tLow");
    if (!(sEnlargementFactor > 0.0f) || sEnlargementFactor > 1.0f)
        bad("sEnlargementFactor", sEnlargementFactor, "(0, 1]");
    if (!std::isfinite(lambdaMin))
        bad("lambdaMin", lambdaMin, "finite");
    if (!(anisotropyRadiusFactor >= 0.5f) || anisotropyRadiusFactor > 4.0f)
        bad("anisotropyRadiusFactor", anisotropyRadiusFactor, "[0.5, 4]");
    if (!(anisotropyKr >= 1.0f) || !std::isfinite(anisotropyKr))
        bad("anisotropyKr", anisotropyKr, ">= 1");
    if (!(anisotropyKn > 0.0f) || anisotropyKn > 1.0f)
        bad("anisotropyKn", anisotropyKn, "(0, 1]");
    if (anisotropyNeps < 0)
        bad("anisotropyNeps", anisotropyNeps, ">= 0");
    if (!(centreSmoothing >= 0.0f) || centreSmoothing > 1.0f)
        bad("centreSmoothing", centreSmoothing, "[0, 1]");
    if (!(isoLevel > 0.0f) || !std::isfinite(isoLevel))
        bad("isoLevel", isoLevel, "> 0");
    if (meshSmoothingIterations < 0 || meshSmoothingIterations > 100)
        bad("meshSmoothingIterations", meshSmoothingIterations, "[0, 100]");
    if (!detectSurface && (method == SurfaceMethod::Octree || method == SurfaceMethod::Narrow))
        throw std::invalid_argument(std::string("surface method ") + surfaceMethodName(method) +
                                    " needs the surface-particle detection (detectSurface = false)");
}

SurfaceSettings surfaceSettingsFromParameters(const ParameterSet& params) {
    SurfaceSettings s;
    s.particleRadius = params.getf(Param::particleRadius);
    s.restDensity = params.getf(Param::restDensity);
    s.lambdaMin = params.getf(Param::lambdaMin);
    s.leafSize = params.getf(Param::leafSize);
    s.kernelRadiusFactor = params.getf(Param::kernelRadiusFactor);
    s.tLow = params.getf(Param::tLow);
    s.tHigh = params.getf(Param::tHigh);
    s.method = parseSurfaceMethod(params.choice(Param::surfaceMethod));
    s.sEnlargementFactor = params.getf(Param::surfaceSEnlargement);
    s.field = parseSurfaceField(params.choice(Param::surfaceField));
    s.meshSmoothingIterations = int(std::lround(params.get(Param::surfaceSmoothing)));
    return s;
}

} // namespace octo
