#include "sph/BoundaryModel.h"

#include "spatial/SphKernel.h"

#include <tbb/parallel_for.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

namespace octo {

void BoundaryModel::setKernel(float supportRadius, float restDensity, KernelKind kind) {
    if (!(supportRadius > 0.0f) || !(restDensity > 0.0f))
        throw std::invalid_argument("BoundaryModel: support radius and rest density must be > 0");
    if (supportRadius == h_ && restDensity == rho0_ && kind == kind_)
        return;
    h_ = supportRadius;
    rho0_ = restDensity;
    kind_ = kind;
    for (const Object& o : objects_)
        if (o.valid)
            computePsi(o);
    dirty_ = true;
}

int BoundaryModel::addObject(std::vector<Vec3f> bodySpacePoints, bool isStatic, float psiScale) {
    if (!(psiScale > 0.0f) || !std::isfinite(psiScale))
        throw std::invalid_argument("BoundaryModel: psiScale must be > 0");
    if (!(h_ > 0.0f))
        throw std::logic_error("BoundaryModel: setKernel before addObject");
    for (const Vec3f& p : bodySpacePoints)
        if (!p.allFinite())
            throw std::invalid_argument("BoundaryModel: non-finite boundary point");
    Object o;
    o.first = uint32_t(positions_.size());
    o.count = uint32_t(bodySpacePoints.size());
    o.isStatic = isStatic;
    o.valid = true;
    o.psiScale = psiScale;
    bodyPoints_.insert(bodyPoints_.end(), bodySpacePoints.begin(), bodySpacePoints.end());
    positions_.insert(positions_.end(), bodySpacePoints.begin(), bodySpacePoints.end());
    velocities_.resize(positions_.size(), Vec3f::Zero());
    forces_.resize(positions_.size(), Vec3f::Zero());
    psi_.resize(positions_.size(), 0.0f);
    tracked_.resize(positions_.size(), isStatic ? 0 : 1);
    wall_.resize(positions_.size(), 0);
    objects_.push_back(o);
    computePsi(o);
    dirty_ = true;
    return int(objects_.size()) - 1;
}

void BoundaryModel::removeObject(int object) {
    const Object o = checked(object);
    auto eraseRange = [&](auto& v) { v.erase(v.begin() + o.first, v.begin() + o.first + o.count); };
    eraseRange(bodyPoints_);
    eraseRange(positions_);
    eraseRange(velocities_);
    eraseRange(forces_);
    eraseRange(psi_);
    eraseRange(tracked_);
    eraseRange(wall_);
    for (Object& other : objects_)
        if (other.valid && other.first > o.first)
            other.first -= o.count;
    objects_[size_t(object)].valid = false;
    objects_[size_t(object)].count = 0;
    dirty_ = true;
}

void BoundaryModel::clear() {
    objects_.clear();
    bodyPoints_.clear();
    positions_.clear();
    velocities_.clear();
    forces_.clear();
    psi_.clear();
    tracked_.clear();
    wall_.clear();
    dirty_ = true;
}

const BoundaryModel::Object& BoundaryModel::checked(int object) const {
    if (object < 0 || object >= int(objects_.size()) || !objects_[size_t(object)].valid)
        throw std::out_of_range("BoundaryModel: no object " + std::to_string(object));
    return objects_[size_t(object)];
}

bool BoundaryModel::isValid(int object) const {
    return object >= 0 && object < int(objects_.size()) && objects_[size_t(object)].valid;
}
bool BoundaryModel::isStatic(int object) const {
    return checked(object).isStatic;
}

std::pair<uint32_t, uint32_t> BoundaryModel::objectRange(int object) const {
    const Object& o = checked(object);
    return {o.first, o.count};
}

void BoundaryModel::setObjectTransform(int object, const Mat3f& rotation, const Vec3f& translation,
                                       const Vec3f& linearVelocity, const Vec3f& angularVelocity) {
    checked(object);
    Object& o = objects_[size_t(object)];
    o.rotation = rotation;
    o.translation = translation;
    o.linearVelocity = linearVelocity;
    o.angularVelocity = angularVelocity;
    tbb::parallel_for(tbb::blocked_range<uint32_t>(o.first, o.first + o.count, 2048),
                      [&](const tbb::blocked_range<uint32_t>& r) {
                          for (uint32_t k = r.begin(); k < r.end(); ++k) {
                              const Vec3f arm = rotation * bodyPoints_[k];
                              positions_[k] = arm + translation;
                              velocities_[k] = linearVelocity + angularVelocity.cross(arm);
                          }
                      });
    dirty_ = true;
}

void BoundaryModel::setObjectVelocity(int object, const Vec3f& linearVelocity, const Vec3f& angularVelocity) {
    checked(object);
    Object& o = objects_[size_t(object)];
    o.linearVelocity = linearVelocity;
    o.angularVelocity = angularVelocity;
    for (uint32_t k = o.first; k < o.first + o.count; ++k)
        velocities_[k] = linearVelocity + angularVelocity.cross(o.rotation * bodyPoints_[k]);
    if (!dirty_)
        grid_.gather(std::span<const Vec3f>(velocities_), sortedVelocities_);
}

Vec3f BoundaryModel::objectForce(int object) const {
    const Object& o = checked(object);
    Vec3f f = Vec3f::Zero();
    for (uint32_t k = o.first; k < o.first + o.count; ++k)
        f += forces_[k];
    return f;
}

Vec3f BoundaryModel::objectTorque(int object, const Vec3f& about) const {
    const Object& o = checked(object);
    Vec3f t = Vec3f::Zero();
    for (uint32_t k = o.first; k < o.first + o.count; ++k)
        t += (positions_[k] - about).cross(forces_[k]);
    return t;
}

Aabb BoundaryModel::bounds() const {
    Aabb b;
    for (const Vec3f& p : positions_)
        b.extend(p);
    return b;
}

namespace {
/// A grid of cell size h over pts, and pts in its cell order (grid.order() maps them back).
void sortIntoGrid(std::span<const Vec3f> pts, float h, NeighborGrid& grid, std::vector<Vec3f>& sorted) {
    grid.setDomainFromPoints(pts, h);
    grid.build(pts);
    grid.gather(pts, sorted);
}
} // namespace

void BoundaryModel::computePsi(const Object& o) {
    // Akinci 2012 eq. 4: V_k = 1 / sum_l W_kl over the object's own particles (self included).
    if (o.count == 0)
        return;
    std::span<const Vec3f> pts(bodyPoints_.data() + o.first, o.count);
    NeighborGrid grid;
    std::vector<Vec3f> sorted;
    sortIntoGrid(pts, h_, grid, sorted);
    const SphKernel kernel(h_, kind_);
    const auto order = grid.order();
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, sorted.size(), 1024), [&](const tbb::blocked_range<size_t>& r) {
            for (size_t s = r.begin(); s < r.end(); ++s) {
                float sum = 0.0f;
                grid.forEachNeighbor(sorted[s], h_, sorted, [&](uint32_t, const Vec3f&, float r2) {
                    sum += kernel.W(std::sqrt(r2));
                });
                psi_[o.first + order[s]] = o.psiScale * rho0_ / sum;
            }
        });
    if (o.restSpacing > 0.0f)
        calibrateWallPsi(o);
}

