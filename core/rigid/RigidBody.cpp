#include "rigid/RigidBody.h"

#include "io/ObjReader.h"
#include "rigid/BoundarySampling.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace octo {

std::shared_ptr<const RigidShape> RigidShape::create(TriangleMesh mesh, float sampleSpacing,
                                                     const std::string& name) {
    if (!(sampleSpacing > 0.0f))
        throw std::invalid_argument(name + ": sample spacing must be positive");
    validateSolidMesh(mesh, name);
    const MassProperties mp = computeMassProperties(mesh, 1.0);
    auto shape = std::make_shared<RigidShape>();
    shape->meshOffset = mp.centerOfMass.cast<float>();
    for (auto& v : mesh.vertices)
        v -= shape->meshOffset;
    shape->volume = mp.volume;
    shape->unitInertia = mp.inertia;
    // A valid solid has a positive definite inertia; a failure here means a degenerate shape.
    if (mp.inertia.ldlt().vectorD().minCoeff() <= 0.0)
        throw InvalidMeshError(name + ": inertia tensor is not positive definite (degenerate solid)");
    Eigen::SelfAdjointEigenSolver<Mat3d> es(mp.inertia);
    Mat3d axes = es.eigenvectors();
    if (axes.determinant() < 0.0)
        axes.col(2) = -axes.col(2);
    shape->principalFrame = Quatd(axes).normalized();
    shape->unitPrincipalMoments = es.eigenvalues();
    shape->sampleSpacing = sampleSpacing;
    shape->samples = sampleBoundary(mesh, sampleSpacing);
    shape->bvh = TriangleBvh(mesh);
    for (const auto& v : mesh.vertices)
        shape->boundingRadius = std::max(shape->boundingRadius, v.norm());
    shape->mesh = std::make_shared<const TriangleMesh>(std::move(mesh));
    return shape;
}

std::shared_ptr<const RigidShape> loadObjShape(const std::string& path, float sampleSpacing) {
    return RigidShape::create(readObj(path), sampleSpacing, path);
}

KinematicPath waypointPath(std::vector<std::pair<double, Pose>> w) {
    if (w.empty())
        throw std::invalid_argument("waypointPath: no waypoints");
    for (size_t i = 1; i < w.size(); ++i)
        if (!(w[i].first > w[i - 1].first))
            throw std::invalid_argument("waypointPath: waypoint times must increase strictly");
    return [w = std::move(w)](double t) {
        if (t <= w.front().first)
            return w.front().second;
        if (t >= w.back().first)
            return w.back().second;
        size_t i = 1;
        while (w[i].first < t)
            ++i;
        const double s = (t - w[i - 1].first) / (w[i].first - w[i - 1].first);
        const Pose& a = w[i - 1].second;
        const Pose& b = w[i].second;
        Pose p;
        p.position = (a.position.cast<double>() + s * (b.position - a.position).cast<double>()).cast<float>();
        p.orientation = a.orientation.slerp(float(s), b.orientation).normalized();
        return p;
    };
}

namespace {
// One leg of acceleratedPath: cumulative arc lengths and the trapezoid speed profile.
struct ProfiledLeg {
    std::vector<Vec3f> points;
    std::vector<double> arc; // arc[i] = length from points[0] to points[i]
    double accelTime = 0.0, peakSpeed = 0.0, duration = 0.0, acceleration = 0.0;

    ProfiledLeg(std::vector<Vec3f> pts, double speed, double a) : points(std::move(pts)), acceleration(a) {
        arc.assign(points.size(), 0.0);
        for (size_t i = 1; i < points.size(); ++i)
            arc[i] = arc[i - 1] + double((points[i] - points[i - 1]).norm());
        const double total = arc.back();
        // Too short to reach `speed`: accelerate over half the leg, then brake (triangle).
        peakSpeed = std::min(speed, std::sqrt(a * total));
        accelTime = peakSpeed / a;
        const double cruise = total - peakSpeed * accelTime; // 2 x (v^2 / 2a)
        duration = 2.0 * accelTime + (peakSpeed > 0.0 ? cruise / peakSpeed : 0.0);
    }
    double distanceAt(double t) const {
        const double total = arc.back();
        if (t <= 0.0)
            return 0.0;
        if (t >= duration)
            return total;
        if (t < accelTime)
            return 0.5 * acceleration * t * t;
        const double left = duration - t;
        if (left < accelTime)
            return total - 0.5 * acceleration * left * left;
        return 0.5 * peakSpeed * accelTime + peakSpeed * (t - accelTime);
    }
    Vec3f positionAt(double t) const {
        const double s = distanceAt(t);
        size_t i = 1;
        while (i + 1 < arc.size() && arc[i] < s)
            ++i;
        const double len = arc[i] - arc[i - 1];
        const double f = len > 0.0 ? std::clamp((s - arc[i - 1]) / len, 0.0, 1.0) : 1.0;
        return (points[i - 1].cast<double>() + f * (points[i] - points[i - 1]).cast<double>()).cast<float>();
    }
};
} // namespace

