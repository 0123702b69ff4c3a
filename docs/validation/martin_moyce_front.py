# Surge front of a Martin & Moyce run against tests/data/validation/martin_moyce_n2_front.csv.
# The front is max x + r of the particles in each exported PLY (frame k at t = k / 200 s, frame 0 = t 0),
# Z = front / a, T = t sqrt(2 g / a); prints the RMS of Z over the 15 measured points.
# usage: python3 martin_moyce_front.py EXPORT_DIR PARTICLE_RADIUS
import sys, struct, glob, math, os

a = 0.05715; g = 9.81; d = sys.argv[1]; r = float(sys.argv[2]); fps = 200.0
exp = []
for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'data', 'validation', 'martin_moyce_n2_front.csv')):
    if line[0] in '#T' or not line.strip(): continue
    T, Z = map(float, line.split(',')); exp.append((T, Z))
def maxx(path):
    f = open(path, 'rb'); hdr = b''
    while not hdr.endswith(b'end_header\n'): hdr += f.readline()
    h = hdr.decode().split('\n'); n = 0; props = []
    for l in h:
        p = l.split()
        if p[:2] == ['element', 'vertex']: n = int(p[2])
        elif p[:1] == ['property'] and len(p) == 3: props.append(p[1])
    sizes = {'float': 4, 'double': 8, 'int': 4, 'uint': 4, 'float32': 4, 'uchar': 1, 'int32': 4, 'uint32': 4}
    stride = sum(sizes[t] for t in props); data = f.read(n * stride)
    fmt = 'f' if props[0] in ('float', 'float32') else 'd'
    return max(struct.unpack_from('<' + fmt, data, i * stride)[0] for i in range(n)), n
files = sorted(glob.glob(os.path.join(d, '*.ply')))
sim = []
for k, fpath in enumerate(files, start=0):
    x, n = maxx(fpath); sim.append((k / fps * math.sqrt(2 * g / a), (x + r) / a))
def zat(T):
    for i in range(1, len(sim)):
        if sim[i][0] >= T:
            u = (T - sim[i-1][0]) / (sim[i][0] - sim[i-1][0]); return sim[i-1][1] + u * (sim[i][1] - sim[i-1][1])
    return sim[-1][1]
err = [zat(T) - Z for T, Z in exp]
print(f"{d}: particles {n}, frames {len(files)}, RMS(Z) {math.sqrt(sum(e*e for e in err)/len(err)):.3f}, mean(Z_sim-Z_exp) {sum(err)/len(err):+.3f}, Z_sim at T=1,2,3: {zat(1):.2f} {zat(2):.2f} {zat(3):.2f}")