void BoundaryModel::update() {
    if (!dirty_)
        return;
    const size_t n = positions_.size();
    if (n > 0) {
        grid_.setDomain(bounds().enlarged(h_), h_);
        grid_.build(positions_);
    } else {
        grid_.setDomain(Aabb(Vec3f::Zero(), Vec3f::Ones()), 1.0f);
        grid_.build({});
    }
    grid_.gather(std::span<const Vec3f>(positions_), sortedPositions_);
    grid_.gather(std::span<const Vec3f>(velocities_), sortedVelocities_);
    grid_.gather(std::span<const float>(psi_), sortedPsi_);
    grid_.gather(std::span<const uint8_t>(tracked_), sortedTracked_);
    grid_.gather(std::span<const uint8_t>(wall_), sortedWall_);
    dirty_ = false;
}

bool BoundaryModel::hasForceTrackedObjects() const {
    for (const Object& o : objects_)
        if (o.valid && (!o.isStatic || o.reportsForces) && o.count > 0)
            return true;
    return false;
}

bool BoundaryModel::hasDynamicObjects() const {
    for (const Object& o : objects_)
        if (o.valid && !o.isStatic && o.count > 0)
            return true;
    return false;
}

void BoundaryModel::setWall(int object) {
    checked(object);
    Object& o = objects_[size_t(object)];
    if (!o.isStatic || o.reportsForces)
        throw std::logic_error("BoundaryModel: object " + std::to_string(object) +
                               " moves or reports its forces and cannot be a wall");
    o.wall = true;
    std::fill(wall_.begin() + o.first, wall_.begin() + o.first + o.count, uint8_t(1));
    dirty_ = true;
}

