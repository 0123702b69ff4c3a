# Writes a Martin & Moyce (1952) n^2 = 2 scene: a = 57.15 mm column, 2a high, N particles across,
# spanning a slab `slab` particles (2r each) thick between two walls, in a 0.35 m x 0.15 m box.
import sys, json
# usage: python3 martin_moyce_scene.py N_ACROSS SLAB_PARTICLES OUT.json
a = 0.05715; N = int(sys.argv[1]); slab = int(sys.argv[2]); r = a / (2 * N)
depth = slab * 2 * r
scene = {"name": f"mm-a57-N{N}-s{slab}", "particleRadius": r,
         "container": {"min": [0, 0, 0], "max": [0.35, 0.15, depth]},
         "fluidBoxes": [{"min": [0, 0, 0], "max": [a, 2 * a, depth]}],
         "gravity": [0, -9.81, 0], "fps": 200}
json.dump(scene, open(sys.argv[3], "w"), indent=1)
