#!/usr/bin/env python3
"""bzImage (XZ payload) -> uncompressed ELF vmlinux.

QEMU boots the ELF through its PVH entry point, which skips about five
seconds of XZ decompression per boot under TCG.

usage: extract-vmlinux.py BZIMAGE VMLINUX
"""
import lzma
import os
import sys

src, dst = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
off = data.find(b"\xfd7zXZ\x00")
if off < 0:
    sys.exit(f"{src}: no XZ payload")
out = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[off:])
if out[:4] != b"\x7fELF":
    sys.exit(f"{src}: payload is not ELF")
with open(dst + ".tmp", "wb") as f:
    f.write(out)
os.replace(dst + ".tmp", dst)
print(f"{dst}: {len(out)} bytes")
