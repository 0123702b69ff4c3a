#pragma once
// Simulation's state, shared by its source files (Simulation.cpp: building, stepping, frames,
// snapshots; SimulationBodyApi.cpp: the rigid-body calls). Each job lives in a part of its own:
// BlowUpMonitor, SurfaceScheduler, FrameStatistics, SimulationBodies; ParameterBinding makes
// their configurations from the parameters.
#include "scene/Scene.h"
#include "sim/BlowUpMonitor.h"
#include "sim/FrameStatistics.h"
#include "sim/ParameterBinding.h"
#include "sim/Simulation.h"
#include "sim/SimulationBodies.h"
#include "sim/SurfaceScheduler.h"
#include "sph/BoundaryModel.h"
#include "sph/SphSolver.h"

#include <memory>
#include <string>
#include <vector>

namespace octo {

struct Simulation::Impl {
    SceneDescription scene;
    ParameterSet params;
    BoundaryModel boundary;
    SimulationBodies bodies{boundary};
    std::vector<BodyDescription> sceneBodies;
    std::unique_ptr<SphSolver> solver;
    uint64_t steps = 0;
    size_t escapedTotal = 0; // escapes through the walls since the last reset
    StepStats last;
    bool resetPending = false;
    bool lastStepEndedFrame = false;
    std::string status;
    float soundSpeed = 20.0f;
    BlowUpMonitor monitor{params, scene};
    SurfaceScheduler surface{params};
    FrameStatistics frames;

    SphSolver::Config config() const { return solverConfig(params, scene, soundSpeed); }
    /// Samples the scene at the current parameters: fluid, walls, bodies; every count restarts.
    void build();
    /// One step toward `target` (a frame end): the remaining steps of the frame are evened out so
    /// the frame ends exactly on its time.
    const StepStats& stepToward(double target);
    const StepStats& step(float maxDt);
};

} // namespace octo
