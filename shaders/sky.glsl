// Procedural sky shared by the background, the water's reflection and the floor's ambient:
// zenith-to-horizon gradient, a warm sun with a glow, darker ground below the horizon.
const vec3 kSunDirWorld = normalize(vec3(0.45, 0.75, 0.5));

vec3 sky(vec3 d) {
    float h = d.y;
    vec3 zenith = vec3(0.16, 0.36, 0.74), horizon = vec3(0.72, 0.82, 0.93), ground = vec3(0.30, 0.31, 0.33);
    vec3 c = h > 0.0 ? mix(horizon, zenith, pow(h, 0.4)) : mix(horizon * 0.8, ground, pow(-h, 0.5));
    float s = max(dot(d, kSunDirWorld), 0.0);
    c += vec3(1.0, 0.9, 0.7) * (pow(s, 800.0) * 8.0 + pow(s, 12.0) * 0.25);
    return c;
}
