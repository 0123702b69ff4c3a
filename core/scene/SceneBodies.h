#pragma once
// Rigid bodies of a scene: the "bodies" array of a scene file (schema in docs/SCENES.md) and the
// construction of RigidShape / RigidBody from such a description for a given particle radius.
//
// Boundary samples of a body lie half a particle spacing (r) *inside* its mesh, the way the
// innermost wall shell lies d0/2 outside the container (sampleBoxWalls): fluid particle centres
// then stay r outside the mesh, so the fluid is displaced by the mesh's own volume. Sampling on
// the mesh itself would displace the mesh dilated by r (+33 % for a 0.2 m box at r = 1 cm) and
// a 0.5 rho0 box would float with ~36 % instead of 50 % of its volume submerged.
#include "common/TriangleMesh.h"
#include "common/Types.h"
#include "rigid/RigidBody.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace octo {

/// Prescribed motion of a kinematic body (Akinci 2012: kinematic bodies push the fluid and
/// receive no force).
struct KinematicMotion {
    enum class Kind { None, Path, Velocity };
    Kind kind = Kind::None;
    std::vector<Vec3f> waypoints;          ///< Path: centre-of-mass positions (m), visited in order
    float speed = 1.0f;                    ///< Path: m/s along the polyline
    float acceleration = 0.0f;             ///< Path: m/s^2 to and from rest per leg; 0 = instant
    double startTime = 0.0;                ///< Path: s, when the body leaves the first waypoint
    bool returnTrip = false;               ///< Path: go back along the polyline after the last waypoint
    Vec3f velocity = Vec3f::Zero();        ///< Velocity: m/s, from `position` at t = 0
    Vec3f angularVelocity = Vec3f::Zero(); ///< Velocity: rad/s about the centre of mass (world axis)
};

struct BodyDescription {
    enum class Shape { Box, Sphere, Cylinder, Mesh };
    std::string name;
    Shape shape = Shape::Box;
    Vec3f size = Vec3f::Constant(0.1f); ///< Box: full edge lengths (m)
    float radius = 0.05f;               ///< Sphere / Cylinder (m)
    float height = 0.1f;                ///< Cylinder: along its body y axis (m)
    std::string meshPath;               ///< Mesh: resolved OBJ path
    float meshScale = 1.0f;             ///< Mesh: uniform scale applied to the OBJ coordinates
    float density = 0.0f;               ///< kg/m^3; 0 = use relativeDensity
    float relativeDensity = 1.0f;       ///< in units of the fluid's rest density
    Vec3f position = Vec3f::Zero();     ///< world position of the centre of mass (m)
    Quatf orientation = Quatf::Identity();
    Vec3f velocity = Vec3f::Zero();        ///< m/s, initial (dynamic bodies)
    Vec3f angularVelocity = Vec3f::Zero(); ///< rad/s, initial (dynamic bodies)
    KinematicMotion kinematic;

    bool isKinematic() const { return kinematic.kind != KinematicMotion::Kind::None; }
    /// Density in kg/m^3 for a fluid of rest density rho0.
    float densityFor(float restDensity) const {
        return density > 0.0f ? density : relativeDensity * restDensity;
    }
    /// A short label: the name, or the shape ("box", "sphere" ...).
    std::string label() const;
};

/// Bounds of a body's motion in a scene file (docs/SCENES.md): beyond them the CFL step of the
/// fastest boundary sample pins the solver at its minimum time step.
constexpr float kMaxBodySpeed = 50.0f;           ///< m/s: velocity, kinematic velocity and path speed
constexpr float kMaxBodyAngularSpeed = 100.0f;   ///< rad/s: angularVelocity (initial or kinematic)
constexpr float kMaxBodyAcceleration = 1.0e4f;   ///< m/s^2: kinematic path acceleration
constexpr double kMaxKinematicStartTime = 1.0e6; ///< s: kinematic startTime
constexpr double kMaxBodyExtent = 1.0e4;         ///< m: a mesh body's size after its scale
/// Body density relative to the fluid's rest density: a body of 1e-9 rho0 was shot through the
/// wall at 46 m/s (checked by parseSceneJson, which knows restDensity).
constexpr float kMinRelativeBodyDensity = 0.05f, kMaxRelativeBodyDensity = 25.0f;

