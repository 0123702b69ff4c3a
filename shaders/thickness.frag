#version 330 core
// Screen-space water thickness: every mesh layer adds its signed view distance (entering
// front faces subtract, leaving back faces add), summed by additive blending.
in vec3 vNormalView;
in vec3 vPosView;
out vec4 fragColor;

void main() {
    float d = length(vPosView);
    fragColor = vec4(gl_FrontFacing ? -d : d, 0.0, 0.0, 0.0);
}
