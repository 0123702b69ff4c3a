#version 330 core
// Lit triangle meshes: the reconstructed water surface and the rigid bodies.
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;

uniform mat4 model; // rigid: rotation + translation only
uniform mat4 view;
uniform mat4 projection;

out vec3 vNormalView;
out vec3 vPosView;

void main() {
    vec4 p = view * model * vec4(position, 1.0);
    vPosView = p.xyz;
    vNormalView = mat3(view * model) * normal;
    gl_Position = projection * p;
}
