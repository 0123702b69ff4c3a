#include "scene/SceneBodies.h"

#include "common/DataDirectory.h"
#include "io/ObjReader.h"
#include "rigid/BoundarySampling.h"
#include "rigid/MeshProperties.h"
#include "rigid/PointHash.h"
#include "rigid/ShapeMeshes.h"
#include "rigid/TriangleBvh.h"
#include "scene/JsonFields.h"
#include "scene/Scene.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numbers>
#include <set>
#include <sstream>

namespace octo {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using Fields = JsonFields;

Quatf parseOrientation(const Fields& b) {
    const json& o = b.at("orientation");
    const std::string field = "orientation";
    if (o.is_array() && o.size() == 4) {
        Eigen::Vector4d q;
        for (int i = 0; i < 4; ++i) {
            if (!o[size_t(i)].is_number())
                b.fail("expected a quaternion [w, x, y, z] of numbers", field);
            q[i] = o[size_t(i)].get<double>();
            if (std::abs(q[i]) > Fields::kMaxMagnitude)
                b.fail("quaternion component out of range (|x| <= 1e30)", field);
        }
        if (!(q.norm() > 1e-9) || !q.allFinite())
            b.fail("the quaternion must be finite and non-zero", field);
        return Quatf(float(q[0]), float(q[1]), float(q[2]), float(q[3])).normalized();
    }
    b.fail("expected {\"axis\": [x, y, z], \"angle\": degrees} or a quaternion [w, x, y, z]", field);
}

std::string boundText(const char* unit, double lo, double hi, const char* what) {
    std::ostringstream s;
    s << what << " out of range [" << lo << ", " << hi << "] " << unit;
    return s.str();
}

// Speeds beyond these pinned the time step at its minimum (a kinematic 1e4 rad/s: > 1 600 steps per
// frame, no message); the CFL step follows the fastest boundary sample.
void checkBodySpeeds(const Fields& f, const Vec3f& v, const Vec3f& w) {
    if (f.has("velocity") && !(v.norm() <= kMaxBodySpeed))
        f.fail(boundText("m/s", 0.0, kMaxBodySpeed, "speed |v|"), "velocity");
    if (f.has("angularVelocity") && !(w.norm() <= kMaxBodyAngularSpeed))
        f.fail(boundText("rad/s", 0.0, kMaxBodyAngularSpeed, "angular speed |w|"), "angularVelocity");
}

void parseKinematic(const Fields& k, BodyDescription& body, bool hasPosition) {
    k.onlyKnown({"path", "speed", "acceleration", "startTime", "returnTrip", "velocity", "angularVelocity"});
    KinematicMotion& m = body.kinematic;
    if (k.has("path")) {
        if (k.has("velocity") || k.has("angularVelocity"))
            k.fail("give either 'path' (with 'speed') or 'velocity'/'angularVelocity', not both");
        const json& p = k.at("path");
        if (!p.is_array() || p.empty())
            k.fail("expected a non-empty array of [x, y, z] waypoints", "path");
        for (size_t i = 0; i < p.size(); ++i) {
            if (!Fields::isVec3(p[i]))
                k.fail("expected an array of 3 finite numbers", "path[" + std::to_string(i) + "]");
            m.waypoints.push_back(Fields::toVec3(p[i]));
            if (i > 0 && (m.waypoints[i] - m.waypoints[i - 1]).norm() < 1e-6f)
                k.fail("repeats the previous waypoint", "path[" + std::to_string(i) + "]");
        }
        m.kind = KinematicMotion::Kind::Path;
        m.speed = float(k.number("speed", true));
        if (m.speed > kMaxBodySpeed)
            k.fail(boundText("m/s", 0.0, kMaxBodySpeed, "speed"), "speed");
        m.startTime = k.number("startTime", 0.0, false);
        if (m.startTime < 0.0 || m.startTime > kMaxKinematicStartTime)
            k.fail(boundText("s", 0.0, kMaxKinematicStartTime, "start time"), "startTime");
        m.acceleration = float(k.number("acceleration", 0.0, false));
        if (k.has("acceleration") && !(m.acceleration > 0.0f))
            k.fail("must be > 0 (m/s^2; leave it out for an instant start)", "acceleration");
        if (m.acceleration > kMaxBodyAcceleration)
            k.fail(boundText("m/s^2", 0.0, kMaxBodyAcceleration, "acceleration"), "acceleration");
        m.returnTrip = k.boolean("returnTrip", false);
        if (!hasPosition)
            body.position = m.waypoints.front();
    } else if (k.has("velocity") || k.has("angularVelocity")) {
        if (k.has("speed") || k.has("acceleration") || k.has("startTime") || k.has("returnTrip"))
            k.fail("'speed', 'acceleration', 'startTime' and 'returnTrip' belong to a 'path'");
        m.kind = KinematicMotion::Kind::Velocity;
        m.velocity = k.vec3("velocity", Vec3f::Zero());
        m.angularVelocity = k.vec3("angularVelocity", Vec3f::Zero());
        checkBodySpeeds(k, m.velocity, m.angularVelocity);
        if (!hasPosition)
            k.fail("a kinematic body with a velocity needs a 'position' to start from");
    } else {
        k.fail("expected 'path' (array of waypoints, with 'speed') or 'velocity'");
    }
}

void forbidFields(const Fields& b, const std::string& shape, std::initializer_list<const char*> fields) {
    for (const char* f : fields)
        if (b.has(f))
            b.fail("not used by shape '" + shape + "'", f);
}

/// shape "mesh": resolves, reads and checks the mesh now, so its errors carry the scene file and field.
void parseMeshShape(const Fields& b, BodyDescription& d, const std::string& source) {
    d.shape = BodyDescription::Shape::Mesh;
    const std::string file = b.string("mesh");
    try {
        d.meshPath = resolveMeshPath(file, source);
    } catch (const SceneError& e) {
        b.fail(e.what(), "mesh");
    }
    d.meshScale = float(b.number("scale", 1.0, true));
    TriangleMesh m;
    try { // read and check the mesh now, so its errors carry the scene file and field like fluidMeshes'
        m = readObj(d.meshPath);
    } catch (const std::exception& e) {
        b.fail(e.what(), "mesh");
    }
    // Before the volume sums: coordinates of 1e29 m gave "zero volume (|V| = 1e87 m^3)".
    const double extent = double(meshBounds(m).extent().maxCoeff()) * double(d.meshScale);
    if (!(extent <= kMaxBodyExtent)) {
        std::ostringstream s;
        s << "the mesh is " << extent << " m across after 'scale' (limit " << kMaxBodyExtent << " m)";
        b.fail(s.str(), "mesh");
    }
    try {
        validateSolidMesh(m, d.meshPath);
    } catch (const std::exception& e) {
        b.fail(e.what(), "mesh");
    }
}

void parseShape(const Fields& b, BodyDescription& d, const std::string& source) {
    const std::string shape = b.string("shape");
    if (shape == "box") {
        d.shape = BodyDescription::Shape::Box;
        const json& s = b.at("size");
        if (s.is_number()) {
            d.size = Vec3f::Constant(float(b.number("size", true)));
        } else {
            d.size = b.vec3("size");
            if (!(d.size.minCoeff() > 0.0f))
                b.fail("every edge length must be > 0", "size");
        }
        forbidFields(b, shape, {"radius", "height", "mesh", "scale"});
    } else if (shape == "sphere") {
        d.shape = BodyDescription::Shape::Sphere;
        d.radius = float(b.number("radius", true));
        forbidFields(b, shape, {"size", "height", "mesh", "scale"});
    } else if (shape == "cylinder") {
        d.shape = BodyDescription::Shape::Cylinder;
        d.radius = float(b.number("radius", true));
        d.height = float(b.number("height", true));
        forbidFields(b, shape, {"size", "mesh", "scale"});
    } else if (shape == "mesh") {
        parseMeshShape(b, d, source);
        forbidFields(b, shape, {"size", "radius", "height"});
    } else {
        b.fail("unknown shape '" + shape + "' (known: box, sphere, cylinder, mesh)", "shape");
    }
}

void parseDensity(const Fields& b, BodyDescription& d) {
    if (b.has("density") && b.has("relativeDensity"))
        b.fail("give 'density' (kg/m^3) or 'relativeDensity', not both");
    if (b.has("density")) {
        d.density = float(b.number("density", true));
    } else if (b.has("relativeDensity")) {
        d.relativeDensity = float(b.number("relativeDensity", true));
    } else if (!b.has("kinematic")) {
        b.fail("missing 'density' (kg/m^3) or 'relativeDensity' (in units of the fluid's rest density)");
    }
}

/// "orientation": a quaternion [w, x, y, z] or {"axis": [x, y, z], "angle": degrees}.
void parseBodyOrientation(const Fields& b, BodyDescription& d, const std::string& source) {
    const json& o = b.at("orientation");
    if (o.is_array() && o.size() == 4) {
        d.orientation = parseOrientation(b);
    } else if (o.is_object()) {
        const Fields r(o, b.join("orientation"), source);
        r.onlyKnown({"axis", "angle"});
        const Vec3f axis = r.vec3("axis");
        if (!(axis.norm() > 1e-9f))
            r.fail("the axis must be non-zero", "axis");
        const double deg = r.number("angle", false);
        d.orientation = Quatf(Eigen::AngleAxisf(float(deg * std::numbers::pi / 180.0), axis.normalized()));
    } else {
        b.fail("expected {\"axis\": [x, y, z], \"angle\": degrees} or a quaternion [w, x, y, z]",
               "orientation");
    }
}

/// Velocities, then "kinematic" (which takes their place) or the required "position".
void parseBodyMotion(const Fields& b, BodyDescription& d, const std::string& source, bool hasPosition) {
    d.velocity = b.vec3("velocity", Vec3f::Zero());
    d.angularVelocity = b.vec3("angularVelocity", Vec3f::Zero());
    checkBodySpeeds(b, d.velocity, d.angularVelocity);
    if (b.has("kinematic")) {
        if (b.has("velocity") || b.has("angularVelocity"))
            b.fail("a kinematic body takes its velocity from 'kinematic'",
                   b.has("velocity") ? "velocity" : "angularVelocity");
        const Fields k(b.at("kinematic"), b.join("kinematic"), source);
        parseKinematic(k, d, hasPosition);
    } else if (!hasPosition) {
        b.fail("missing required field", "position");
    }
}

BodyDescription parseBody(const json& obj, const std::string& path, const std::string& source) {
    const Fields b(obj, path, source);
    b.onlyKnown({"name", "shape", "size", "radius", "height", "mesh", "scale", "density", "relativeDensity",
                 "position", "orientation", "velocity", "angularVelocity", "kinematic"});
    BodyDescription d;
    if (b.has("name"))
        d.name = b.string("name");
    parseShape(b, d, source);
    parseDensity(b, d);
    const bool hasPosition = b.has("position");
    d.position = b.vec3("position", Vec3f::Zero());
    if (b.has("orientation"))
        parseBodyOrientation(b, d, source);
    parseBodyMotion(b, d, source, hasPosition);
    return d;
}

} // namespace

