#include "sph/NonPressureForces.h"

#include "spatial/Lanes.h"
#include "sph/FluidModel.h"
#include "sph/ParallelUtil.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace octo {

void NonPressureForces::setParameters(const SphConfig& config, float h, const KernelTable& kernel) {
    h_ = h;
    viscosity_.setParameters(config.viscosity, h, config.soundSpeed, config.restDensity);
    friction_.setParameters(config.boundaryFriction, h, config.soundSpeed, config.restDensity);
    tension_.setSupportRadius(h);
    tension_.setParameters(config.surfaceTension, config.adhesion, config.wallCohesion);
    vorticity_.epsilon = config.vorticityConfinement;
    // The pair loops' copies of the tables (the same samples, stored for one load per lane).
    const TabulatedFunction &g = kernel.gradFactorTable(), &c = tension_.cohesionTable(),
                            &uc = tension_.cohesionPotentialTable();
    for (const TabulatedFunction* t : {&c, &uc})
        if (t->samples() != g.samples() || t->inverseSpacing() != g.inverseSpacing())
            throw std::logic_error(
                "NonPressureForces: the tension's tables and the kernel's differ in samples");
    locator_ = g;
    const int n = g.samples() + 2;
    grad_.resize(size_t(n));
    cohesion_.resize(size_t(n));
    gradPotential_.resize(2 * size_t(n));
    for (int i = 0; i < n; ++i) {
        grad_[size_t(i)] = g.value(i);
        cohesion_[size_t(i)] = c.value(i);
        gradPotential_[2 * size_t(i)] = g.value(i);
        gradPotential_[2 * size_t(i) + 1] = uc.value(i);
    }
}

void NonPressureForces::resize(size_t n) {
    normalsPrev_.assign(n, Vec3f::Zero());
    normalsNext_.assign(n, Vec3f::Zero());
    omegaNormPrev_.assign(n, 0.0f);
    omegaNormNext_.assign(n, 0.0f);
    normalsValid_ = omegaValid_ = false;
}

void NonPressureForces::laggedFields(std::vector<Vec3f>*& normals, std::vector<float>*& omegaNorms) {
    normals = normalsValid_ ? &normalsPrev_ : nullptr;
    omegaNorms = omegaValid_ ? &omegaNormPrev_ : nullptr;
}

// One particle's share of the pass. The pair terms of each force are the inline functions of its
// own file; they are called in one loop over the fluid pairs and one over the boundary pairs (a
// pass per force would read the lists, positions and velocities once per force).
struct NonPressureForces::Pass {
    NonPressureForces& f;
    FluidModel& model;
    float dt, rho0, m;
    const Vec3f *xs, *vs, *xb, *vb;
    const Float4 *xRho, *vVol, *nOmega; // the particles packed for the fluid pairs (compute())
    const float *psi, *rho;
    const uint8_t* tracked;
    bool track, tension, adhesion, vortex, wallCohesion, attraction, curvature, confine, sources;

    Pass(NonPressureForces& forces, FluidModel& fluid, float stepDt)
        : f(forces), model(fluid), dt(stepDt), rho0(fluid.config().restDensity), m(fluid.mass()),
          xs(fluid.state.positions.data()), vs(fluid.state.velocities.data()),
          xb(fluid.boundary().sortedPositions().data()), vb(fluid.boundary().sortedVelocities().data()),
          xRho(forces.xRho_.data()), vVol(forces.vVol_.data()), nOmega(forces.nOmega_.data()),
          psi(fluid.boundary().sortedPsi().data()), rho(fluid.state.densities.data()),
          tracked(fluid.boundary().sortedTracked().data()), track(fluid.boundary().hasForceTrackedObjects()),
          tension(forces.tension_.gamma() > 0.0f), adhesion(forces.tension_.beta() > 0.0f),
          vortex(forces.vorticity_.epsilon > 0.0f),
          wallCohesion(tension && forces.tension_.wallCohesion() > 0.0f),
          attraction(adhesion || wallCohesion), curvature(tension && forces.normalsValid_),
          confine(vortex && forces.omegaValid_), sources(tension || confine) {}

