#include "sph/NonPressureForces.h"

#include "sph/FluidModel.h"
#include "sph/ParallelUtil.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

namespace octo {

void NonPressureForces::setParameters(const SphConfig& config, float h) {
    h_ = h;
    viscosity_.setParameters(config.viscosity, h, config.soundSpeed, config.restDensity);
    friction_.setParameters(config.boundaryFriction, h, config.soundSpeed, config.restDensity);
    tension_.setSupportRadius(h);
    tension_.setParameters(config.surfaceTension, config.adhesion, config.wallCohesion);
    vorticity_.epsilon = config.vorticityConfinement;
}

void NonPressureForces::resize(size_t n) {
    normalsPrev_.assign(n, Vec3f::Zero());
    normalsNext_.assign(n, Vec3f::Zero());
    omegaNormPrev_.assign(n, 0.0f);
    omegaNormNext_.assign(n, 0.0f);
    volume_.assign(n, 0.0f);
    normalsValid_ = omegaValid_ = false;
}

void NonPressureForces::sortAlong(std::span<const uint32_t> order, std::vector<Vec3f>& scratchVec,
                                  std::vector<float>& scratchFloat) {
    if (normalsValid_)
        parallel::gather(order, normalsPrev_, scratchVec);
    if (omegaValid_)
        parallel::gather(order, omegaNormPrev_, scratchFloat);
}

// One particle's share of the pass. The pair terms of each force are the inline functions of its
// own file; they are called in one loop over the fluid pairs and one over the boundary pairs (a
// pass per force would read the lists, positions and velocities once per force).
struct NonPressureForces::Pass {
    NonPressureForces& f;
    FluidModel& model;
    const KernelTable& K;
    float dt, rho0, m;
    const Vec3f *xs, *vs, *xb, *vb, *nPrev;
    const float *psi, *rho, *wPrev, *V;
    const uint8_t* tracked;
    bool track, tension, adhesion, vortex, wallCohesion, attraction, curvature, confine, sources;

    Pass(NonPressureForces& forces, FluidModel& fluid, float stepDt)
        : f(forces), model(fluid), K(fluid.table()), dt(stepDt), rho0(fluid.config().restDensity),
          m(fluid.mass()), xs(fluid.state.positions.data()), vs(fluid.state.velocities.data()),
          xb(fluid.boundary().sortedPositions().data()), vb(fluid.boundary().sortedVelocities().data()),
          nPrev(forces.normalsPrev_.data()), psi(fluid.boundary().sortedPsi().data()),
          rho(fluid.state.densities.data()), wPrev(forces.omegaNormPrev_.data()), V(forces.volume_.data()),
          tracked(fluid.boundary().sortedTracked().data()), track(fluid.boundary().hasForceTrackedObjects()),
          tension(forces.tension_.gamma() > 0.0f), adhesion(forces.tension_.beta() > 0.0f),
          vortex(forces.vorticity_.epsilon > 0.0f),
          wallCohesion(tension && forces.tension_.wallCohesion() > 0.0f),
          attraction(adhesion || wallCohesion), curvature(tension && forces.normalsValid_),
          confine(vortex && forces.omegaValid_), sources(tension || confine) {}

    /// What one particle's loops sum besides its acceleration.
    struct Sums {
        Vec3f a = Vec3f::Zero();
        Vec3f aSource = Vec3f::Zero(); // the part of a without a potential (sourceWork())
        Vec3f gradF = Vec3f::Zero(), gradB = Vec3f::Zero();
        float gradSq = 0.0f;
        float u = 0.0f; // the particle's share of the attraction's potential energy, over m
    };

