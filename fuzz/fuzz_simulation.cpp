// libFuzzer target beyond the parsers (issue 30): scene JSON -> Simulation (the budget checks,
// fluid sampling, bodies, walls, the solver's set-up) -> a few steps, under a memory budget.
// Allowed outcomes: a refused scene (SceneError, ParameterError, InvalidMeshError,
// FileFormatError: each names the problem) or an unstable step (SimulationError). Anything else
// escaping, a non-finite state without SimulationError, a flagged blow-up without a message, or an
// empty error message is a finding.
// Work bound: the fuzzer looks for crashes, not for large scenes. A scene whose fluid and wall
// particles at its radius exceed kMaxFuzzParticles is built at a larger radius (up to the
// parameter's maximum) so the built-in scenes are stepped too; one still larger is skipped. The
// memory budget (OCTO_MEMORY_BUDGET_MB, 256 unless set) makes Scene::checkBudget refuse a scene
// that needs more, as it would on a small machine.
#include "common/Parameters.h"
#include "io/ParticleIo.h"
#include "rigid/MeshProperties.h"
#include "scene/Scene.h"
#include "sim/Simulation.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifndef OCTO_FUZZ_SCENE_DIR
#define OCTO_FUZZ_SCENE_DIR "."
#endif

namespace {

constexpr double kMaxFuzzParticles = 12000; // fluid + wall: a few ms per step
constexpr int kSteps = 3;

void finding(const char* what) {
    std::fprintf(stderr, "fuzz_simulation: %s\n", what);
    __builtin_trap();
}

// OCTO_FUZZ_VERBOSE=1: one line per input (what was built, or why it was refused).
const bool kVerbose = std::getenv("OCTO_FUZZ_VERBOSE") != nullptr;

void requireMessage(const std::exception& e) {
    if (std::string(e.what()).empty())
        finding("an error without a message");
    if (kVerbose)
        std::fprintf(stderr, "refused: %s\n", e.what());
}

void buildAndStep(const std::string& text) {
    // A source next to the built-in scenes: their meshes (../meshes/armadillo.obj) resolve.
    const octo::SceneDescription scene = octo::parseSceneJson(text, OCTO_FUZZ_SCENE_DIR "/fuzz.json");
    // The radius and wall layers the simulation will use (scene value, then its parameters).
    octo::ParameterSet p;
    p.set("particleRadius", scene.particleRadius);
    for (const auto& [name, value] : scene.parameters)
        p.setFromString(name, value);
    float r = p.getf("particleRadius");
    const int layers = p.geti("boundaryLayers");
    const double rMax = octo::findParameter("particleRadius")->maxValue;
    std::vector<std::string> overrides = {"surfaceEnabled=false"};
    auto particles = [&](float radius) {
        const octo::SceneBudget b = scene.budget(radius, layers);
        return b.fluidParticles + b.wallParticles;
    };
    if (particles(r) > kMaxFuzzParticles) {
        for (int i = 0; i < 200 && particles(r) > kMaxFuzzParticles && r < rMax; ++i)
            r = float(std::min(rMax, 1.25 * double(r)));
        if (particles(r) > kMaxFuzzParticles) {
            if (kVerbose)
                std::fprintf(stderr, "skipped: %.0f particles at r = %g m\n", particles(r), r);
            return; // large but possibly valid: beyond this target's work bound, not a finding
        }
        overrides.push_back("particleRadius=" + std::to_string(r));
    }
    octo::Simulation sim(scene, overrides);
    try {
        for (int i = 0; i < kSteps; ++i) {
            const octo::StepStats& s = sim.step();
            if (s.blowUp && sim.blowUpMessage().empty())
                finding("a blow-up flagged without a message");
            if (!(s.dt > 0.0) || !std::isfinite(s.dt))
                finding("a step with a non-positive or non-finite dt");
        }
    } catch (const octo::SimulationError& e) {
        requireMessage(e); // the documented end of an unstable run: the last good state is kept
        return;
    }
    if (sim.nonFiniteCount() != 0)
        finding("non-finite particles without a SimulationError");
    if (kVerbose)
        std::fprintf(stderr, "stepped: %zu fluid + %zu boundary particles at r = %g m, t = %g s%s\n",
                     sim.fluidParticleCount(), sim.boundaryParticleCount(), r, sim.time(),
                     sim.lastStep().blowUp ? " (blow-up)" : "");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool budgetSet = [] {
        setenv("OCTO_MEMORY_BUDGET_MB", "256", 0); // keeps a value the caller set
        return true;
    }();
    (void)budgetSet;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        buildAndStep(text);
    } catch (const octo::SceneError& e) {
        requireMessage(e);
    } catch (const octo::ParameterError& e) {
        requireMessage(e);
    } catch (const octo::InvalidMeshError& e) {
        requireMessage(e);
    } catch (const octo::FileFormatError& e) {
        requireMessage(e);
    } catch (const octo::SimulationError& e) {
        requireMessage(e);
    }
    return 0;
}
