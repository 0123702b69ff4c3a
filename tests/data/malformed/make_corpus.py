#!/usr/bin/env python3
"""Writes the particle files of the malformed-input corpus (the JSON and OBJ files are written by
hand). Each file is tiny and declares counts far beyond its bytes, or values a reader must refuse;
MANIFEST.tsv lists the one-line error each must give. Run from this folder: python3 make_corpus.py"""
import struct

PLY_XYZ = b"property float x\nproperty float y\nproperty float z\n"


def write(name, data):
    with open(name, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def ply_face_list_first(count_bytes):
    # A face element before the vertex element: its list is skipped record by record.
    return (b"ply\nformat binary_little_endian 1.0\nelement face 1\n"
            b"property list double uchar vertex_indices\nelement vertex 3\n" + PLY_XYZ +
            b"end_header\n" + count_bytes + bytes(2048))


write("ply_face_list_count_wraps.ply", ply_face_list_first(struct.pack("<d", 2.0 ** 64)))
write("ply_face_list_count_1e30.ply", ply_face_list_first(struct.pack("<d", 1e30)))
write("ply_face_list_count_nan.ply", ply_face_list_first(struct.pack("<d", float("nan"))))
write("ply_face_list_count_negative.ply", ply_face_list_first(struct.pack("<d", -5.0)))
write("ply_face_list_count_fraction.ply", ply_face_list_first(struct.pack("<d", 2.5)))
write("ply_vertex_list_count_1e8.ply",
      b"ply\nformat binary_little_endian 1.0\nelement vertex 100000000\n" + PLY_XYZ +
      b"property list uchar int extra\nend_header\n" + bytes(1024))
write("ply_vertex_count_4e9.ply",
      b"ply\nformat binary_little_endian 1.0\nelement vertex 4000000000\n" + PLY_XYZ +
      b"end_header\n" + bytes(24))
write("ply_ascii_vertex_count_1e9.ply",
      b"ply\nformat ascii 1.0\nelement vertex 1000000000\n" + PLY_XYZ + b"end_header\n0 0 0\n1 1 1\n")
write("ply_element_count_overflow.ply",
      b"ply\nformat ascii 1.0\nelement vertex 99999999999999999999\n" + PLY_XYZ + b"end_header\n0 0 0\n")
write("ply_x_is_list.ply",
      b"ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty list uchar float x\n"
      b"property float y\nproperty float z\nend_header\n" + bytes(16))
write("ply_no_end_header.ply", b"ply\nformat ascii 1.0\nelement vertex 2\n" + PLY_XYZ)
# A valid file whose coordinates make a surface lattice impossible (reconstruct must say so).
write("ply_far_flung_particles.ply",
      b"ply\nformat ascii 1.0\nelement vertex 2\n" + PLY_XYZ + b"end_header\n1e30 0 0\n-1e30 0 0\n")

VTK = b"# vtk DataFile Version 3.0\nmalformed\n"
write("vtk_binary_points_2e8.vtk", VTK + b"BINARY\nDATASET POLYDATA\nPOINTS 200000000 float\n" + bytes(1200))
write("vtk_ascii_points_1e8.vtk", VTK + b"ASCII\nDATASET POLYDATA\nPOINTS 100000000 float\n0 0 0\n1 1 1\n")
write("vtk_ascii_field_tuples_1e8.vtk",
      VTK + b"ASCII\nDATASET POLYDATA\nPOINTS 2 float\n0 0 0 1 1 1\nPOINT_DATA 2\nFIELD f 1\n"
      b"density 1 100000000 float\n1 2\n")
write("vtk_ascii_scalars_components_1e8.vtk",
      VTK + b"ASCII\nDATASET POLYDATA\nPOINTS 2 float\n0 0 0 1 1 1\nPOINT_DATA 2\n"
      b"SCALARS density float 100000000\nLOOKUP_TABLE default\n1 2\n")
write("vtk_binary_field_product_1e11.vtk",
      VTK + b"BINARY\nDATASET POLYDATA\nPOINTS 2 float\n" + struct.pack(">6f", 0, 0, 0, 1, 1, 1) +
      b"\nPOINT_DATA 2\nFIELD f 1\ndensity 1000000 100000 float\n" + bytes(64))
write("vtk_points_count_overflow.vtk", VTK + b"ASCII\nDATASET POLYDATA\nPOINTS 99999999999999999999 float\n0 0 0\n")
write("vtk_points_times_3_overflows.vtk",
      VTK + b"ASCII\nDATASET POLYDATA\nPOINTS 6148914691236517206 float\n0 0 0\n")
write("vtk_cells_1e8.vtk",
      VTK + b"ASCII\nDATASET POLYDATA\nPOINTS 1 float\n0 0 0\nVERTICES 1 100000000\n1 0\n")

# ---- issue 30 (hostile input, round two) ----
# Duplicate PLY property: "last wins" would drop a column silently.
write("ply_duplicate_property.ply",
      b"ply\nformat ascii 1.0\nelement vertex 2\n" + PLY_XYZ + b"property float x\nend_header\n"
      b"0 0 0 1\n1 1 1 2\n")
# Densities give each particle its volume: 0, negative and NaN are refused.
write("ply_density_zero.ply",
      b"ply\nformat ascii 1.0\nelement vertex 2\n" + PLY_XYZ + b"property float density\nend_header\n"
      b"0 0 0 1000\n0.02 0 0 0\n")
write("ply_density_nan.ply",
      b"ply\nformat binary_little_endian 1.0\nelement vertex 2\n" + PLY_XYZ +
      b"property float density\nend_header\n" + struct.pack("<8f", 0, 0, 0, 1000, 0.02, 0, 0, float("nan")))
# 1 000 ASCII properties over 2 000 two-byte lines: 2 000 x 1 000 values need 4 MB, the file has 4 KB
# (the 1 MB version reached 3.8 GB before failing on its first line).
write("ply_ascii_1000_properties.ply",
      b"ply\nformat ascii 1.0\nelement vertex 2000\n" + PLY_XYZ +
      b"".join(b"property float p%d\n" % k for k in range(997)) + b"end_header\n" + b"0\n" * 2000)
# One face line fanned into a triangle per 2 bytes ("f 1 2 3 2 3 2 3 ...").
write("obj_fan_face_2_bytes_per_triangle.obj",
      b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1" + b" 2 3" * 3000 + b"\n")
# "bodies" nested 100 000 arrays deep: the JSON dump() of the bodies overflowed the stack.
write("scene_bodies_nested_100000.json",
      '{"name": "t", "particleRadius": 0.02, "container": {"min": [0, 0, 0], "max": [1, 0.6, 0.6]},\n'
      ' "fluidBoxes": [{"min": [0, 0, 0], "max": [0.3, 0.3, 0.6]}],\n "bodies": ' + "[" * 100000 +
      "]" * 100000 + "}\n")
# Copies of one fluid box (10 000 of them made 9.6 M coincident particles): more than 1 000 entries.
write("scene_fluid_box_1001_copies.json",
      '{"name": "t", "particleRadius": 0.02, "container": {"min": [0, 0, 0], "max": [1, 0.6, 0.6]},\n'
      ' "fluidBoxes": [' + ", ".join(['{"min": [0, 0, 0], "max": [0.3, 0.3, 0.6]}'] * 1001) + "]}\n")