    // The fluid pairs of particle i, four at a time (Lanes.h): each lane computes its pair's terms
    // with the scalar operations in the scalar order (Eigen's sums of three terms are x + (y + z)),
    // then the sums take them pair by pair in list order, so every sum is bit for bit the scalar
    // loop's (which spent ~40 cycles a pair). Inlined into the per-particle loop, with the sums and
    // the forces' parameters in locals: out of line, the sums behind a reference were stored and
    // reloaded per pair. Compiled once per set of active terms: PCISPH's delta sums (Delta) are
    // left out under DFSPH, which never reads them.
    template <bool Delta, bool Tension, bool Vortex>
    [[gnu::always_inline]] void fluidPairs(uint32_t i, const uint32_t* nb, uint32_t cnt, Sums& sums) const {
        const Vec3f xi = xs[i], vi = vs[i];
        Sums s = sums;
        const ArtificialViscosity_Monaghan1992 viscosity = f.viscosity_;
        const SurfaceTension_Akinci2013& ST = f.tension_;
        const float gamma = ST.gamma(), rhoI = Tension ? rho[i] : 0.0f;
        // Tension: colour-field normal n_i (written for the next step); confinement: omega_i and
        // eta_i = grad |omega| (from the previous step's |omega_j|).
        const Vec3f ni = Tension && curvature ? nPrev[i] : Vec3f::Zero();
        const float wi = Vortex && confine ? wPrev[i] : 0.0f;
        Vec3f colour = Vec3f::Zero(), omega = Vec3f::Zero(), eta = Vec3f::Zero();
        for (uint32_t q0 = 0; q0 < cnt; q0 += 4) {
            const uint32_t lanes = std::min(4u, cnt - q0);
            // The four pairs' data (lanes past the list repeat its last pair and are not summed).
            uint32_t j[4];
            for (uint32_t l = 0; l < 4; ++l)
                j[l] = nb[q0 + std::min(l, lanes - 1)];
            auto lanesOf = [&](auto&& value) {
                return Float4{value(j[0]), value(j[1]), value(j[2]), value(j[3])};
            };
            Float4 d[3], v[3], vol = {}, rhoJ = {}, nj[3] = {}, wj = {};
            for (int c = 0; c < 3; ++c) {
                d[c] = broadcast4(xi[c]) - lanesOf([&](uint32_t k) { return xs[k][c]; });
                v[c] = broadcast4(vi[c]) - lanesOf([&](uint32_t k) { return vs[k][c]; });
            }
            if constexpr (Tension || Vortex)
                vol = lanesOf([&](uint32_t k) { return V[k]; });
            if constexpr (Tension) {
                rhoJ = lanesOf([&](uint32_t k) { return rho[k]; });
                if (curvature)
                    for (int c = 0; c < 3; ++c)
                        nj[c] = lanesOf([&](uint32_t k) { return nPrev[k][c]; });
            }
            if constexpr (Vortex)
                if (confine)
                    wj = lanesOf([&](uint32_t k) { return wPrev[k]; });
            const Float4 r2 = sum3(d[0] * d[0], d[1] * d[1], d[2] * d[2]);
            const Float4 gf = K.gradFactor(r2);
            const Float4 visc = viscosity.coefficient(sum3(v[0] * d[0], v[1] * d[1], v[2] * d[2]), r2, gf, m);
            Float4 viscous[3] = {}, gradF[3] = {}, gradSq = {}, colourTerm[3] = {}, force[3] = {},
                   src[3] = {}, u = {}, curl[3] = {}, grad[3] = {};
            for (int c = 0; c < 3; ++c)
                viscous[c] = visc * d[c];
            if constexpr (Delta) {
                for (int c = 0; c < 3; ++c)
                    gradF[c] = gf * d[c];
                gradSq = gf * gf * r2;
            }
            if constexpr (Tension) {
                const Float4 colourF = vol * gf;
                // Cohesion along the pair's predicted separation xp = x_ij + dt v_ij, where the
                // pressure that balances it acts (the pressure solver's prediction): two large
                // forces that cancel along different directions leave a torque ~ dt p omega that
                // feeds any rotation. A drop of 1000 particles in zero gravity spun up from
                // round-off (|L| x100 in 2 s) and burst at 3 s (KE 0.004 -> 0.38 J); the
                // 'droplets' scene gained energy for ever (docs/BENCHMARKS.md).
                Float4 xp[3];
                for (int c = 0; c < 3; ++c) {
                    colourTerm[c] = colourF * d[c];
                    xp[c] = d[c] + broadcast4(dt) * v[c];
                }
                // Energy bookkeeping (attractionEnergy, sourceWork): the cohesion without K_ij has
                // a potential; K_ij - 1 and the curvature term are sources.
                const Float4 Kij = ST.densityCorrection(rho0, broadcast4(rhoI) + rhoJ);
                const Float4 cohF = broadcast4(-gamma * m) *
                                    ST.cohesionOverR(sum3(xp[0] * xp[0], xp[1] * xp[1], xp[2] * xp[2]));
                for (int c = 0; c < 3; ++c) {
                    const Float4 coh = cohF * xp[c]; // cohesionAcceleration
                    src[c] = (Kij - broadcast4(1.0f)) * coh;
                    if (curvature) // Kij curvatureAcceleration
                        src[c] += Kij * (broadcast4(-gamma) * (broadcast4(ni[c]) - nj[c]));
                    force[c] = coh + src[c];
                }
                u = broadcast4(0.5f * gamma * m) * ST.cohesionPotential(r2);
            }
            if constexpr (Vortex) {
                // VorticityConfinement_Fedkiw2001::curlTerm (V_j gf) v_ij x x_ij and gradientTerm.
                const Float4 curlF = vol * gf;
                curl[0] = curlF * (v[1] * d[2] - v[2] * d[1]);
                curl[1] = curlF * (v[2] * d[0] - v[0] * d[2]);
                curl[2] = curlF * (v[0] * d[1] - v[1] * d[0]);
                if (confine) {
                    const Float4 gradientF = vol * (wj - broadcast4(wi)) * gf;
                    for (int c = 0; c < 3; ++c)
                        grad[c] = gradientF * d[c];
                }
            }
            for (uint32_t l = 0; l < lanes; ++l) {
                if constexpr (Delta) {
                    for (int c = 0; c < 3; ++c)
                        s.gradF[c] += gradF[c][l];
                    s.gradSq += gradSq[l];
                }
                for (int c = 0; c < 3; ++c)
                    s.a[c] -= viscous[c][l];
                if constexpr (Tension) {
                    for (int c = 0; c < 3; ++c) {
                        colour[c] += colourTerm[c][l];
                        s.a[c] += force[c][l];
                        s.aSource[c] += src[c][l];
                    }
                    s.u += u[l];
                }
                if constexpr (Vortex) {
                    for (int c = 0; c < 3; ++c)
                        omega[c] += curl[c][l];
                    if (confine)
                        for (int c = 0; c < 3; ++c)
                            eta[c] += grad[c][l];
                }
            }
        }
        if constexpr (Tension)
            f.normalsNext_[i] = f.h_ * colour;
        if constexpr (Vortex) {
            f.omegaNormNext_[i] = omega.norm();
            if (confine) {
                const Vec3f conf =
                    VorticityConfinement_Fedkiw2001::acceleration(eta, omega, f.vorticity_.epsilon, f.h_);
                s.a += conf;
                s.aSource += conf;
            }
        }
        sums = s;
    }

