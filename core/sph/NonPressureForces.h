#pragma once
// The non-pressure accelerations of a step, each force in its own file with its parameters:
//  - gravity;
//  - artificial viscosity (ArtificialViscosity_Monaghan1992.h);
//  - boundary friction (BoundaryFriction_Akinci2012.h), with its reaction on tracked bodies;
//  - optional surface tension and adhesion (SurfaceTension_Akinci2013), with the wall's share in
//    the cohesion and the adhesion's reaction on tracked bodies;
//  - optional vorticity confinement (VorticityConfinement_Fedkiw2001.h).
// They are summed in one fused pass over the cached neighbour lists (one pass over the pairs
// instead of one per force: the pair's distance, kernel gradient and velocity difference are
// shared), which calls each force's inline pair function. The same pass sums what PCISPH's local
// delta needs (FluidModel::deltaScale, the same pairs), the attraction's potential energy and the
// accelerations without a potential (the energy balance the blow-up check reads), and writes the
// prediction v* = v + dt a, x* = x + dt v*.
//
// What the pair terms of surface tension and vorticity confinement read from the neighbours, the
// colour-field normal n_j and |omega_j|, comes from the previous step's pass (which computes them
// for free alongside its other sums; "Prev" is read, "Next" written, then swapped; the Prev arrays
// follow the particle sort). This saves a whole neighbour pass per step at a lag of one dt.
#include "common/Types.h"
#include "spatial/KernelTable.h"
#include "spatial/Lanes.h"
#include "spatial/TabulatedFunction.h"
#include "sph/ArtificialViscosity_Monaghan1992.h"
#include "sph/BoundaryFriction_Akinci2012.h"
#include "sph/SphConfig.h"
#include "sph/SurfaceTension_Akinci2013.h"
#include "sph/VorticityConfinement_Fedkiw2001.h"

#include <cstdint>
#include <span>
#include <vector>

namespace octo {

class FluidModel;

class NonPressureForces {
public:
    /// The forces' parameters from the configuration at support radius h, with the solver's kernel.
    void setParameters(const SphConfig& config, float h, const KernelTable& kernel);
    /// n particles; the lagged normals and vorticity restart.
    void resize(size_t n);
    /// The lagged fields that follow the particle sort (FluidModel::sortParticles gathers them),
    /// nullptr for those not in use.
    void laggedFields(std::vector<Vec3f>*& normals, std::vector<float>*& omegaNorms);
    /// The pass: FluidModel::accelNonPressure, the prediction (predictedVelocity, predicted[0]),
    /// deltaScale (under PCISPH, its only reader), zero pressures and pressure accelerations; the friction
    /// and adhesion reactions go to the model's tracked boundary samples.
    void compute(FluidModel& model, float dt);

    /// Largest |a| of the last pass (gravity included), for the time-step bound.
    float maxAcceleration() const { return maxAccel_; }
    /// Potential energy (J) of the cohesion, the wall's cohesion and the adhesion at the positions
    /// of the last pass (SphSolver::attractionEnergy).
    double attractionEnergy() const { return attractionEnergy_; }
    /// Whether the last pass had forces without a potential, and their accelerations.
    bool sourcesActive() const { return sourcesActive_; }
    const std::vector<Vec3f>& sourceAccelerations() const { return accelSource_; }

private:
    struct Pass;

    ArtificialViscosity_Monaghan1992 viscosity_;
    BoundaryFriction_Akinci2012 friction_;
    SurfaceTension_Akinci2013 tension_;
    VorticityConfinement_Fedkiw2001 vorticity_;
    float h_ = 0.04f;

    std::vector<Vec3f> normalsPrev_, normalsNext_;
    std::vector<float> omegaNormPrev_, omegaNormNext_;
    std::vector<Float4> xRho_, vVol_, nOmega_; // (x, rho), (v, m / rho), (n, |omega|) of the pass
    // The pair loops' tables, with both samples of a lookup side by side (one load per lane,
    // Lanes.h): grad W's factor, C(r)/r, and grad W's factor interleaved with U_C(r); all on the
    // samples of KernelTable's, where r^2 falls located by locator_.
    TabulatedFunction locator_;
    std::vector<float> grad_, cohesion_, gradPotential_;
    bool normalsValid_ = false, omegaValid_ = false;
    std::vector<double> blockEnergy_; // the attraction's energy per block (a fixed summation order)
    std::vector<Vec3f> accelSource_;  // the step's accelerations without a potential
    bool sourcesActive_ = false;
    double attractionEnergy_ = 0.0;
    float maxAccel_ = 0.0f;
};

} // namespace octo
