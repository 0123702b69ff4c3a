#pragma once
// Typed access to the parameter table (Parameters.h): every parameter's name once, as an enum the
// compiler checks, so code reads `params.getf(Param::cflFactor)` (an array index) instead of a
// string it looks up in a map every step. The table in Parameters.cpp describes the same names;
// parameterTable() refuses to start if the two lists differ (test_parameter_orders checks it too).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace octo {

// X-macro: the one list of parameter names, in no particular order (the table sets the display order).
#define OCTO_PARAMETERS(X)                                                                                   \
    X(kernel)                                                                                                \
    X(particleRadius)                                                                                        \
    X(restDensity)                                                                                           \
    X(pressureSolver)                                                                                        \
    X(densityErrorTolerance)                                                                                 \
    X(divergenceErrorTolerance)                                                                              \
    X(dfsphMirrorWalls)                                                                                      \
    X(minIterations)                                                                                         \
    X(maxIterations)                                                                                         \
    X(timeStepMin)                                                                                           \
    X(timeStepMax)                                                                                           \
    X(cflFactor)                                                                                             \
    X(viscosity)                                                                                             \
    X(velocityFilter)                                                                                        \
    X(velocityFilterRate)                                                                                    \
    X(velocityFilterLinearExact)                                                                             \
    X(startSettling)                                                                                         \
    X(boundaryFriction)                                                                                      \
    X(boundaryLayers)                                                                                        \
    X(wallFit)                                                                                               \
    X(gravityX)                                                                                              \
    X(gravityY)                                                                                              \
    X(gravityZ)                                                                                              \
    X(surfaceTension)                                                                                        \
    X(adhesion)                                                                                              \
    X(wallCohesion)                                                                                          \
    X(vorticityConfinement)                                                                                  \
    X(surfaceEnabled)                                                                                        \
    X(surfaceMethod)                                                                                         \
    X(lambdaMin)                                                                                             \
    X(leafSize)                                                                                              \
    X(kernelRadiusFactor)                                                                                    \
    X(tLow)                                                                                                  \
    X(tHigh)                                                                                                 \
    X(surfaceSEnlargement)                                                                                   \
    X(surfaceField)                                                                                          \
    X(surfaceSmoothing)

enum class Param : uint8_t {
#define OCTO_PARAMETER_ENUM(name) name,
    OCTO_PARAMETERS(OCTO_PARAMETER_ENUM)
#undef OCTO_PARAMETER_ENUM
};

inline constexpr std::array kParameterNames = {
#define OCTO_PARAMETER_NAME(name) std::string_view(#name),
    OCTO_PARAMETERS(OCTO_PARAMETER_NAME)
#undef OCTO_PARAMETER_NAME
};
inline constexpr size_t kParameterCount = kParameterNames.size();

constexpr std::string_view parameterName(Param p) {
    return kParameterNames[size_t(p)];
}

} // namespace octo