    template <bool Delta>
    [[gnu::always_inline]] void boundaryPairs(size_t b, uint32_t i, const uint32_t* nb, uint32_t cnt,
                                              Sums& sums) const {
        const Vec3f xi = xs[i], vi = vs[i];
        Sums s = sums;
        const BoundaryFriction_Akinci2012 friction = f.friction_;
        const SurfaceTension_Akinci2013& ST = f.tension_;
        const float gamma = ST.gamma(), beta = ST.beta();
        for (uint32_t q = 0; q < cnt; ++q) {
            const uint32_t k = nb[q];
            const Vec3f xik = xi - xb[k];
            const float r2 = xik.squaredNorm();
            const float gf = K.gradFactor(r2);
            if constexpr (Delta)
                s.gradB += (psi[k] * gf) * xik;
            Vec3f ga;
            if (friction.acceleration(ga, (vi - vb[k]).dot(xik), r2, gf, psi[k], xik)) {
                s.a -= ga;
                if (track && tracked[k])
                    model.bodyForces.add(b, k, m * ga);
            }
            if (attraction) {
                // Adhesion (Akinci 2013 eq. 6) and the wall's share in the cohesion, at the
                // predicted separation like the wall pressure they balance (see cohesion
                // above); one reaction pulls a body towards the fluid.
                const Vec3f xp = xik + dt * (vi - vb[k]);
                const float rp2 = xp.squaredNorm();
                Vec3f aa = Vec3f::Zero();
                if (adhesion) {
                    aa += ST.adhesionAcceleration(xp, rp2, beta, psi[k]);
                    s.u += beta * psi[k] * ST.adhesionPotential(r2);
                }
                if (wallCohesion) {
                    const float massK = ST.wallCohesion() * psi[k];
                    const Vec3f coh = ST.cohesionAcceleration(xp, rp2, gamma, massK);
                    const float Kik = ST.densityCorrection(rho0, rho[i] + rho0);
                    aa += Kik * coh;
                    s.aSource += (Kik - 1.0f) * coh;
                    s.u += gamma * massK * ST.cohesionPotential(r2);
                }
                s.a += aa;
                if (track && tracked[k])
                    model.bodyForces.add(b, k, -m * aa);
            }
        }
        sums = s;
    }