KinematicPath acceleratedPath(const std::vector<std::vector<Vec3f>>& legs, float speed, float acceleration,
                              const Quatf& orientation) {
    if (!(speed > 0.0f) || !(acceleration > 0.0f) || !std::isfinite(speed) || !std::isfinite(acceleration))
        throw std::invalid_argument("acceleratedPath: speed and acceleration must be finite and > 0");
    std::vector<ProfiledLeg> profiled;
    for (const auto& leg : legs) {
        if (leg.size() < 2)
            throw std::invalid_argument("acceleratedPath: a leg needs two points");
        profiled.emplace_back(leg, double(speed), double(acceleration));
    }
    if (profiled.empty())
        throw std::invalid_argument("acceleratedPath: no legs");
    return [profiled = std::move(profiled), orientation](double t) {
        // Legs run one after the other; the last one holds its end point afterwards.
        size_t k = 0;
        while (k + 1 < profiled.size() && t > profiled[k].duration) {
            t -= profiled[k].duration;
            ++k;
        }
        return Pose{profiled[k].positionAt(t), orientation};
    };
}

KinematicPath constantVelocityPath(const Pose& start, const Vec3f& velocity, const Vec3f& angularVelocity) {
    return [start, velocity, angularVelocity](double t) {
        Pose p;
        p.position = (start.position.cast<double>() + t * velocity.cast<double>()).cast<float>();
        const double angle = double(angularVelocity.norm()) * t;
        if (angle > 0.0)
            p.orientation =
                (Quatf(Eigen::AngleAxisf(float(angle), angularVelocity.normalized())) * start.orientation)
                    .normalized();
        else
            p.orientation = start.orientation;
        return p;
    };
}

RigidBody::RigidBody(std::shared_ptr<const RigidShape> shape, float density, const Pose& pose,
                     std::string name)
    : shape_(std::move(shape)), name_(std::move(name)), density_(density) {
    if (!shape_)
        throw std::invalid_argument("RigidBody: no shape");
    if (!(density > 0.0f) || !std::isfinite(density))
        throw std::invalid_argument("RigidBody " + name_ + ": density must be positive, got " +
                                    std::to_string(density));
    mass_ = float(double(density) * shape_->volume);
    const Mat3d I = double(density) * shape_->unitInertia;
    inertiaBody_ = I.cast<float>();
    invInertiaBody_ = I.inverse().cast<float>();
    principal_ = shape_->principalFrame.cast<float>();
    principalMoments_ = (double(density) * shape_->unitPrincipalMoments).cast<float>();
    setPose(pose);
}

Mat3f RigidBody::worldInverseInertia() const {
    if (kinematic_)
        return Mat3f::Zero();
    return R_ * invInertiaBody_ * R_.transpose();
}

void RigidBody::setPose(const Pose& pose) {
    x_ = pose.position;
    q_ = pose.orientation.normalized();
    refreshDerived();
}

void RigidBody::setAngularVelocity(const Vec3f& omega) {
    omega_ = omega;
    L_ = worldInertia() * omega;
}

void RigidBody::setAngularMomentum(const Vec3f& L) {
    L_ = L;
    refreshDerived();
}

double RigidBody::kineticEnergy() const {
    return 0.5 * double(mass_) * double(v_.squaredNorm()) + 0.5 * double(omega_.dot(worldInertia() * omega_));
}

void RigidBody::refreshDerived() {
    R_ = q_.toRotationMatrix();
    if (!kinematic_)
        omega_ = R_ * (invInertiaBody_ * (R_.transpose() * L_));
}

void RigidBody::worldSamples(std::vector<Vec3f>& out) const {
    const auto& s = shape_->samples;
    out.resize(s.size());
    for (size_t i = 0; i < s.size(); ++i)
        out[i] = R_ * s[i] + x_;
}

Aabb RigidBody::worldBounds() const {
    const float r = shape_->boundingRadius;
    return {x_.array() - r, x_.array() + r};
}

