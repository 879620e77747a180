#!/usr/bin/env python3
"""Patches Kokkos 3.4.01 (from Debian's trilinos source) so that it builds with CUDA 13 for sm_90.

Each patch names the file, the text it expects and its replacement; a missing match is an error,
so a changed source tree is noticed instead of half-patched.
"""
import pathlib
import re
import sys

PATCHES = [
    # CUDA 13's __half conversions no longer accept Kokkos' half_t implicitly: cast explicitly.
    ("core/src/Cuda/Kokkos_Cuda_Half.hpp", r"(__half2(?:float|short_rz|ushort_rz|int_rz|uint_rz|ll_rz|ull_rz)\()val\)",
     r"\1static_cast<half_t::impl_type>(val))"),
    # __half2double was removed in CUDA 13.
    ("core/src/Cuda/Kokkos_Cuda_Half.hpp", r"__half2double\(val\)",
     "static_cast<double>(__half2float(static_cast<half_t::impl_type>(val)))"),
    # CUDA 13: cudaMemPrefetchAsync(ptr, bytes, cudaMemLocation, flags, stream).
    ("core/src/Cuda/Kokkos_CudaSpace.cpp",
     r"cudaMemPrefetchAsync\(ptr, bytes, space\.cuda_device\(\),\s*space\.cuda_stream\(\)\)",
     "cudaMemPrefetchAsync(ptr, bytes, cudaMemLocation{cudaMemLocationTypeDevice, space.cuda_device()}, 0u, space.cuda_stream())"),
    # CUDA 13 rejects sm_35, the wrapper's default.
    ("bin/nvcc_wrapper", r'default_arch="sm_35"', 'default_arch="sm_90"'),
    # Kokkos 3.4 knows no Hopper: its newest option, AMPERE80, is compiled for sm_90 instead.
    ("cmake/kokkos_arch.cmake", r"CHECK_CUDA_ARCH\(AMPERE80  sm_80\)", "CHECK_CUDA_ARCH(AMPERE80  sm_90)"),
]


def main(kokkos_dir: str) -> None:
    root = pathlib.Path(kokkos_dir)
    marker = root / ".randnla-cuda13-patched"
    if marker.exists():
        return
    for rel, pattern, replacement in PATCHES:
        path = root / rel
        text = path.read_text()
        new, count = re.subn(pattern, replacement, text)
        if count == 0:
            sys.exit(f"patch_kokkos_cuda13: pattern {pattern!r} not found in {path}")
        path.write_text(new)
        print(f"patched {rel}: {count} replacement(s)")
    marker.write_text("patched\n")


if __name__ == "__main__":
    main(sys.argv[1])
