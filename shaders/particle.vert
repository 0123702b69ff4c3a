#version 330 core
// Sphere impostor: one camera-facing quad per particle (instanced), shaded as a sphere in the
// fragment shader. Far cheaper than sphere meshes for 10^5 particles.
layout(location = 0) in vec2 corner;   // quad corner in [-1, 1]^2
layout(location = 1) in vec3 center;   // particle position (world), per instance
layout(location = 2) in vec3 color;    // per instance

uniform mat4 view;
uniform mat4 projection;
uniform float radius;
uniform bool useUniformColor;
uniform vec3 uniformColor;
// Cutaway for wall particles: hide those on container faces the eye looks through, so a
// closed tank shows its back walls and floor but not a curtain in front of the fluid.
uniform bool cutaway;
uniform vec3 domainMin;
uniform vec3 domainMax;
uniform vec3 eyeWorld;

out vec2 vCorner;
out vec3 vColor;
out vec3 vCenterView;

bool onFrontWall(vec3 p) {
    vec3 dLo = abs(p - domainMin), dHi = abs(domainMax - p);
    float best = 1e30;
    bool front = false;
    for (int a = 0; a < 3; ++a) {
        if (dLo[a] < best) { best = dLo[a]; front = eyeWorld[a] < domainMin[a]; }
        if (dHi[a] < best) { best = dHi[a]; front = eyeWorld[a] > domainMax[a]; }
    }
    return front && best < 4.0 * radius; // body particles away from the walls stay visible
}

void main() {
    if (cutaway && onFrontWall(center)) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0); // outside the clip volume: culled
        return;
    }
    vec4 centerView = view * vec4(center, 1.0);
    vCorner = corner;
    vColor = useUniformColor ? uniformColor : color;
    vCenterView = centerView.xyz;
    gl_Position = projection * (centerView + vec4(corner * radius, 0.0, 0.0));
}