std::string BodyDescription::label() const {
    if (!name.empty())
        return name;
    switch (shape) {
    case Shape::Box:
        return "box";
    case Shape::Sphere:
        return "sphere";
    case Shape::Cylinder:
        return "cylinder";
    case Shape::Mesh:
        return fs::path(meshPath).filename().string();
    }
    return "body";
}

std::vector<BodyDescription> parseBodiesJson(const std::string& text, const std::string& source) {
    std::vector<BodyDescription> out;
    if (text.empty())
        return out;
    const json arr = parseJsonChecked(text, source, "bodies");
    if (!arr.is_array())
        throw SceneError(source + ": field 'bodies': expected an array");
    for (size_t i = 0; i < arr.size(); ++i)
        out.push_back(parseBody(arr[i], "bodies[" + std::to_string(i) + "]", source));
    return out;
}

BodyDescription parseBodyJson(const std::string& text, const std::string& source, const std::string& what) {
    const json obj = parseJsonChecked(text, source, what);
    return parseBody(obj, what, source);
}

std::string resolveMeshPath(const std::string& file, const std::string& sceneFile) {
    if (file.empty())
        throw SceneError("empty mesh path");
    std::vector<fs::path> candidates;
    const fs::path p(file);
    if (p.is_absolute()) {
        candidates.push_back(p);
    } else {
        const fs::path sceneDir = sceneFile.empty() ? fs::path() : fs::path(sceneFile).parent_path();
        if (!sceneDir.empty()) {
            candidates.push_back(sceneDir / p);
            candidates.push_back(sceneDir / ".." / "meshes" / p);
        }
        candidates.push_back(fs::path(dataDirectory()) / "meshes" / p);
        candidates.push_back(p);
    }
    std::error_code ec;
    for (const fs::path& c : candidates)
        if (fs::is_regular_file(c, ec))
            return c.lexically_normal().string();
    for (const fs::path& c : candidates)
        if (fs::exists(c, ec))
            throw SceneError("mesh file '" + file + "' is " +
                             (fs::is_directory(c, ec) ? "a directory" : "not a regular file") + " (" +
                             c.lexically_normal().string() + "), expected an OBJ file");
    std::string list;
    for (const fs::path& c : candidates)
        list += (list.empty() ? "" : ", ") + c.lexically_normal().string();
    throw SceneError("mesh file '" + file + "' not found (looked in: " + list + ")");
}