namespace {
/// The rest lattice filling a region wall to wall: a whole number of cells per axis, as the scene's
/// blocks and sampleBoxWalls fit them.
struct RegionLattice {
    Aabb region;
    int n[3];
    Vec3f s;
    RegionLattice(const Aabb& r, float spacing) : region(r) {
        for (int a = 0; a < 3; ++a) {
            n[a] = std::max(1, int(std::lround(r.extent()[a] / spacing)));
            s[a] = r.extent()[a] / float(n[a]);
        }
    }
    Vec3f site(int i, int j, int k) const {
        return region.min + s.cwiseProduct(Vec3f(float(i) + 0.5f, float(j) + 0.5f, float(k) + 0.5f));
    }
    /// f(site) for the sites within `radius` of x.
    template <class F> void forSitesNear(const Vec3f& x, float radius, F&& f) const {
        int lo[3], hi[3];
        for (int a = 0; a < 3; ++a) {
            const float c = (x[a] - region.min[a]) / s[a] - 0.5f;
            lo[a] = std::max(0, int(std::floor(c - radius / s[a])));
            hi[a] = std::min(n[a] - 1, int(std::ceil(c + radius / s[a])));
        }
        for (int i = lo[0]; i <= hi[0]; ++i)
            for (int j = lo[1]; j <= hi[1]; ++j)
                for (int k = lo[2]; k <= hi[2]; ++k)
                    f(site(i, j, k));
    }
};
} // namespace

void BoundaryModel::setWall(int object, const Aabb& fluidRegion, float spacing) {
    setWall(object);
    if (fluidRegion.empty() || !(spacing > 0.0f))
        throw std::invalid_argument("BoundaryModel::setWall: empty fluid region or spacing <= 0");
    Object& o = objects_[size_t(object)];
    o.restRegion = fluidRegion;
    o.restSpacing = spacing;
    computePsi(o);
}

