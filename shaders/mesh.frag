#version 330 core
in vec3 vNormalView;
in vec3 vPosView;

uniform vec4 baseColor;
uniform vec3 lightDirView;
uniform float fresnelStrength; // > 0 for water: grazing angles reflect more (Schlick-like)
uniform bool flatShading;      // facet normals from screen-space derivatives (meshes without normals)
uniform float highlight;       // > 0: the body being dragged glows at its rim

out vec4 fragColor;

void main() {
    vec3 n = flatShading ? normalize(cross(dFdx(vPosView), dFdy(vPosView))) : normalize(vNormalView);
    vec3 v = normalize(-vPosView);
    if (dot(n, v) < 0.0) n = -n; // two-sided: meshes may be open or inconsistently wound
    float diffuse = max(dot(n, lightDirView), 0.0);
    vec3 h = normalize(lightDirView + v);
    float specular = pow(max(dot(n, h), 0.0), 64.0);
    float fresnel = pow(1.0 - max(dot(n, v), 0.0), 3.0);
    vec3 sky = vec3(0.75, 0.85, 1.0);
    vec3 c = baseColor.rgb * (0.3 + 0.7 * diffuse) + 0.6 * specular + fresnelStrength * fresnel * sky;
    c += highlight * (0.25 + 0.75 * pow(1.0 - max(dot(n, v), 0.0), 2.0)) * vec3(1.0, 0.95, 0.55);
    float a = clamp(baseColor.a + fresnelStrength * fresnel + 0.5 * specular, 0.0, 1.0);
    fragColor = vec4(c, a);
}
