#pragma once
// Draws one FrameSnapshot with OpenGL 3.3 core: particle impostors, boundary particles, the
// surface mesh (water shading: sky reflection, Beer–Lambert transmission over a screen-space
// thickness pass; or flat "diagnostic" shading), rigid bodies, octree node outlines (instanced,
// one draw call), sky, floor and container box.
// Keeps GPU buffers between frames and re-uploads only what changed (new snapshot, colour
// mode; the octree only when its nodes changed). All calls need the owning context current.
// Sources by job: SceneRenderer.cpp (GL objects, the paint's order, plain draws),
// SceneRendererBuffers.cpp (uploads), SceneRendererPasses.cpp (water, octree, floor and sky).
#include "render/Camera.h"
#include "render/Geometry.h"
#include "render/OctreeOutlineBuilder.h"
#include "render/RenderSettings.h"
#include "sim/FrameSnapshot.h"

#include <QOpenGLExtraFunctions>
#include <QString>
#include <array>
#include <map>
#include <memory>

class QOpenGLShaderProgram;

namespace octo::render {

class SceneRenderer : protected QOpenGLExtraFunctions {
public:
    SceneRenderer();
    ~SceneRenderer();
    SceneRenderer(const SceneRenderer&) = delete;
    SceneRenderer& operator=(const SceneRenderer&) = delete;

    /// Compiles the shaders from :/shaders; false with a message on failure.
    bool initialize(QString* error);
    /// Frees GPU objects (context current). Safe to call twice.
    void release();

    /// The snapshot to draw from now on; particleRadius (m) sizes the impostors.
    void setFrame(FrameSnapshotPtr frame, float particleRadius);
    const FrameSnapshotPtr& frame() const { return frame_; }

    void render(const OrbitCamera& camera, const RenderSettings& settings, int fbWidth, int fbHeight);
    /// Body drawn highlighted (being dragged); -1: none.
    void setHighlightedBody(int id) { highlightedBody_ = id; }
    /// Depths present in the uploaded octree (legend); {0, 0} before the first upload.
    std::pair<int, int> octreeDepthRange() const { return octreeDepthRange_; }
    /// Outline edges in the octree buffer (the shown nodes' edges, each once; one draw call).
    int octreeEdgeCount() const { return octreeCount_ / 2; }
    /// Off-screen renders (images) are exact: they wait for the newest octree outlines and tint
    /// the water by this paint's thickness. The live view (false) draws the last built outlines
    /// (and paints again while octreePending()) and the previous paint's thickness, so software GL
    /// never stalls on a texture it is still rasterising.
    void setExactRender(bool exact) { exactRender_ = exact; }
    /// The live view while paused: tint by this paint's thickness unless the previous paint's is of
    /// the same surface (a paused frame gets one paint; a stale thickness showed the wrong water).
    void setExactThickness(bool exact) { exactThickness_ = exact; }
    /// The octree outlines shown are not the newest wanted yet (a build runs in the background).
    bool octreePending() const { return octreeOutlines_.busy(); }

    /// Spray droplets drawn in the last water paint (tests).
    int dropletCount() const { return dropletCount_; }
    /// How often each buffer was uploaded (tests check that unchanged data is not re-sent).
    struct UploadCounters {
        int positions = 0, colors = 0, sorts = 0, boundary = 0, surfaceMesh = 0, bodyMeshes = 0, octree = 0,
            floor = 0;
    };
    const UploadCounters& uploads() const { return uploads_; }

private:
    struct MeshBuffers {
        unsigned vao = 0, vbo = 0, ebo = 0;
        int indexCount = 0;
        glm::vec3 boundsMin{0.0f}, boundsMax{0.0f}; ///< of the vertices uploaded
    };
    struct LineBuffers {
        unsigned vao = 0, vbo = 0;
        int vertexCount = 0;
    };

    /// Vertex attribute locations (the shaders' layout(location = …)).
    static constexpr GLuint kPos = 0, kAttr1 = 1, kAttr2 = 2;

