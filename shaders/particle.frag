#version 330 core
in vec2 vCorner;
in vec3 vColor;
in vec3 vCenterView;

uniform mat4 projection;
uniform float radius;
uniform vec3 lightDirView;

out vec4 fragColor;

void main() {
    float r2 = dot(vCorner, vCorner);
    if (r2 > 1.0) discard;
    vec3 n = vec3(vCorner, sqrt(1.0 - r2));
#ifdef EXACT_DEPTH
    // The sphere's true depth: impostors intersect each other and meshes as spheres. Writing
    // gl_FragDepth disables early depth rejection, so this variant is opt-in (software GL).
    vec4 clip = projection * vec4(vCenterView + n * radius, 1.0);
    gl_FragDepth = 0.5 * clip.z / clip.w + 0.5;
#endif
    float diffuse = max(dot(n, lightDirView), 0.0);
    vec3 h = normalize(lightDirView + vec3(0.0, 0.0, 1.0));
    float specular = pow(max(dot(n, h), 0.0), 40.0);
    fragColor = vec4(vColor * (0.28 + 0.72 * diffuse) + 0.3 * specular, 1.0);
}
