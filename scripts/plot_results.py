#!/usr/bin/env python3
"""Draws one bar chart per benchmark, ours against the peers, into docs/img/.

The numbers are the recorded results, copied from the summaries in perf_tests/results/ into the
table below; each chart names the file, device and commit its numbers come from, so that a
figure in the docs can be traced to its run. When a summary is updated, update its entry here and
run the script again:

    python3 scripts/plot_results.py [--output docs/img]

Needs matplotlib (scripts/install_deps.sh puts it in .venv-test).
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OURS = "#c0392b"
PEER = "#7f8c8d"

# name: title, y label, log scale, source, groups {group: [(label, value, ours?, note)]}
CHARTS = {
    "products": dict(
        title="SHGEMM and TCEC-SGEMM against cuBLAS, 8192^3",
        ylabel="TFLOP/s (higher is better)", log=False,
        source="perf_tests/results/bench_gemm.md: H100 SXM 80GB, CUDA 13.0, commit 7225f35, medians of 4 rounds",
        groups={"8192 x 8192 x 8192": [
            ("cuBLAS SGEMM", 49.2, False, "err 1.6e-6"),
            ("cuBLAS TF32", 410.2, False, "err 2.1e-4"),
            ("SHGEMM fp16", 267.9, True, "err 2.9e-7"),
            ("SHGEMM tf32", 173.7, True, "err 3.4e-7"),
            ("TCEC fp16", 215.2, True, "err 2.9e-7"),
            ("TCEC tf32", 130.8, True, "err 3.4e-7"),
        ]}),
    "rsvd": dict(
        title="Randomized SVD, 16384 x 16384, k = 256, p = 16",
        ylabel="ms (lower is better)", log=False,
        source="perf_tests/results/bench_rsvd.md: H100 SXM 80GB, CUDA 13.0, commit 5591bd4, medians of 4 rounds",
        groups={"q = 0": [
            ("cuSOLVER gesvdr", 23.948, False, "err 4.39e-3"),
            ("randnla fp32", 10.071, True, "err 4.34e-3"),
            ("randnla auto", 4.268, True, "err 4.34e-3"),
        ], "q = 2": [
            ("cuSOLVER gesvdr", 60.647, False, "err 2.46e-3"),
            ("randnla fp32", 26.782, True, "err 2.46e-3"),
            ("randnla auto", 9.781, True, "err 2.46e-3"),
        ]}),
    "pca": dict(
        title="PCA of Fashion-MNIST (60000 x 784), 16 components, q = 2, host",
        ylabel="ms (lower is better)", log=False,
        source="perf_tests/results/bench_pca_host.md: 2-core CI machine, OpenBLAS 2 threads, commit 26f07e3, median of 3 invocations",
        groups={"RSVD / PCA.fit": [
            ("scikit-learn PCA.fit", 371.7, False, ""),
            ("randnla pca (RSVD)", 232.0, True, ""),
        ], "whole command / load + fit": [
            ("scikit-learn load + fit", 696.1, False, ""),
            ("randnla pca", 650.0, True, ""),
        ]}),
    "lra": dict(
        title="Randomized LRA of a rank-k 35840 x 35840 matrix",
        ylabel="ms (lower is better)", log=True,
        source="perf_tests/results/bench_lra.md: H100 SXM 80GB, CUDA 13.0, commit a810be9",
        groups={"k = 256": [
            ("FP32 + Householder (baseline)", 35.986, False, "err 1.7e-5"),
            ("TF32 + Householder (cuBLAS)", 10.420, False, "err 2.3e-3"),
            ("16|32 unrefined", 5.238, True, "err 2.3e-3"),
            ("split", 6.449, True, "err 5.7e-6"),
            ("TF32 subspace-refined", 9.356, True, "err 6.4e-7"),
        ], "k = 1024": [
            ("FP32 + Householder (baseline)", 132.296, False, "err 1.2e-4"),
            ("TF32 + Householder (cuBLAS)", 41.278, False, "err 1.2e-2"),
            ("16|32 unrefined", 13.480, True, "err 1.2e-2"),
            ("split", 30.213, True, "err 4.7e-5"),
            ("16|32 subspace-refined, auto QR", 37.009, True, "err 9.7e-7"),
        ]}),
    "tucker": dict(
        title="RP-HOSVD (Tucker) of a 1024^3 tensor, ranks 64",
        ylabel="ms (lower is better)", log=False,
        source="perf_tests/results/bench_tucker.md: H100 SXM 80GB, CUDA 13.0, commit 258a0ec",
        groups={"1024 x 1024 x 1024": [
            ("FP32 two-pass (SGEMM, Householder)", 14.85, False, "err 1.3e-5"),
            ("two-pass, SHGEMM-FP16", 7.17, True, "err 3.0e-6"),
            ("sequentially truncated, FP32", 7.76, True, "err 9.2e-6"),
            ("sequentially truncated, SHGEMM-FP16", 3.98, True, "err 2.0e-6"),
            ("single-pass, SHGEMM-FP16", 8.69, True, "err 4.3e-6"),
        ]}),
    "qr": dict(
        title="QR of tall-skinny matrices",
        ylabel="ms (lower is better, log scale)", log=True,
        source="perf_tests/results/bench_qr.md: H100 SXM 80GB, CUDA 13.0, commit 426b22b",
        groups={"1048576 x 16": [
            ("cuSOLVER sgeqrf + sorgqr", 20.401, False, ""),
            ("CholeskyQR (FP64)", 0.592, True, ""),
            ("TSQR", 0.624, True, ""),
            ("auto", 0.107, True, ""),
        ], "1048576 x 64": [
            ("cuSOLVER sgeqrf + sorgqr", 19.390, False, ""),
            ("CholeskyQR (FP64)", 2.024, True, ""),
            ("TSQR", 12.319, True, ""),
            ("auto", 0.462, True, ""),
        ], "65536 x 512": [
            ("cuSOLVER sgeqrf + sorgqr", 15.736, False, ""),
            ("CholeskyQR (FP64)", 1.811, True, ""),
            ("TSQR", 36.078, True, ""),
            ("auto", 0.922, True, ""),
        ]}),
    "sparse_projection": dict(
        title="Sparse sign projection Y = S A, b = 32, k = 16384",
        ylabel="ms (lower is better, log scale)", log=True,
        source="perf_tests/results/bench_sparse_projection.md: H100 SXM 80GB, CUDA 13.0, commit 66aff0d",
        groups={"D = 10^7, p = 1/sqrt(D)": [
            ("rebuilt v3 (row-warp)", 4.303, False, ""),
            ("randnla warp-gathers", 0.982, True, ""),
        ], "D = 10^8, p = 1/sqrt(D)": [
            ("rebuilt v3 (row-warp)", 12.840, False, ""),
            ("randnla warp-gathers", 4.789, True, ""),
        ], "D = 10^6, p = 1/3": [
            ("cuBLAS FP16, S stored", 10.578, False, ""),
            ("randnla tensor-core-tiles", 19.584, True, ""),
        ]}),
    "sparse": dict(
        title="Randomized SVD of sparse matrices, p = 10, q = 2 (CSR, FP32)",
        ylabel="ms (lower is better, log scale)", log=True,
        source="perf_tests/results/bench_sparse_rsvd.md: H200, CUDA 13.0, torch 2.11, commit b1c5795 (243^3: 31cb13d)",
        groups={"WordNet, k = 64": [
            ("torch.svd_lowrank", 23.12, False, "err 0.97518"),
            ("randnla rsvd", 4.89, True, "err 0.97527"),
        ], "WordNet, k = 256": [
            ("torch.svd_lowrank", 89.71, False, "err 0.94696"),
            ("randnla rsvd", 16.41, True, "err 0.94692"),
        ], "Laplacian 128^3, k = 64": [
            ("torch.svd_lowrank", 265.63, False, ""),
            ("randnla rsvd", 47.83, True, ""),
        ], "Laplacian 128^3, k = 256": [
            ("torch.svd_lowrank", 1119.53, False, ""),
            ("randnla rsvd", 197.21, True, ""),
        ], "Laplacian 243^3 (1e8 nnz), k = 64": [
            ("randnla rsvd (torch fails)", 359.83, True, ""),
        ]}),
    "distributed": dict(
        title="Distributed weak scaling, one H100 per rank (NCCL)",
        ylabel="ms (flat is perfect scaling)", log=False,
        source="perf_tests/results/bench_distributed.md: 4 x H100 SXM 80GB, NVLink, commit 0f66dec, first series",
        groups={"TSQR, 1048576 x 64 per GPU": [
            ("1 GPU", 13.49, True, ""),
            ("2 GPUs", 13.77, True, ""),
            ("4 GPUs", 13.82, True, ""),
        ], "RSVD, 16384^2 per GPU, k = 256": [
            ("1 GPU", 9.06, True, ""),
            ("2 GPUs", 9.60, True, ""),
            ("4 GPUs", 9.46, True, ""),
        ]}),
}


def draw(name, chart, out):
    groups = chart["groups"]
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups) + 1.5, 4.6), squeeze=False)
    for ax, (group, bars) in zip(axes[0], groups.items()):
        labels = [b[0] for b in bars]
        values = [b[1] for b in bars]
        colors = [OURS if b[2] else PEER for b in bars]
        pos = range(len(bars))
        rects = ax.bar(pos, values, color=colors)
        for r, b in zip(rects, bars):
            text = f"{b[1]:g}" + (f"\n{b[3]}" if b[3] else "")
            ax.annotate(text, (r.get_x() + r.get_width() / 2, r.get_height()), ha="center", va="bottom",
                        fontsize=8, xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(list(pos))
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(group, fontsize=10)
        ax.set_ylabel(chart["ylabel"])
        if chart["log"]:
            ax.set_yscale("log")
            ax.set_ylim(min(values) / 2, max(values) * 4)
        else:
            ax.set_ylim(0, max(values) * 1.25)
        ax.grid(axis="y", alpha=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, color=OURS), plt.Rectangle((0, 0), 1, 1, color=PEER)]
    fig.legend(handles, ["randnla", "peer"], loc="upper right", fontsize=9)
    fig.suptitle(chart["title"], fontsize=11)
    fig.text(0.01, 0.01, "Source: " + chart["source"], fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.04, 0.92, 0.95))
    path = os.path.join(out, f"{name}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--output", default=os.path.join(here, "..", "docs", "img"))
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    for name, chart in CHARTS.items():
        print(draw(name, chart, args.output))


if __name__ == "__main__":
    main()
