# Spack recipe for randnla; packaging/spack/README.md says how to use it and records an install.
# SPDX-License-Identifier: BSD-3-Clause
import re

from spack.package import *


class Randnla(CMakePackage, CudaPackage):
    """Mixed-precision randomized numerical linear algebra on Kokkos views: randomized SVD, PCA,
    low-rank approximation, Tucker, TSQR and sparse projections, with a CUDA Tensor Core backend
    and a portable Kokkos backend."""

    # No public download yet: install from a checkout (spack dev-build or spack develop). A
    # release adds its url and sha256 here.
    maintainers("randnla developers")
    license("BSD-3-Clause")

    version("main")

    # The tested Kokkos releases, each with the Kokkos Kernels of the same version (Kokkos Kernels'
    # own recipe pins its Kokkos exactly, but an external Kokkos Kernels carries no such pin).
    kokkos_versions = ("3.4.01", "4.5.01")
    depends_on("kokkos@" + ",".join(kokkos_versions))
    for _v in kokkos_versions:
        depends_on(f"kokkos-kernels@{_v}", when=f"^kokkos@{_v}")
    depends_on("cmake@3.20:", type="build")
    depends_on("blas")
    depends_on("lapack")

    variant("shared", default=True, description="Build shared libraries")
    variant("openmp", default=False, description="Run the portable backend on Kokkos' OpenMP space")
    variant("mpi", default=False, description="Build the MPI transport (RandNLA::randnla_mpi)")
    variant("nccl", default=False, description="Build the NCCL transport between GPUs (RandNLA::randnla_nccl)")
    variant("tool", default=False, description="Build the randnla command-line tool (PNG plots by PLplot)")

    # The library itself has no OpenMP code: OpenMP is a Kokkos execution space.
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("mpi", when="+mpi")
    depends_on("nccl", when="+nccl")
    conflicts("+nccl", when="~cuda", msg="NCCL moves GPU data: +nccl needs +cuda")
    for _dep in ("zlib-api", "libzip", "nlohmann-json@3:", "cli11", "plplot"):
        depends_on(_dep, when="+tool")
    depends_on("pkgconfig", type="build", when="+tool")  # libzip and PLplot are found by pkg-config

    # +cuda is randnla's Tensor Core backend, a module the library loads at run time; it needs no
    # CUDA-enabled Kokkos (with a Serial or OpenMP Kokkos the views live on the host and the module
    # copies them to the GPU), so +cuda does not require ^kokkos+cuda. With ^kokkos+cuda the
    # portable backend runs on Kokkos' Cuda space as well and the C++ compiler is Kokkos'
    # (nvcc_wrapper), as for Kokkos Kernels.
    # The wgmma kernels are always built for sm_90a (CUDA 12 or later); the others need sm_80+.
    depends_on("cuda@12:", when="+cuda")
    for _arch in CudaPackage.cuda_arch_values:
        if int(re.match(r"\d+", _arch).group(0)) < 80:
            conflicts(f"cuda_arch={_arch}", when="+cuda", msg="randnla's CUDA backend needs sm_80 or later")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("RANDNLA_ENABLE_CUDA", "cuda"),
            self.define_from_variant("RANDNLA_ENABLE_MPI", "mpi"),
            self.define_from_variant("RANDNLA_ENABLE_NCCL", "nccl"),
            self.define_from_variant("RANDNLA_BUILD_TOOL", "tool"),
            # The tests need GoogleTest and the project's Python test environment
            # (scripts/install_deps.sh): they are the project's CI, not the install's.
            self.define("RANDNLA_BUILD_TESTS", False),
            self.define("RANDNLA_BUILD_PERF_TESTS", False),
            self.define("RANDNLA_BUILD_EXAMPLES", False),
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define_cuda_architectures(self))
        if spec.satisfies("+mpi"):
            args.append(self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx))
        if spec.satisfies("^kokkos+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
        return args