double RigidBody::volumeBelow(float height) const {
    const TriangleMesh& m = *shape_->mesh;
    const Vec3d O(double(x_.x()), double(height), double(x_.z())); // a point on the plane
    const Mat3d R = R_.cast<double>();
    const Vec3d x = x_.cast<double>();
    double six = 0.0;
    Vec3d poly[4];
    for (const auto& t : m.triangles) {
        Vec3d p[3];
        for (int k = 0; k < 3; ++k)
            p[k] = R * m.vertices[t[k]].cast<double>() + x - O;
        // Clip the triangle to y <= 0 (Sutherland-Hodgman against one plane).
        int n = 0;
        for (int k = 0; k < 3; ++k) {
            const Vec3d& a = p[k];
            const Vec3d& b = p[(k + 1) % 3];
            const bool ain = a.y() <= 0.0, bin = b.y() <= 0.0;
            if (ain)
                poly[n++] = a;
            if (ain != bin)
                poly[n++] = a + (b - a) * (a.y() / (a.y() - b.y()));
        }
        for (int k = 1; k + 1 < n; ++k)
            six += poly[0].dot(poly[k].cross(poly[k + 1]));
    }
    return std::clamp(six / 6.0, 0.0, shape_->volume);
}

void RigidBody::setKinematicPath(KinematicPath path, double t) {
    if (!path)
        throw std::invalid_argument("RigidBody " + name_ + ": empty kinematic path");
    kinematic_ = true;
    path_ = std::move(path);
    followPath(t);
}

namespace {
/// Linear and angular velocity (world) that carry pose a to pose b in time dt.
std::pair<Vec3f, Vec3f> velocityBetween(const Pose& a, const Pose& b, double dt) {
    const Vec3f v = ((b.position.cast<double>() - a.position.cast<double>()) / dt).cast<float>();
    return {v, (rotationVector(a.orientation, b.orientation).cast<double>() / dt).cast<float>()};
}
} // namespace

Vec3f rotationVector(const Quatf& from, const Quatf& to) {
    Quatf dq = to * from.conjugate();
    if (dq.w() < 0.0f)
        dq.coeffs() = -dq.coeffs();
    const Eigen::AngleAxisf turn(dq.normalized());
    const Vec3f r = turn.axis() * turn.angle();
    return r.allFinite() ? r : Vec3f::Zero();
}

void RigidBody::followPath(double t) {
    if (!kinematic_ || !path_)
        return;
    const Pose p = path_(t);
    x_ = p.position;
    q_ = p.orientation.normalized();
    R_ = q_.toRotationMatrix();
    // Velocities by central differences over 1 ms (exact for piecewise-linear paths away from
    // the waypoints).
    const double eps = 1e-3;
    std::tie(v_, omega_) = velocityBetween(path_(t - eps), path_(t + eps), 2.0 * eps);
    L_ = worldInertia() * omega_;
}

std::pair<Vec3f, Vec3f> RigidBody::meanPathVelocity(double t, double dt) const {
    if (!kinematic_ || !path_ || !(dt > 0.0))
        return {v_, omega_};
    return velocityBetween(path_(t), path_(t + dt), dt);
}

void RigidBody::applyForce(float dt, const Vec3f& force, const Vec3f& torque) {
    if (kinematic_)
        return;
    v_ += (dt / mass_) * force;
    L_ += dt * torque;
    omega_ = R_ * (invInertiaBody_ * (R_.transpose() * L_));
}

void RigidBody::advancePose(float dt) {
    if (kinematic_)
        return;
    x_ += dt * v_;
    // DLM splitting: A maps principal axes to world; rotating A about its own axis k by
    // θ = (Aᵀ L)_k / I_k · τ is the exact free motion under the k-th part of the kinetic energy.
    Quatf A = q_ * principal_;
    static constexpr int axes[5] = {0, 1, 2, 1, 0};
    static constexpr float fractions[5] = {0.5f, 0.5f, 1.0f, 0.5f, 0.5f};
    for (int s = 0; s < 5; ++s) {
        const int k = axes[s];
        const Vec3f pi = A.conjugate() * L_; // angular momentum in principal coordinates
        const float theta = pi[k] / principalMoments_[k] * fractions[s] * dt;
        if (theta != 0.0f)
            A = A * Quatf(Eigen::AngleAxisf(theta, Vec3f::Unit(k)));
    }
    q_ = (A * principal_.conjugate()).normalized();
    refreshDerived();
}

void RigidBody::integrate(float dt, const Vec3f& force, const Vec3f& torque) {
    applyForce(dt, force, torque);
    advancePose(dt);
}

} // namespace octo
