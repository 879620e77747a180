"""The Spack recipe (packaging/spack/packages/randnla/package.py) without Spack: it is run against a
stub of the part of the spack.package API it uses, and checked to declare the variants cuda,
openmp, mpi, nccl and shared; to name only its own variants in its when= conditions, conflicts
and define_from_variant calls; and to pass only CMake options that CMakeLists.txt declares
(option() or a CACHE set()), besides CMake's own and <Package>_ROOT. Then the same checks on
recipes broken on purpose must fail. Usage: check_spack_recipe.py PACKAGE_PY CMAKELISTS_TXT"""
import re
import sys
import types

REQUIRED_VARIANTS = {"cuda", "openmp", "mpi", "nccl", "shared"}
# CudaPackage's own variants, as Spack's CudaPackage declares them.
CUDA_PACKAGE_VARIANTS = {"cuda", "cuda_arch"}
# Options of CMake itself and of the Find modules and packages that the build looks up.
FOREIGN_OPTION = re.compile(r"^(CMAKE_\w+|MPI_\w+|\w+_ROOT)$")


class Recorder:
    """What the directives of one recipe declared."""

    def __init__(self):
        self.variants = set()
        self.conditions = []  # (directive, spec string) that refer to the recipe's own variants
        self.depends = []


def stub_spack_package(rec):
    """A module standing for spack.package, recording into rec."""
    mod = types.ModuleType("spack.package")

    def variant(name, default=None, description="", values=None, multi=False, when=None):
        rec.variants.add(name)
        if when:
            rec.conditions.append(("variant " + name, when))

    def depends_on(spec, when=None, type=None):
        rec.depends.append(spec)
        if when:
            rec.conditions.append(("depends_on " + spec, when))

    def conflicts(spec, when=None, msg=None):
        rec.conditions.append(("conflicts", spec))
        if when:
            rec.conditions.append(("conflicts " + spec, when))

    def version(name, **kwargs):
        pass

    def maintainers(*names):
        pass

    def license(name):
        pass

    class CMakePackage:
        pass

    class CudaPackage:
        cuda_arch_values = ("60", "70", "75", "80", "86", "90")

    for obj in (variant, depends_on, conflicts, version, maintainers, license, CMakePackage, CudaPackage):
        setattr(mod, obj.__name__, obj)
    mod.__all__ = [name for name in vars(mod) if not name.startswith("_")]
    return mod


class AnySpec:
    """A spec that satisfies everything, so that every branch of cmake_args runs."""

    def satisfies(self, other):
        return True

    def __getitem__(self, name):
        return types.SimpleNamespace(prefix="/prefix/" + name, mpicxx="/prefix/bin/mpicxx",
                                     kokkos_cxx="/prefix/bin/nvcc_wrapper")


class Builder:
    """The self of cmake_args: records define() and define_from_variant()."""

    def __init__(self):
        self.spec = AnySpec()
        self.defined = []  # (cmake option, variant or None)

    def define(self, name, value):
        self.defined.append((name, None))
        return "-D%s=%s" % (name, value)

    def define_from_variant(self, name, variant=None):
        self.defined.append((name, variant or name.lower()))
        return "-D%s" % name

    def define_cuda_architectures(self, pkg):
        return self.define("CMAKE_CUDA_ARCHITECTURES", "cuda_arch")


def own_variant_references(spec):
    """The variant names a spec string gives to the package it is about (before any ^)."""
    own = spec.split("^")[0]
    return set(re.findall(r"[+~](\w+)", own)) | set(re.findall(r"(\w+)=", own))


def declared_cmake_options(cmakelists):
    return set(re.findall(r"\boption\(\s*(\w+)", cmakelists)) | set(
        re.findall(r"\bset\(\s*(\w+)\s[^)]*\bCACHE\b", cmakelists))


def problems(recipe_source, cmakelists):
    """Everything wrong with the recipe, one line each; empty if nothing."""
    rec = Recorder()
    saved = {name: sys.modules.get(name) for name in ("spack", "spack.package")}
    sys.modules["spack"] = types.ModuleType("spack")
    sys.modules["spack.package"] = stub_spack_package(rec)
    namespace = {}
    try:
        exec(compile(recipe_source, "package.py", "exec"), namespace)
    except Exception as e:  # any error of the recipe is the finding
        return ["the recipe does not run: %s: %s" % (type(e).__name__, e)]
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    if not isinstance(namespace.get("Randnla"), type):
        return ["the recipe defines no class Randnla"]
    found = []
    variants = rec.variants | CUDA_PACKAGE_VARIANTS
    for name in sorted(REQUIRED_VARIANTS - variants):
        found.append("variant %s is missing" % name)
    for where, spec in rec.conditions:
        for name in sorted(own_variant_references(spec) - variants):
            found.append("%s: '%s' names variant %s, which the recipe does not have" % (where, spec, name))
    builder = Builder()
    try:
        args = namespace["Randnla"].cmake_args(builder)
    except Exception as e:
        return found + ["cmake_args fails: %s: %s" % (type(e).__name__, e)]
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        found.append("cmake_args returns %r, not a list of strings" % (args,))
    options = declared_cmake_options(cmakelists)
    for name, variant in builder.defined:
        if variant is not None and variant not in variants:
            found.append("define_from_variant(%s, %s): no variant %s" % (name, variant, variant))
        if name not in options and not FOREIGN_OPTION.match(name):
            found.append("cmake_args passes %s, which CMakeLists.txt does not declare" % name)
    if not any(name == "RANDNLA_ENABLE_CUDA" and variant == "cuda" for name, variant in builder.defined):
        found.append("cmake_args does not map variant cuda onto RANDNLA_ENABLE_CUDA")
    return found


# Recipes broken on purpose (replacement in the recipe's text), each of which must be found.
BREAKAGES = [
    ('"RANDNLA_ENABLE_NCCL", "nccl"', '"RANDNLA_ENABLE_NCCL", "ncl"'),
    ('"RANDNLA_ENABLE_MPI"', '"RANDNLA_ENABLE_MPII"'),
    ('variant("openmp"', 'variant("openmpp"'),
    ('when="~cuda"', 'when="~cudaa"'),
    ("def cmake_args(self):", "def cmake_args(self)"),
]


def main():
    recipe_path, cmakelists_path = sys.argv[1:3]
    with open(recipe_path) as f:
        recipe = f.read()
    with open(cmakelists_path) as f:
        cmakelists = f.read()
    failures = ["recipe: " + p for p in problems(recipe, cmakelists)]
    for old, new in BREAKAGES:
        if old not in recipe:
            failures.append("breakage %r: the recipe no longer contains %r (update BREAKAGES)" % (new, old))
        elif not problems(recipe.replace(old, new, 1), cmakelists):
            failures.append("breakage %r went unnoticed" % new)
    for line in failures:
        print("FAIL " + line)
    print("%d problem(s); %d breakages checked" % (len(failures), len(BREAKAGES)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