    /// Beyond the paper: the prototype delta assumes a full, symmetric neighbourhood. In a
    /// wall corner the one-sided neighbours respond up to ~2x more strongly to a pressure
    /// change and the correction oscillates and diverges. The same derivation with the
    /// particle's own neighbours (the boundary pushing with twice p_i/rho_i^2, the mirrored
    /// pressure) gives delta_i; PCISPH uses min(delta_prototype, delta_i), never stiffer
    /// than the paper.
    float deltaScale(const Sums& s) const {
        const Vec3f A = m * s.gradF + s.gradB, B = 2.0f * (m * s.gradF + s.gradB);
        const float local = A.dot(B) + 2.0f * m * m * s.gradSq;
        const float proto = model.protoDenominator();
        return local > proto ? proto / local : 1.0f;
    }
};

void NonPressureForces::compute(FluidModel& model, float dt) {
    const Pass pass(*this, model, dt);
    const float m = model.mass();
    const size_t n = model.state.size();
    const bool tension = pass.tension, vortex = pass.vortex;
    model.deltaScale.resize(n);
    if (pass.sources) // forces without a potential (sourceWork)
        accelSource_.resize(n);
    sourcesActive_ = pass.sources;
    if (tension || vortex)
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t i = r.begin(); i < r.end(); ++i)
                volume_[i] = m / pass.rho[i];
        });
    std::atomic<float> maxA2{0.0f};
    // The attraction's potential energy per block (per unit mass m; see attractionEnergy()).
    blockEnergy_.assign(model.lists.blocks.size(), 0.0);
    if (pass.track)
        model.bodyForces.reset(model.lists.blocks.size());
    const Vec3f g = model.config().gravity;
    const FluidModel::NeighborLists& L = model.lists;
    Vec3f* xPred = model.predicted[0].data();
    auto run = [&](auto delta, auto withTension, auto withVortex) {
        constexpr bool Delta = decltype(delta)::value, Tension = decltype(withTension)::value,
                       Vortex = decltype(withVortex)::value;
        model.forBlocks([&](size_t b, uint32_t begin, uint32_t end) {
            const uint32_t* fn = L.blocks[b].fluid.data();
            const uint32_t* bn = L.blocks[b].boundary.data();
            float la = 0.0f;
            double energy = 0.0;
            for (uint32_t i = begin; i < end; ++i) {
                Pass::Sums s;
                pass.fluidPairs<Delta, Tension, Vortex>(i, fn + L.fluidBegin[i], L.fluidCount[i], s);
                pass.boundaryPairs<Delta>(b, i, bn + L.boundaryBegin[i], L.boundaryCount[i], s);
                if constexpr (Delta)
                    model.deltaScale[i] = pass.deltaScale(s);
                if (pass.sources)
                    accelSource_[i] = s.aSource;
                Vec3f a = s.a + g;
                la = std::max(la, a.squaredNorm());
                energy += s.u;
                model.accelNonPressure[i] = a;
                model.accelPressure[i] = Vec3f::Zero();
                model.state.pressures[i] = 0.0f;
                const Vec3f v = pass.vs[i] + dt * a;
                model.predictedVelocity[i] = v;
                xPred[i] = pass.xs[i] + dt * v;
            }
            parallel::atomicMax(maxA2, la);
            blockEnergy_[b] = energy;
        });
    };
    // PCISPH's local delta (deltaScale) is read by PCISPH alone.
    const bool delta = model.config().pressureSolver == SphConfig::PressureSolver::Pcisph;
    using T = std::true_type;
    using F = std::false_type;
    auto withDelta = [&](auto d) {
        if (tension && vortex)
            run(d, T{}, T{});
        else if (tension)
            run(d, T{}, F{});
        else if (vortex)
            run(d, F{}, T{});
        else
            run(d, F{}, F{});
    };
    if (delta)
        withDelta(T{});
    else
        withDelta(F{});
    if (pass.track)
        model.bodyForces.flush(model.boundary());
    attractionEnergy_ = 0.0;
    for (double e : blockEnergy_)
        attractionEnergy_ += double(m) * e;
    // This step's n_i and |omega_i| become what the next step (or a restart of this one) reads.
    if (tension)
        normalsPrev_.swap(normalsNext_);
    if (vortex)
        omegaNormPrev_.swap(omegaNormNext_);
    normalsValid_ = tension;
    omegaValid_ = vortex;
    maxAccel_ = std::sqrt(maxA2.load());
}

} // namespace octo