    /// What one particle's loops sum besides its acceleration, as (x, y, z, w) lanes: adding one
    /// pair's (x, y, z, w) sums four scalars side by side, each in the scalar loop's order.
    struct Sums {
        Float4 a = {};     // (a, -)
        Float4 srcU = {};  // (the part of a without a potential (sourceWork()), the particle's share
                           // of the attraction's potential energy over m)
        Float4 grad = {};  // PCISPH's delta: (sum_j grad W_ij, sum_j |grad W_ij|^2)
        Float4 gradB = {}; // (sum_k Psi_k grad W_ik, -)
    };
    /// TabulatedFunction's lookup of table t (f's copies), bit for bit: located as KernelTable's,
    /// both samples of a lane in one load.
    Float4 lookup(const std::vector<float>& t, Float4 s) const {
        const TabulatedFunction::Position4 p = f.locator_.locate(s);
        Float4 at, next;
        gatherAdjacent4(t.data(), p.i, at, next);
        return at + p.u * (next - at);
    }
    Float4 gradFactor(Float4 r2) const { return lookup(f.grad_, r2); }
    /// gradFactor(r2) and U_C(r2) with one locate and one load per lane.
    void gradFactorAndPotential(Float4 r2, Float4& gf, Float4& uc) const {
        const TabulatedFunction::Position4 p = f.locator_.locate(r2);
        Float4 r[4];
        gatherAdjacentPairs4(f.gradPotential_.data(), p.i, r);
        gf = r[0] + p.u * (r[2] - r[0]);
        uc = r[1] + p.u * (r[3] - r[1]);
    }

    static Vec3f xyz(Float4 v) { return Vec3f(v[0], v[1], v[2]); }
    static Float4 xyz0(const Vec3f& v) { return Float4{v.x(), v.y(), v.z(), 0.0f}; }

    /// Four particles' packed (x, y, z, w) as four lanes of x, y, z and w.
    static void gather(const Float4* packed, const uint32_t (&j)[4], Float4 (&out)[4]) {
        for (int l = 0; l < 4; ++l)
            out[l] = packed[j[l]];
        transpose4(out[0], out[1], out[2], out[3]);
    }
    /// Four pairs' lanes of x, y, z (and w) as one (x, y, z, w) per pair.
    static void perPair(Float4 (&t)[4]) { transpose4(t[0], t[1], t[2], t[3]); }