void BoundaryModel::calibrateWallPsi(const Object& o) {
    // Koschier & Bender 2017, "Density maps for improved SPH boundary handling" (SCA 2017): the
    // boundary's share of a particle's density is rho0 times the kernel's integral over the solid,
    // so that a particle at rest beside it has rho0 wherever it is. Akinci's V_k = 1 / sum_l W_kl
    // with planarWallPsiScale meets that on a flat wall, not in the container's concave edges and
    // corners: there the walls' samples have more wall neighbours, smaller volumes, and the rest
    // lattice comes out 0.5 % (edges) to 1.1 % (corners) under rho0 with Wendland C2, 0.8 % to
    // 1.9 % with the cubic spline (test_wall_rest_density). The water there has to compress further
    // before it is held: a resting column's first frames peaked at 0.19 m/s in its vertical edges
    // at r = 12 mm (Wendland, no filter), 0.05 m/s with the fit. The condition is imposed on the
    // rest lattice filling the region (the container, as the scene's blocks fill it wall to wall):
    // Psi_k of the samples near its sites is fitted so that every site has the interior's density,
    // by multiplicative updates from Akinci's values (they stay positive; 50 sweeps leave < 1e-4
    // rho0). Flat walls keep their planarWallPsiScale values.
    const float spacing = o.restSpacing;
    const RegionLattice lattice(o.restRegion, spacing);
    const SphKernel kernel(h_, kind_);
    float mass = rho0_ * spacing * spacing * spacing; // FluidModel::deriveConstants
    if (kind_ != KernelKind::CubicSpline)
        mass /= kernel.latticeSum(spacing);
    std::span<const Vec3f> pts(bodyPoints_.data() + o.first, o.count);
    NeighborGrid grid;
    std::vector<Vec3f> sorted;
    sortIntoGrid(pts, h_, grid, sorted);
    const auto order = grid.order();
    // The lattice's sites with wall samples in reach: their fluid density and their samples.
    struct Site {
        float deficit; // rho_full - fluid part
        uint32_t begin, end;
    };
    std::vector<Site> sites;
    std::vector<std::pair<uint32_t, float>> links; // (sample, W)
    float full = 0.0f;
    {
        const int reach = int(std::ceil(h_ / lattice.s.minCoeff()));
        for (int i = -reach; i <= reach; ++i)
            for (int j = -reach; j <= reach; ++j)
                for (int k = -reach; k <= reach; ++k)
                    full += kernel.W(lattice.s.cwiseProduct(Vec3f(float(i), float(j), float(k))));
        full *= mass;
    }
    for (int i = 0; i < lattice.n[0]; ++i)
        for (int j = 0; j < lattice.n[1]; ++j)
            for (int k = 0; k < lattice.n[2]; ++k) {
                const bool nearFace = i < 3 || j < 3 || k < 3 || i >= lattice.n[0] - 3 ||
                                      j >= lattice.n[1] - 3 || k >= lattice.n[2] - 3;
                if (!nearFace)
                    continue;
                const Vec3f x = lattice.site(i, j, k);
                const uint32_t begin = uint32_t(links.size());
                grid.forEachNeighbor(x, h_, sorted, [&](uint32_t sIdx, const Vec3f& xk, float) {
                    const float w = kernel.W(x - xk);
                    if (w > 0.0f)
                        links.emplace_back(o.first + order[sIdx], w);
                });
                if (links.size() == begin)
                    continue;
                float fluid = 0.0f;
                lattice.forSitesNear(x, h_, [&](const Vec3f& xj) { fluid += kernel.W(x - xj); });
                sites.push_back({full - mass * fluid, begin, uint32_t(links.size())});
            }
    std::vector<double> num(psi_.size()), den(psi_.size());
    for (int sweep = 0; sweep < 50; ++sweep) {
        std::fill(num.begin(), num.end(), 0.0);
        std::fill(den.begin(), den.end(), 0.0);
        for (const Site& st : sites) {
            double wall = 0.0;
            for (uint32_t q = st.begin; q < st.end; ++q)
                wall += double(psi_[links[q].first]) * links[q].second;
            for (uint32_t q = st.begin; q < st.end; ++q) {
                num[links[q].first] += links[q].second * double(std::max(0.0f, st.deficit));
                den[links[q].first] += links[q].second * wall;
            }
        }
        for (uint32_t k = o.first; k < o.first + o.count; ++k)
            if (den[k] > 0.0)
                psi_[k] = float(double(psi_[k]) * num[k] / den[k]);
    }
}

bool BoundaryModel::isWall(int object) const {
    return checked(object).wall;
}

void BoundaryModel::reportForces(int object) {
    checked(object);
    Object& o = objects_[size_t(object)];
    if (o.wall)
        throw std::logic_error("BoundaryModel: wall " + std::to_string(object) + " cannot report its forces");
    o.reportsForces = true;
    std::fill(tracked_.begin() + o.first, tracked_.begin() + o.first + o.count, uint8_t(1));
    dirty_ = true;
}