TriangleMesh bodyMesh(const BodyDescription& b) {
    switch (b.shape) {
    case BodyDescription::Shape::Box:
        if (!(b.size.minCoeff() > 0.0f))
            throw SceneError(b.label() + ": box size must be > 0");
        return makeBoxMesh(0.5f * b.size);
    case BodyDescription::Shape::Sphere:
        if (!(b.radius > 0.0f))
            throw SceneError(b.label() + ": sphere radius must be > 0");
        return makeIcosphereMesh(b.radius, 3);
    case BodyDescription::Shape::Cylinder:
        if (!(b.radius > 0.0f) || !(b.height > 0.0f))
            throw SceneError(b.label() + ": cylinder radius and height must be > 0");
        return makeCylinderMesh(b.radius, 0.5f * b.height, 48);
    case BodyDescription::Shape::Mesh: {
        TriangleMesh m = readObj(b.meshPath);
        for (Vec3f& v : m.vertices)
            v *= b.meshScale;
        m.normals.clear();
        return m;
    }
    }
    throw SceneError("unknown body shape");
}

TriangleMesh offsetInward(const TriangleMesh& mesh, float distance) {
    const size_t n = mesh.vertices.size();
    std::vector<Mat3d> A(n, Mat3d::Zero());
    std::vector<Vec3d> rhs(n, Vec3d::Zero());
    for (const auto& t : mesh.triangles) {
        const Vec3d a = mesh.vertices[t[0]].cast<double>(), b = mesh.vertices[t[1]].cast<double>(),
                    c = mesh.vertices[t[2]].cast<double>();
        const Vec3d cr = (b - a).cross(c - a);
        const double area2 = cr.norm();
        if (!(area2 > 0.0))
            continue;
        const Vec3d nrm = cr / area2;
        // Area weights: small sliver triangles do not pull the vertex around.
        for (int k = 0; k < 3; ++k) {
            A[t[k]] += area2 * nrm * nrm.transpose();
            rhs[t[k]] += area2 * nrm;
        }
    }
    TriangleMesh out = mesh;
    out.normals.clear();
    for (size_t v = 0; v < n; ++v) {
        const double tr = A[v].trace();
        if (!(tr > 0.0))
            continue;
        // Least squares for d with d . n_f = distance on every adjacent face; the small ridge term
        // fixes d along a flat (rank-1) or creased (rank-2) neighbourhood's free directions.
        const Vec3d d = (A[v] + 1e-6 * tr * Mat3d::Identity()).ldlt().solve(double(distance) * rhs[v]);
        const double len = d.norm();
        const double cap = 3.0 * double(distance);
        const Vec3d dc = len > cap ? Vec3d(d * (cap / len)) : d;
        out.vertices[v] = (mesh.vertices[v].cast<double>() - dc).cast<float>();
    }
    return out;
}

