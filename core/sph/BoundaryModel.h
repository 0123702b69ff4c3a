#pragma once
// Boundary particles after Akinci, Ihmsen, Akinci, Solenthaler & Teschner 2012, "Versatile
// rigid-fluid coupling for incompressible SPH", ACM TOG 31(4) 62.
//
// Every wall and rigid body is an *object*: a contiguous range of boundary particles with
// body-space points, world positions and world velocities. Each boundary particle k carries
// Psi_k = rho0 * V_k, V_k = 1 / sum_l W_kl (eq. 4/5), which corrects for uneven sampling.
// V_k is summed over the particles of the same object: it is invariant under the object's
// rigid motion, so it is computed once per object (and again only when h or rho0 change).
//
// The fluid solver adds F_k<-i (the reaction to the pressure and friction force the boundary
// exerts on fluid particle i) to the boundary particles of non-static objects, so a rigid-body
// integrator reads objectForce(obj) and objectTorque(obj, centre) after each step.
//
// A separate neighbour grid holds the boundary particles; it is rebuilt only when an object
// moved (setObjectTransform) or objects were added/removed.
#include "common/Types.h"
#include "spatial/NeighborGrid.h"
#include "spatial/SphKernel.h"

#include <span>
#include <vector>

namespace octo {

class BoundaryModel {
public:
    /// Support radius h and rest density rho0; recomputes every Psi when they change.
    void setKernel(float supportRadius, float restDensity, KernelKind kind = KernelKind::CubicSpline);
    KernelKind kernelKind() const { return kind_; }
    float supportRadius() const { return h_; }

    /// Adds an object whose particles are given in body space (world = R * p + t). Its
    /// transform starts at identity. Returns the object id (stable until the model is cleared).
    /// psiScale multiplies Akinci's Psi_k (1 = the paper; see planarWallPsiScale).
    int addObject(std::vector<Vec3f> bodySpacePoints, bool isStatic, float psiScale = 1.0f);
    /// Accumulates the fluid's forces on a static object too (a kinematic body's drag), without
    /// making it dynamic.
    void reportForces(int object);
    /// Makes a static object whose forces are not reported a container wall: the fluid solver gives
    /// its samples the pressure extrapolated from the fluid around them (Adami et al. 2012) instead
    /// of each fluid particle's own, mirrored (see Pcisph_Solenthaler2009). Throws std::logic_error for a
    /// dynamic or force-reporting object: the reaction on a body is computed from the mirrored one.
    void setWall(int object);
    /// setWall, and the wall's Psi fitted so that a rest lattice of spacing `spacing` filling
    /// `fluidRegion` (the container) has rho0 at every site, in the wall's concave edges and
    /// corners too (calibrateWallPsi in BoundaryModel.cpp); kept through setKernel.
    void setWall(int object, const Aabb& fluidRegion, float spacing);
    bool isWall(int object) const;
    /// Removes an object's particles; its id stays invalid afterwards.
    void removeObject(int object);
    void clear();

    /// Places an object rigidly: x = R p + t, v = linVel + angVel x (x - t).
    void setObjectTransform(int object, const Mat3f& rotation, const Vec3f& translation,
                            const Vec3f& linearVelocity = Vec3f::Zero(),
                            const Vec3f& angularVelocity = Vec3f::Zero());
    /// Gives an object new velocities at its current pose, v = linVel + angVel x (x - t), without
    /// rebuilding the sample grid (the sorted order, and so the solver's neighbour lists, stay).
    void setObjectVelocity(int object, const Vec3f& linearVelocity, const Vec3f& angularVelocity);

    bool isValid(int object) const;
    bool isStatic(int object) const;
    int objectCount() const { return int(objects_.size()); }
    /// [first, first + count) of the object's particles in positions()/velocities()/psi().
    std::pair<uint32_t, uint32_t> objectRange(int object) const;

    /// Total force of the fluid on the object in the last step (N); zero for static objects unless
    /// they report forces (reportForces: a kinematic body's drag).
    Vec3f objectForce(int object) const;
    /// Torque of the fluid forces about a point (N m), sum (x_k - about) x F_k.
    Vec3f objectTorque(int object, const Vec3f& about) const;
    /// Per boundary particle force F_k<-i of the last step (object order, like positions()).
    std::span<const Vec3f> forces() const { return forces_; }

