#version 330 core
in vec2 vNdc;
uniform mat4 inverseViewProjection;
out vec4 fragColor;

vec3 sky(vec3 d);

void main() {
    vec4 a = inverseViewProjection * vec4(vNdc, -1.0, 1.0), b = inverseViewProjection * vec4(vNdc, 1.0, 1.0);
    vec3 d = normalize(b.xyz / b.w - a.xyz / a.w);
    fragColor = vec4(sky(d), 1.0);
}