std::shared_ptr<const RigidShape> createBodyShape(const BodyDescription& body, float r,
                                                  const Aabb* container) {
    if (!(r > 0.0f))
        throw SceneError(body.label() + ": particle radius must be > 0");
    const std::string label = body.label();
    TriangleMesh mesh = bodyMesh(body);
    validateSolidMesh(mesh, label);
    const Vec3f ext = meshBounds(mesh).extent();
    if (container) {
        const Mat3f R = body.orientation.normalized().toRotationMatrix();
        Aabb turned;
        for (const Vec3f& v : mesh.vertices)
            turned.extend(R * v);
        const Vec3f span = turned.extent(), room = container->extent();
        if ((span.array() > room.array() + 2.0f * r).any()) {
            std::ostringstream s;
            s.precision(4);
            s << "body '" << label << "' is larger than the container: it spans " << span.x() << " x "
              << span.y() << " x " << span.z() << " m as oriented, the container " << room.x() << " x "
              << room.y() << " x " << room.z() << " m";
            throw SceneError(s.str());
        }
    }
    if (ext.minCoeff() < 4.0f * r) {
        std::ostringstream s;
        s << label << ": the body is " << ext.minCoeff() << " m thin, below 4r = " << 4.0f * r
          << " m (two particle spacings): the fluid cannot resolve it; make it larger or lower "
             "particleRadius";
        throw SceneError(s.str());
    }
    const float d0 = 2.0f * r;
    auto full = RigidShape::create(mesh, d0, label);
    // Boundary samples r inside the mesh (see SceneBodies.h), in the body frame (centre of mass).
    TriangleMesh inner = offsetInward(mesh, r);
    for (Vec3f& v : inner.vertices)
        v -= full->meshOffset;
    auto shape = std::make_shared<RigidShape>(*full);
    shape->samples = sampleBoundary(inner, d0);
    if (shape->samples.empty())
        throw SceneError(label + ": boundary sampling produced no samples");
    // A second shell d0 further in: a single layer lets the odd fluid particle slip between the
    // samples under impact pressure and get trapped inside the body (measured in the buoyancy
    // test); two layers, like the container walls, hold. Samples of the second shell are kept
    // only where the body is thick enough (inside the mesh, >= 0.75 d0 from the first shell).
    if (ext.minCoeff() >= 8.0f * r) {
        TriangleMesh second = offsetInward(mesh, r + d0);
        for (Vec3f& v : second.vertices)
            v -= full->meshOffset;
        PointHash first(d0);
        for (const Vec3f& p : shape->samples)
            first.insert(p);
        for (const Vec3f& p : sampleBoundary(second, d0))
            if (!first.anyWithin(p, 0.75f * d0) && shape->bvh.contains(p))
                shape->samples.push_back(p);
    }
    return shape;
}