    size_t particleCount() const { return positions_.size(); }
    std::span<const Vec3f> positions() const { return positions_; }
    std::span<const Vec3f> velocities() const { return velocities_; }
    std::span<const float> psi() const { return psi_; }
    Aabb bounds() const;

    // ---- used by the fluid solver --------------------------------------------------------
    /// Rebuilds the grid and the sorted copies if anything moved; cheap otherwise.
    void update();
    /// Some object's fluid forces are accumulated (a dynamic object, or one that reportForces).
    bool hasForceTrackedObjects() const;
    /// Some object moves under the fluid's forces (not static): two-way coupling.
    bool hasDynamicObjects() const;
    /// True when objects moved or changed since the last update() (its grid will be rebuilt).
    bool needsUpdate() const { return dirty_; }
    const NeighborGrid& grid() const { return grid_; }
    /// Boundary data in grid order (index = sorted index used by the neighbour lists).
    std::span<const Vec3f> sortedPositions() const { return sortedPositions_; }
    std::span<const Vec3f> sortedVelocities() const { return sortedVelocities_; }
    std::span<const float> sortedPsi() const { return sortedPsi_; }
    /// 1 where the sorted particle belongs to an object whose forces are accumulated.
    std::span<const uint8_t> sortedTracked() const { return sortedTracked_; }
    /// 1 where the sorted particle belongs to a wall (setWall).
    std::span<const uint8_t> sortedWall() const { return sortedWall_; }
    void clearForces();
    /// Adds a force on sorted boundary particle k; one thread (the solver sums through
    /// BoundaryForceBuffer, in a fixed order).
    void addForceSorted(uint32_t sortedIndex, const Vec3f& force);

private:
    struct Object {
        uint32_t first = 0, count = 0;
        bool isStatic = true, valid = false, reportsForces = false, wall = false;
        float psiScale = 1.0f;
        Aabb restRegion; // setWall(object, region, spacing): the lattice Psi is fitted to
        float restSpacing = 0.0f;
        Mat3f rotation = Mat3f::Identity();
        Vec3f translation = Vec3f::Zero(), linearVelocity = Vec3f::Zero(), angularVelocity = Vec3f::Zero();
    };
    void computePsi(const Object& object);
    void calibrateWallPsi(const Object& object);
    const Object& checked(int object) const;

    float h_ = 0.0f, rho0_ = 1000.0f;
    KernelKind kind_ = KernelKind::CubicSpline;
    std::vector<Object> objects_;
    std::vector<Vec3f> bodyPoints_, positions_, velocities_, forces_;
    std::vector<float> psi_;
    std::vector<uint8_t> tracked_, wall_;

    bool dirty_ = true;
    NeighborGrid grid_;
    std::vector<Vec3f> sortedPositions_, sortedVelocities_;
    std::vector<float> sortedPsi_;
    std::vector<uint8_t> sortedTracked_, sortedWall_;
};

/// Samples the walls of a closed box as `layers` shells of boundary particles outside `box`.
/// The innermost shell lies `spacing / 2` outside the box faces (where a fluid lattice of
/// the same spacing starting `spacing / 2` inside would continue), the others `spacing` apart.
std::vector<Vec3f> sampleBoxWalls(const Aabb& box, float spacing, int layers);

/// Factor for Psi of a flat wall of `layers` lattice layers (spacing d0 = fluid rest spacing)
/// that makes a fluid particle resting on the wall, in a rest lattice, have exactly rho0.
/// Akinci's V_k = 1 / sum_l W_kl counts only the wall's own neighbours; a slab lacks the fluid
/// side, so V_k comes out ~18 % (2 layers) to ~43 % (1 layer) above d0^3, and fluid at the
/// wall starts a few percent over-dense. PCISPH with the max-error criterion then needs many
/// iterations and can diverge in the corners, so the container walls use this calibration.
float planarWallPsiScale(float supportRadius, float spacing, int layers,
                         KernelKind kind = KernelKind::CubicSpline);

} // namespace octo