/// Parses the JSON text of a "bodies" array. `source` (the scene file) prefixes error messages,
/// which name the field ("scene.json: field 'bodies[1].density': expected a positive number").
/// Relative mesh paths are resolved with resolveMeshPath against the scene file's folder.
std::vector<BodyDescription> parseBodiesJson(const std::string& jsonText, const std::string& source);
/// Parses one body object given as JSON text (the GUI's "add body" and tests); `what` names it.
BodyDescription parseBodyJson(const std::string& jsonText, const std::string& source,
                              const std::string& what = "body");

/// Finds a mesh file: absolute; relative to the folder of `sceneFile`; <that folder>/../meshes;
/// dataDirectory()/meshes (the installed or staged meshes); relative to the working folder.
/// Returns the first existing path; throws SceneError listing the places.
std::string resolveMeshPath(const std::string& path, const std::string& sceneFile);

/// The body's surface mesh, centred at the origin for the primitives and in the OBJ's own
/// (scaled) coordinates for meshes. Throws SceneError for non-positive sizes.
TriangleMesh bodyMesh(const BodyDescription& body);

/// Moves every vertex inward so that each adjacent face moves by `distance` along its normal
/// (least-squares over the faces around the vertex; exact at the corners of a box).
TriangleMesh offsetInward(const TriangleMesh& mesh, float distance);

/// Builds shapes for a particle radius r (samples at spacing 2r, r inside the mesh) and keeps
/// them, so bodies of the same geometry share one shape. Thread-safe.
class BodyShapeCache {
public:
    /// With a container, a shape not yet built is first checked against it (createBodyShape).
    std::shared_ptr<const RigidShape> shape(const BodyDescription& body, float particleRadius,
                                            const Aabb* container = nullptr);
    void clear();

private:
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const RigidShape>> shapes_;
};

/// Creates the shape for a body (see BodyShapeCache). Throws SceneError / InvalidMeshError /
/// FileFormatError with the body's label in the message (a body thinner than 4r is refused).
/// With a container, a body that, turned by its orientation, is larger than the container (more
/// than 2r) is refused before it is sampled: the sampling's cost grows with the body's size (a 6 m
/// box in a 1 m container at r = 20 mm took 15 s before checkBodyPlacement refused it).
std::shared_ptr<const RigidShape> createBodyShape(const BodyDescription& body, float particleRadius,
                                                  const Aabb* container = nullptr);

/// A rigid body from its description at simulated time t (kinematic bodies start on their
/// motion at time t).
RigidBody makeRigidBody(const BodyDescription& body, std::shared_ptr<const RigidShape> shape,
                        float restDensity, double time = 0.0);

/// The kinematic path of a description (empty function when the body is dynamic).
KinematicPath kinematicPath(const BodyDescription& body);

/// Refuses a body that cannot be simulated where it is put (SceneError naming it): its mesh must
/// lie inside the container (within `tolerance`) at its start and, for a kinematic path, at every
/// waypoint (so a body larger than the container is refused too), and none of its boundary
/// samples may lie inside another body or another body's samples inside it (coincident or
/// overlapping bodies).
void checkBodyPlacement(const BodyDescription& description, const RigidBody& body,
                        const std::vector<const RigidBody*>& others, const Aabb& container, float tolerance);

/// One mesh sampled as fluid: the lattice points (spacing 2r) inside the scaled, translated mesh.
struct FluidMesh {
    std::string meshPath;           ///< resolved OBJ path
    Vec3f position = Vec3f::Zero(); ///< world position of the mesh's bounding-box centre (m)
    float scale = 1.0f;
    Vec3f velocity = Vec3f::Zero(); ///< m/s, initial
    // Filled by measureFluidMesh:
    double volume = 0.0;          ///< m^3 of the scaled mesh
    Vec3f extent = Vec3f::Zero(); ///< bounding-box size of the scaled mesh (m)
};
/// Reads and validates the mesh (closed, oriented) and fills volume and extent. Throws
/// FileFormatError / InvalidMeshError naming the file.
void measureFluidMesh(FluidMesh& fluid);
/// Lattice points inside the mesh (spacing = 2 particleRadius), in world coordinates.
std::vector<Vec3f> sampleFluidMesh(const FluidMesh& fluid, float particleRadius);
/// World bounding box of the placed mesh (measures the mesh if extent is not filled yet).
Aabb fluidMeshBounds(const FluidMesh& fluid);

} // namespace octo