std::shared_ptr<const RigidShape> BodyShapeCache::shape(const BodyDescription& b, float r,
                                                        const Aabb* container) {
    std::ostringstream key;
    key.precision(9);
    key << int(b.shape) << '|' << b.size.transpose() << '|' << b.radius << '|' << b.height << '|'
        << b.meshPath << '|' << b.meshScale << '|' << r;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = shapes_.find(key.str()); it != shapes_.end())
            return it->second;
    }
    auto s = createBodyShape(b, r, container);
    std::lock_guard<std::mutex> lock(mutex_);
    shapes_[key.str()] = s;
    return s;
}

void BodyShapeCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    shapes_.clear();
}

KinematicPath kinematicPath(const BodyDescription& b) {
    const KinematicMotion& m = b.kinematic;
    switch (m.kind) {
    case KinematicMotion::Kind::None:
        return {};
    case KinematicMotion::Kind::Velocity:
        return constantVelocityPath(Pose{b.position, b.orientation}, m.velocity, m.angularVelocity);
    case KinematicMotion::Kind::Path: {
        if (m.acceleration > 0.0f && m.waypoints.size() > 1) {
            std::vector<std::vector<Vec3f>> legs{m.waypoints};
            if (m.returnTrip)
                legs.emplace_back(m.waypoints.rbegin(), m.waypoints.rend());
            const KinematicPath leg = acceleratedPath(legs, m.speed, m.acceleration, b.orientation);
            const double start = m.startTime;
            return [leg, start](double t) { return leg(t - start); };
        }
        std::vector<Vec3f> pts = m.waypoints;
        if (m.returnTrip)
            for (size_t i = m.waypoints.size(); i-- > 1;)
                pts.push_back(m.waypoints[i - 1]);
        std::vector<std::pair<double, Pose>> w;
        double t = m.startTime;
        for (size_t i = 0; i < pts.size(); ++i) {
            if (i > 0)
                t += double((pts[i] - pts[i - 1]).norm()) / double(m.speed);
            w.push_back({t, Pose{pts[i], b.orientation}});
        }
        if (w.size() == 1) {
            const Pose p = w.front().second;
            return [p](double) { return p; };
        }
        return waypointPath(std::move(w));
    }
    }
    return {};
}

