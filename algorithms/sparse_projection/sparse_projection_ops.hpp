// The operation the sparse sign projection alone needs, behind its own small interface: the
// backends implement it beside their other code (backends/portable/sparse_projection,
// backends/cuda/sparse_projection) and register it on their device context.
#pragma once

#include <string>

#include "randnla/backend.hpp"
#include "randnla/sparse_projection/sparse_sign_operator.hpp"

namespace randnla {

/// How a batch of b samples of dimension D is stored (LayoutLeft).
enum class SampleLayout {
  Columns,  ///< A is D x b: each sample contiguous (a C-order b x D dataset read as it is)
  Rows      ///< A is b x D: each of the D coordinates holds the b samples contiguously
};

inline const EnumNames<SampleLayout>& names_of(SampleLayout) {
  static const EnumNames<SampleLayout> names{{SampleLayout::Columns, "columns"}, {SampleLayout::Rows, "rows"}};
  return names;
}

/// The GPU kernel (the portable backend has one).
enum class SparseKernel {
  Auto,            ///< TensorCoreTiles from p >= 1/32 on, else WarpGathers
  RowWarp,         ///< the write-up's v3: a warp per row of S, lanes = columns of A, jumps drawn in parallel
  WarpGathers,     ///< a warp per 32 rows of S and a range of segments, each lane drawing one row's non-zeros,
                   ///< the warp loading each one's row of A whole (device workspace: Y's size per range,
                   ///< about max(1, 2 SMs 256 / k) ranges; and A's size in the columns layout, copied into
                   ///< the rows layout first)
  TensorCoreTiles  ///< tiles of S drawn into shared memory, times A split as hi + lo FP16 on the Tensor Cores
                   ///< (device workspace: A's size, its two FP16 parts with b rounded up to 32)
};

inline const EnumNames<SparseKernel>& names_of(SparseKernel) {
  static const EnumNames<SparseKernel> names{
      {SparseKernel::Auto, "auto"}, {SparseKernel::RowWarp, "row-warp"}, {SparseKernel::WarpGathers, "warp-gathers"},
      {SparseKernel::TensorCoreTiles, "tensor-core-tiles"}};
  return names;
}

class SparseProjectionOps {
 public:
  static constexpr const char* kName = "SparseProjectionOps";
  explicit SparseProjectionOps(MemorySpace space) : space_(space) {}
  virtual ~SparseProjectionOps() = default;

  /// Y := S A (k x b, FP32), A's samples laid out as `layout` says. Returns the kernel that ran.
  std::string project(const SparseSignOperator& s, MatrixView<const float> a, SampleLayout layout, SparseKernel kernel,
                      MatrixView<float> y) {
    require_space(a, space_, "A"), require_space(y, space_, "Y");
    const index_t d = layout == SampleLayout::Columns ? a.rows() : a.cols();
    const index_t b = layout == SampleLayout::Columns ? a.cols() : a.rows();
    require(d == s.cols, "A's dimension D", d, "must equal S's columns " + std::to_string(s.cols));
    require_shape(y, s.rows, b, "Y");
    return do_project(s, a, layout, kernel, y);
  }

 protected:
  virtual std::string do_project(const SparseSignOperator& s, MatrixView<const float> a, SampleLayout layout,
                                 SparseKernel kernel, MatrixView<float> y) = 0;

 private:
  MemorySpace space_;
};

}  // namespace randnla