    // The fluid pairs of particle i, four at a time (Lanes.h): each lane computes its pair's terms
    // with the scalar operations in the scalar order (Eigen's sums of three terms are x + (y + z)),
    // then the sums take them pair by pair in list order, so every sum is bit for bit the scalar
    // loop's (which spent ~40 cycles a pair). The neighbours come packed, (x, rho), (v, V) and
    // (n, |omega|), one 16-byte load each and a transpose; the pairs' terms go back to the sums
    // transposed, one vector add per sum and pair instead of one scalar add per component. Inlined
    // into the per-particle loop, with the sums and the forces' parameters in locals: out of line,
    // the sums behind a reference were stored and reloaded per pair. Compiled once per set of
    // active terms: PCISPH's delta sums (Delta) are left out under DFSPH, which never reads them.
    template <bool Delta, bool Tension, bool Vortex>
    [[gnu::always_inline]] void fluidPairs(uint32_t i, const uint32_t* nb, uint32_t cnt, Sums& sums) const {
        const Vec3f xi = xs[i], vi = vs[i];
        Sums s = sums;
        const ArtificialViscosity_Monaghan1992 viscosity = f.viscosity_;
        const SurfaceTension_Akinci2013& ST = f.tension_;
        const float gamma = ST.gamma(), rhoI = Tension ? rho[i] : 0.0f;
        // Tension: colour-field normal n_i (written for the next step); confinement: omega_i and
        // eta_i = grad |omega| (from the previous step's |omega_j|).
        const Vec3f ni = Tension && curvature ? xyz(nOmega[i]) : Vec3f::Zero();
        const float wi = Vortex && confine ? nOmega[i][3] : 0.0f;
        const bool readN = (Tension && curvature) || (Vortex && confine);
        const Float4 zero = {};
        Float4 colour = {}, omega = {}, eta = {};
        for (uint32_t q0 = 0; q0 < cnt; q0 += 4) {
            const uint32_t lanes = std::min(4u, cnt - q0);
            // The four pairs' data (lanes past the list repeat its last pair and are not summed).
            uint32_t j[4];
            for (uint32_t l = 0; l < 4; ++l)
                j[l] = nb[q0 + std::min(l, lanes - 1)];
            Float4 xj[4], vj[4], nj[4] = {};
            gather(xRho, j, xj);
            gather(vVol, j, vj);
            if (readN)
                gather(nOmega, j, nj);
            Float4 d[3], v[3];
            for (int c = 0; c < 3; ++c) {
                d[c] = broadcast4(xi[c]) - xj[c];
                v[c] = broadcast4(vi[c]) - vj[c];
            }
            const Float4 vol = vj[3], rhoJ = xj[3], wj = nj[3];
            const Float4 r2 = sum3(d[0] * d[0], d[1] * d[1], d[2] * d[2]);
            Float4 gf, potential = {};
            if constexpr (Tension)
                gradFactorAndPotential(r2, gf, potential);
            else
                gf = gradFactor(r2);
            const Float4 visc = viscosity.coefficient(sum3(v[0] * d[0], v[1] * d[1], v[2] * d[2]), r2, gf, m);
            // Each pair's terms, per component; transposed into one (x, y, z, w) per pair below.
            Float4 viscous[4] = {visc * d[0], visc * d[1], visc * d[2], zero}, gradF[4] = {},
                   colourTerm[4] = {}, force[4] = {}, srcU[4] = {}, curl[4] = {}, grad[4] = {};
            if constexpr (Delta) {
                for (int c = 0; c < 3; ++c)
                    gradF[c] = gf * d[c];
                gradF[3] = gf * gf * r2;
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
                                    lookup(f.cohesion_, sum3(xp[0] * xp[0], xp[1] * xp[1], xp[2] * xp[2]));
                for (int c = 0; c < 3; ++c) {
                    const Float4 coh = cohF * xp[c]; // cohesionAcceleration
                    srcU[c] = (Kij - broadcast4(1.0f)) * coh;
                    if (curvature) // Kij curvatureAcceleration
                        srcU[c] += Kij * (broadcast4(-gamma) * (broadcast4(ni[c]) - nj[c]));
                    force[c] = coh + srcU[c];
                }
                srcU[3] = broadcast4(0.5f * gamma * m) * potential;
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
            perPair(viscous);
            if constexpr (Delta)
                perPair(gradF);
            if constexpr (Tension) {
                perPair(colourTerm);
                perPair(force);
                perPair(srcU);
            }
            if constexpr (Vortex) {
                perPair(curl);
                if (confine)
                    perPair(grad);
            }
            auto add = [&](uint32_t l) {
                if constexpr (Delta)
                    s.grad += gradF[l];
                s.a -= viscous[l];
                if constexpr (Tension) {
                    colour += colourTerm[l];
                    s.a += force[l];
                    s.srcU += srcU[l];
                }
                if constexpr (Vortex) {
                    omega += curl[l];
                    if (confine)
                        eta += grad[l];
                }
            };
            if (lanes == 4) {
                add(0), add(1), add(2), add(3);
            } else {
                for (uint32_t l = 0; l < lanes; ++l)
                    add(l);
            }
        }
        if constexpr (Tension)
            f.normalsNext_[i] = f.h_ * xyz(colour);
        if constexpr (Vortex) {
            f.omegaNormNext_[i] = xyz(omega).norm();
            if (confine) {
                const Vec3f conf = VorticityConfinement_Fedkiw2001::acceleration(xyz(eta), xyz(omega),
                                                                                 f.vorticity_.epsilon, f.h_);
                s.a += xyz0(conf);
                s.srcU += xyz0(conf); // + 0 leaves the energy lane as it was (never -0)
            }
        }
        sums = s;
    }

    // The boundary pairs of particle i, four at a time as the fluid pairs: the friction in lanes
    // (branch-free: a separating pair's lane is zeroed, and subtracting +0 leaves a sum that never
    // holds -0 as it was); the attraction (adhesion, wall cohesion: off by default) pair by pair.
    template <bool Delta>
    [[gnu::always_inline]] void boundaryPairs(size_t b, uint32_t i, const uint32_t* nb, uint32_t cnt,
                                              Sums& sums) const {
        const Vec3f xi = xs[i], vi = vs[i];
        Sums s = sums;
        const BoundaryFriction_Akinci2012 friction = f.friction_;
        const SurfaceTension_Akinci2013& ST = f.tension_;
        const float gamma = ST.gamma(), beta = ST.beta();
        const Float4 zero = {};
        for (uint32_t q0 = 0; q0 < cnt; q0 += 4) {
            const uint32_t lanes = std::min(4u, cnt - q0);
            uint32_t k[4];
            for (uint32_t l = 0; l < 4; ++l)
                k[l] = nb[q0 + std::min(l, lanes - 1)];
            auto lanesOf = [&](auto&& value) {
                return Float4{value(k[0]), value(k[1]), value(k[2]), value(k[3])};
            };
            Float4 xik[3], vik[3];
            for (int c = 0; c < 3; ++c) {
                xik[c] = broadcast4(xi[c]) - lanesOf([&](uint32_t q) { return xb[q][c]; });
                vik[c] = broadcast4(vi[c]) - lanesOf([&](uint32_t q) { return vb[q][c]; });
            }
            const Float4 psiK = lanesOf([&](uint32_t q) { return psi[q]; });
            const Float4 r2 = sum3(xik[0] * xik[0], xik[1] * xik[1], xik[2] * xik[2]);
            const Float4 gf = gradFactor(r2);
            const Float4 vx = sum3(vik[0] * xik[0], vik[1] * xik[1], vik[2] * xik[2]);
            const Int4 acting = friction.acting(vx);
            const Float4 coef = friction.coefficient(vx, r2, gf, psiK);
            Float4 ga[4] = {}, gradB[4] = {};
            for (int c = 0; c < 3; ++c)
                ga[c] = select4(acting, coef * xik[c], zero);
            perPair(ga);
            if constexpr (Delta) {
                for (int c = 0; c < 3; ++c)
                    gradB[c] = (psiK * gf) * xik[c];
                perPair(gradB);
            }
            const unsigned actingBits = laneBits4(acting);
            for (uint32_t l = 0; l < lanes; ++l) {
                if constexpr (Delta)
                    s.gradB += gradB[l];
                s.a -= ga[l];
                if (track && (actingBits >> l & 1u) && tracked[k[l]])
                    model.bodyForces.add(b, k[l], m * xyz(ga[l]));
                if (attraction)
                    attractionPair(b, i, k[l], gamma, beta, s);
            }
        }
        sums = s;
    }

    // Adhesion (Akinci 2013 eq. 6) and the wall's share in the cohesion between particle i and
    // boundary sample k, at the predicted separation like the wall pressure they balance
    // (see the cohesion above); one reaction pulls a body towards the fluid.
    void attractionPair(size_t b, uint32_t i, uint32_t k, float gamma, float beta, Sums& s) const {
        const SurfaceTension_Akinci2013& ST = f.tension_;
        const Vec3f xi = xs[i], vi = vs[i];
        const Vec3f xik = xi - xb[k];
        const float r2 = xik.squaredNorm();
        const Vec3f xp = xik + dt * (vi - vb[k]);
        const float rp2 = xp.squaredNorm();
        Vec3f aa = Vec3f::Zero();
        if (adhesion) {
            aa += ST.adhesionAcceleration(xp, rp2, beta, psi[k]);
            s.srcU[3] += beta * psi[k] * ST.adhesionPotential(r2);
        }
        if (wallCohesion) {
            const float massK = ST.wallCohesion() * psi[k];
            const Vec3f coh = ST.cohesionAcceleration(xp, rp2, gamma, massK);
            const float Kik = ST.densityCorrection(rho0, rho[i] + rho0);
            aa += Kik * coh;
            for (int c = 0; c < 3; ++c)
                s.srcU[c] += (Kik - 1.0f) * coh[c];
            s.srcU[3] += gamma * massK * ST.cohesionPotential(r2);
        }
        s.a += xyz0(aa);
        if (track && tracked[k])
            model.bodyForces.add(b, k, -m * aa);
    }

    /// Beyond the paper: the prototype delta assumes a full, symmetric neighbourhood. In a
    /// wall corner the one-sided neighbours respond up to ~2x more strongly to a pressure
    /// change and the correction oscillates and diverges. The same derivation with the
    /// particle's own neighbours (the boundary pushing with twice p_i/rho_i^2, the mirrored
    /// pressure) gives delta_i; PCISPH uses min(delta_prototype, delta_i), never stiffer
    /// than the paper.
    float deltaScale(const Sums& s) const {
        const Vec3f gradF = xyz(s.grad), gradB = xyz(s.gradB);
        const Vec3f A = m * gradF + gradB, B = 2.0f * (m * gradF + gradB);
        const float local = A.dot(B) + 2.0f * m * m * s.grad[3];
        const float proto = model.protoDenominator();
        return local > proto ? proto / local : 1.0f;
    }
};

void NonPressureForces::compute(FluidModel& model, float dt) {
    const size_t n = model.state.size();
    xRho_.resize(n), vVol_.resize(n), nOmega_.resize(n); // before the pass takes their addresses
    const Pass pass(*this, model, dt);
    const float m = model.mass();
    const bool tension = pass.tension, vortex = pass.vortex;
    model.deltaScale.resize(n);
    if (pass.sources) // forces without a potential (sourceWork)
        accelSource_.resize(n);
    sourcesActive_ = pass.sources;
    // The particles packed for the fluid pairs: (x, rho), (v, V_j = m / rho_j) and the lagged
    // (n, |omega|), one 16-byte load per neighbour each.
    const bool volumes = tension || vortex, lagged = pass.curvature || pass.confine;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i < r.end(); ++i) {
            const Vec3f x = pass.xs[i], v = pass.vs[i];
            xRho_[i] = Float4{x.x(), x.y(), x.z(), pass.rho[i]};
            vVol_[i] = Float4{v.x(), v.y(), v.z(), volumes ? m / pass.rho[i] : 0.0f};
            if (lagged) {
                const Vec3f nl = pass.curvature ? normalsPrev_[i] : Vec3f::Zero();
                nOmega_[i] = Float4{nl.x(), nl.y(), nl.z(), pass.confine ? omegaNormPrev_[i] : 0.0f};
            }
        }
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
                    accelSource_[i] = Pass::xyz(s.srcU);
                Vec3f a = Pass::xyz(s.a) + g;
                la = std::max(la, a.squaredNorm());
                energy += s.srcU[3];
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