namespace {
Aabb worldBounds(const TriangleMesh& bodySpaceMesh, const Pose& pose) {
    Aabb box;
    const Mat3f R = pose.orientation.normalized().toRotationMatrix();
    for (const Vec3f& v : bodySpaceMesh.vertices)
        box.extend(R * v + pose.position);
    return box;
}
std::string boxText(const Aabb& b) {
    std::ostringstream s;
    s.precision(4);
    s << "[" << b.min.x() << ", " << b.min.y() << ", " << b.min.z() << "] .. [" << b.max.x() << ", "
      << b.max.y() << ", " << b.max.z() << "]";
    return s.str();
}
} // namespace

void checkBodyPlacement(const BodyDescription& d, const RigidBody& body,
                        const std::vector<const RigidBody*>& others, const Aabb& container, float tolerance) {
    const std::string label = "body '" + d.label() + "'";
    const Aabb inside = container.enlarged(tolerance);
    auto check = [&](const Pose& pose, const std::string& where) {
        const Aabb b = worldBounds(body.mesh(), pose);
        if (!inside.contains(b.min) || !inside.contains(b.max)) {
            const bool bigger = ((b.extent().array() > container.extent().array() + 2.0f * tolerance)).any();
            throw SceneError(
                label +
                (bigger ? " is larger than the container" : " " + where + " is not inside the container") +
                ": body " + boxText(b) + ", container " + boxText(container));
        }
    };
    check(body.pose(), "at its start position");
    if (d.kinematic.kind == KinematicMotion::Kind::Path)
        for (size_t i = 0; i < d.kinematic.waypoints.size(); ++i)
            check(Pose{d.kinematic.waypoints[i], d.orientation},
                  "on its kinematic path (waypoint " + std::to_string(i) + ")");
    std::vector<Vec3f> mine, theirs;
    body.worldSamples(mine);
    for (const RigidBody* o : others) {
        const float reach = body.shape().boundingRadius + o->shape().boundingRadius;
        if ((body.position() - o->position()).squaredNorm() > reach * reach)
            continue;
        bool overlap = (body.position() - o->position()).norm() < 1e-6f;
        for (size_t i = 0; i < mine.size() && !overlap; ++i)
            overlap = o->containsWorldPoint(mine[i]);
        if (!overlap) {
            o->worldSamples(theirs);
            for (size_t i = 0; i < theirs.size() && !overlap; ++i)
                overlap = body.containsWorldPoint(theirs[i]);
        }
        if (overlap)
            throw SceneError(label + " overlaps body '" + o->name() +
                             "' (bodies must not start inside each other)");
    }
}

RigidBody makeRigidBody(const BodyDescription& b, std::shared_ptr<const RigidShape> shape, float rho0,
                        double time) {
    const float density = b.densityFor(rho0);
    if (!(density > 0.0f))
        throw SceneError(b.label() + ": density must be > 0");
    RigidBody body(std::move(shape), density, Pose{b.position, b.orientation}, b.label());
    if (b.isKinematic()) {
        // Times of the motion count from the moment the body is added.
        KinematicPath path = kinematicPath(b);
        body.setKinematicPath([path, time](double t) { return path(t - time); }, time);
    } else {
        body.setLinearVelocity(b.velocity);
        body.setAngularVelocity(b.angularVelocity);
    }
    return body;
}

void measureFluidMesh(FluidMesh& f) {
    TriangleMesh m = readObj(f.meshPath);
    validateSolidMesh(m, f.meshPath);
    f.volume = signedVolume(m) * std::pow(double(f.scale), 3.0);
    f.extent = f.scale * meshBounds(m).extent();
}

Aabb fluidMeshBounds(const FluidMesh& f) {
    Vec3f ext = f.extent;
    if (!(ext.maxCoeff() > 0.0f)) {
        FluidMesh g = f;
        measureFluidMesh(g);
        ext = g.extent;
    }
    return {f.position - 0.5f * ext, f.position + 0.5f * ext};
}

std::vector<Vec3f> sampleFluidMesh(const FluidMesh& f, float r) {
    TriangleMesh m = readObj(f.meshPath);
    validateSolidMesh(m, f.meshPath);
    const Vec3f c = meshBounds(m).center();
    for (Vec3f& v : m.vertices)
        v = f.position + f.scale * (v - c);
    return sampleInterior(m, 2.0f * r);
}

} // namespace octo