    /// The buffers, vertex arrays, textures and framebuffers kept for the renderer's life.
    void createBuffers();
    void uploadMesh(MeshBuffers& buffers, const TriangleMesh& mesh);
    void uploadLines(LineBuffers& buffers, const std::vector<LineVertex>& vertices);
    void deleteMesh(MeshBuffers& buffers);
    void deleteLines(LineBuffers& buffers);
    void syncBuffers(const RenderSettings& settings, const OrbitCamera& camera);
    /// A new snapshot: counts, the boundary (if shown), the surface mesh if new, body meshes.
    void uploadNewFrame(const RenderSettings& settings, const FrameSnapshot& frame);
    void uploadBoundary(const FrameSnapshot& frame);
    void uploadSortedParticles(const FrameSnapshot& frame, const glm::vec3& eye, const glm::vec3& forward,
                               bool surfaceOnly);
    void drawParticles(unsigned vao, int count, const glm::mat4& view, const glm::mat4& proj, float radius,
                       const glm::vec3* uniformColor, const glm::vec3* eyeForCutaway = nullptr);
    void drawMesh(const MeshBuffers& mesh, const glm::mat4& model, const glm::mat4& view,
                  const glm::mat4& proj, const glm::vec4& color, float fresnel, bool flat = false,
                  float highlight = 0.0f);
    void drawLines(const LineBuffers& lines, const glm::mat4& view, const glm::mat4& proj);
    /// The rigid bodies, coloured by id (kinematic ones grey), the dragged one highlighted.
    void drawBodies(const glm::mat4& view, const glm::mat4& proj);
    /// The surface mesh as translucent blue (diagnostic shading): back faces, then front faces.
    void drawTranslucentMesh(const glm::mat4& view, const glm::mat4& proj, float alpha);
    void drawOctree(const RenderSettings& st, const OrbitCamera& camera);
    void drawSkyAndFloor(const OrbitCamera& camera);
    /// The water's screen-space thickness (quarter resolution) into the next of three textures;
    /// returns the texture the water pass samples (see setExactRender).
    unsigned drawThickness(const OrbitCamera& camera, int fbWidth, int fbHeight);
    void drawWater(const OrbitCamera& camera, int fbWidth, int fbHeight, unsigned thicknessTex);
    /// Copies the opaque scene drawn so far (the colour buffer) into behindTex_ for refraction.
    void copyBehind(int fbWidth, int fbHeight);
    /// Spray: fluid particles the surface leaves out (isolated, λmin < 0.4), as droplets.
    void uploadDroplets(const FrameSnapshot& frame);
    static OctreeFilter octreeFilter(const RenderSettings& settings);
    /// Asks for the outlines of the current frame and filter; uploads finished ones (true).
    bool syncOctree(const OctreeFilter& filter);

    bool initialized_ = false;
    std::unique_ptr<QOpenGLShaderProgram> particleProgram_, particleDepthProgram_, meshProgram_, lineProgram_;
    std::unique_ptr<QOpenGLShaderProgram> octreeProgram_, skyProgram_, floorProgram_, waterProgram_,
        thicknessProgram_;
    unsigned octreeVao_ = 0, octreeEdgeVbo_ = 0, emptyVao_ = 0, floorVao_ = 0;
    unsigned shadowTex_ = 0;
    unsigned behindTex_ = 0, behindFbo_ = 0; ///< the opaque scene behind the water (refraction)
    int behindW_ = 0, behindH_ = 0;
    unsigned dropletVao_ = 0, dropletPosVbo_ = 0;
    int dropletCount_ = 0;
    float shadowStrength_ = 1.0f;
    const FrameSnapshot* dropletFrame_ = nullptr;
    std::vector<Vec3f> dropletScratch_;
    // Thickness ring: paint k draws into k % 3 and samples (k - 1) % 3, which no pending paint
    // reads or writes any more (two would make paint k write what paint k - 1 still samples).
    std::array<unsigned, 3> thicknessTex_{}, thicknessFbo_{};
    int thicknessPaints_ = 0;                   ///< since the textures were (re)sized
    std::array<uint64_t, 3> thicknessSerial_{}; ///< surface serial each thickness texture was drawn for
    int octreeCount_ = 0, thicknessW_ = 0, thicknessH_ = 0;
    std::pair<int, int> octreeDepthRange_{0, 0};
    OctreeFilter octreeFilter_;                 ///< the filter last asked for
    std::vector<OctreeEdgeVertex> octreeEdges_; ///< what the octree buffer holds
    OctreeOutlineBuilder octreeOutlines_;
    bool exactRender_ = false;
    bool exactThickness_ = false;
    std::vector<float> shadowScratch_;
    const FrameSnapshot* shadowFrame_ = nullptr;
    int highlightedBody_ = -1;
    bool exactDepth_ = false;
    unsigned quadVbo_ = 0;
    unsigned fluidVao_ = 0, fluidPosVbo_ = 0, fluidColorVbo_ = 0;
    unsigned boundaryVao_ = 0, boundaryPosVbo_ = 0;
    int fluidCount_ = 0, boundaryCount_ = 0;
    MeshBuffers surfaceMesh_;
    LineBuffers floorLines_;
    std::map<const TriangleMesh*, std::pair<std::shared_ptr<const TriangleMesh>, MeshBuffers>> bodyMeshes_;

    FrameSnapshotPtr frame_;
    float particleRadius_ = 0.01f;
    // What the current GPU buffers were built from.
    const FrameSnapshot* uploadedFrame_ = nullptr;
    uint64_t uploadedSurfaceSerial_ = 0; ///< surface mesh in surfaceMesh_ (0: none or unserialised)
    const FrameSnapshot* uploadedColorsFrame_ = nullptr;
    const FrameSnapshot* uploadedOctreeFrame_ = nullptr;
    int uploadedColorKey_ = -1;
    int uploadedFloorKey_ = -1;
    Aabb uploadedDomain_;
    UploadCounters uploads_;
    std::vector<glm::vec3> colorScratch_;
    const FrameSnapshot* sortedFrame_ = nullptr;
    bool sortedSurfaceOnly_ = false;
    glm::vec3 sortedEye_{1e30f};
    std::vector<std::pair<float, uint32_t>> sortKeys_;
    std::vector<Vec3f> sortedPositions_;
    std::vector<glm::vec3> sortedColors_;
    std::vector<LineVertex> lineScratch_;
};

} // namespace octo::render