void BoundaryModel::clearForces() {
    std::fill(forces_.begin(), forces_.end(), Vec3f::Zero());
}

void BoundaryModel::addForceSorted(uint32_t sortedIndex, const Vec3f& force) {
    forces_[grid_.order()[sortedIndex]] += force;
}

float planarWallPsiScale(float h, float d0, int layers, KernelKind kind) {
    const SphKernel kernel(h, kind);
    const int reach = int(std::ceil(h / d0)) + 1;
    // Wall layers at y = -d0/2 - l d0; by symmetry Psi depends only on the layer.
    std::vector<float> volume(size_t(layers), 0.0f);
    for (int l = 0; l < layers; ++l) {
        float sum = 0.0f;
        for (int m = 0; m < layers; ++m)
            for (int i = -reach; i <= reach; ++i)
                for (int k = -reach; k <= reach; ++k)
                    sum += kernel.W(d0 * Vec3f(float(i), float(m - l), float(k)));
        volume[size_t(l)] = 1.0f / sum;
    }
    // Fluid particle at y = d0/2 with the fluid rest lattice above it (self included).
    const Vec3f xi(0.0f, 0.5f * d0, 0.0f);
    float fluid = 0.0f, wall = 0.0f;
    for (int j = 0; j <= reach; ++j)
        for (int i = -reach; i <= reach; ++i)
            for (int k = -reach; k <= reach; ++k)
                fluid += kernel.W(xi - d0 * Vec3f(float(i), 0.5f + float(j), float(k)));
    // rho / rho0 with the solver's mass: rho0 d0^3 / latticeSum (FluidModel::deriveConstants).
    fluid *= kind == KernelKind::CubicSpline ? d0 * d0 * d0 : d0 * d0 * d0 / kernel.latticeSum(d0);
    for (int l = 0; l < layers; ++l)
        for (int i = -reach; i <= reach; ++i)
            for (int k = -reach; k <= reach; ++k)
                wall += volume[size_t(l)] * kernel.W(xi - d0 * Vec3f(float(i), -0.5f - float(l), float(k)));
    return wall > 0.0f ? std::max(0.1f, (1.0f - fluid) / wall) : 1.0f;
}

std::vector<Vec3f> sampleBoxWalls(const Aabb& box, float spacing, int layers) {
    if (box.empty() || !(spacing > 0.0f) || layers < 1)
        throw std::invalid_argument("sampleBoxWalls: bad box/spacing/layers");
    // Per axis: n cells between the two innermost shells, spacing adjusted to fit exactly.
    int n[3];
    float s[3], origin[3];
    for (int a = 0; a < 3; ++a) {
        const float span = box.extent()[a] + spacing;
        n[a] = std::max(1, int(std::lround(span / spacing)));
        s[a] = span / float(n[a]);
        origin[a] = box.min[a] - 0.5f * spacing - float(layers - 1) * s[a];
    }
    const int last[3] = {n[0] + 2 * (layers - 1), n[1] + 2 * (layers - 1), n[2] + 2 * (layers - 1)};
    auto isShell = [&](int a, int i) { return i <= layers - 1 || i >= n[a] + layers - 1; };
    std::vector<Vec3f> pts;
    for (int k = 0; k <= last[2]; ++k)
        for (int j = 0; j <= last[1]; ++j)
            for (int i = 0; i <= last[0]; ++i) {
                if (!isShell(0, i) && !isShell(1, j) && !isShell(2, k)) {
                    i = n[0] + layers - 2; // jump over the interior of this row
                    continue;
                }
                pts.emplace_back(origin[0] + float(i) * s[0], origin[1] + float(j) * s[1],
                                 origin[2] + float(k) * s[2]);
            }
    return pts;
}

} // namespace octo
