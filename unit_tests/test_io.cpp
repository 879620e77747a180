// The tool's file formats: seeds parse to the right values, bad files throw naming the file.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "io/matrix_io.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

const std::string kSeeds = RANDNLA_SEEDS_DIR;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Io, NpyCAndFortranOrder) {
  const auto c = io::read_matrix(kSeeds + "/npy/c_f4.npy");  // [[1,2,3],[4,5,6]]
  ASSERT_EQ(c.rows, 2);
  ASSERT_EQ(c.cols, 3);
  EXPECT_EQ(c.data, (io::FloatBuffer{1, 4, 2, 5, 3, 6}));
  const auto f = io::read_matrix(kSeeds + "/npy/f_f8.npy");
  ASSERT_EQ(f.rows, 3);
  ASSERT_EQ(f.cols, 1);
  EXPECT_EQ(f.data, (io::FloatBuffer{1.5f, -2.0f, 3.0f}));
}

TEST(Io, NpyRoundTripAndAtomicWrite) {
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const auto m = io::parse_npy(io::npy_bytes(x, 3, 2), "mem");
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.data, io::FloatBuffer(x, x + 6));
  const std::string path = "/tmp/randnla_test_io_" + std::to_string(getpid()) + ".npy";
  std::remove(path.c_str());
  io::write_file_atomically(path, "first", false);
  EXPECT_NE(message_of([&] { io::write_file_atomically(path, "second", false); }).find("--force"), std::string::npos);
  EXPECT_EQ(io::read_file(path), "first");  // not overwritten
  io::write_file_atomically(path, "second", true);
  EXPECT_EQ(io::read_file(path), "second");
  std::remove(path.c_str());
}

TEST(Io, MatrixMarketCoordinateAndSymmetricArray) {
  const auto c = io::read_matrix(kSeeds + "/mtx/coord.mtx");
  ASSERT_EQ(c.rows, 3);
  EXPECT_EQ(c.data[0], 1.5f);
  EXPECT_EQ(c.data[2 + 1 * 3], -2.0f);
  const auto s = io::read_matrix(kSeeds + "/mtx/array_sym.mtx");  // lower triangle 1, 2, 3
  EXPECT_EQ(s.data, (io::FloatBuffer{1, 2, 2, 3}));
}

TEST(Io, IdxImagesBecomeRows) {
  const auto m = io::read_matrix(kSeeds + "/idx/images.idx");  // 2 images of 2x3
  ASSERT_EQ(m.rows, 2);
  ASSERT_EQ(m.cols, 6);
  EXPECT_EQ(m.data[0 + 5 * 2], 5.0f);
  EXPECT_EQ(m.data[1 + 0 * 2], 6.0f);
  const auto f = io::read_matrix(kSeeds + "/idx/floats.idx");
  EXPECT_EQ(f.data, (io::FloatBuffer{0.5f, -1.0f}));
}

TEST(Io, BadFilesThrowNamingTheFileAndTheProblem) {
  EXPECT_NE(message_of([] { io::read_matrix("/nonexistent/x.npy"); }).find("/nonexistent/x.npy"), std::string::npos);
  EXPECT_NE(message_of([] { io::parse_npy("NOTNPY....", "a.npy"); }).find("bad magic"), std::string::npos);
  std::string npy = io::read_file(kSeeds + "/npy/c_f4.npy");
  EXPECT_NE(message_of([&] { io::parse_npy(npy.substr(0, npy.size() - 3), "a.npy"); }).find("truncated"), std::string::npos);
  std::string int_npy = npy;
  int_npy.replace(int_npy.find("<f4"), 3, "<i4");
  EXPECT_NE(message_of([&] { io::parse_npy(int_npy, "a.npy"); }).find("unsupported dtype '<i4'"), std::string::npos);
  EXPECT_NE(message_of([] { io::parse_mtx("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "b.mtx"); })
                .find("out of range"), std::string::npos);
  EXPECT_NE(message_of([] { io::parse_mtx("%%MatrixMarket matrix coordinate complex general\n1 1 0\n", "b.mtx"); })
                .find("complex"), std::string::npos);
  EXPECT_NE(message_of([] { io::parse_idx(std::string("\0\0\x08\x01\0\0\0\x09", 8), "c.idx"); }).find("truncated"),
            std::string::npos);
  EXPECT_NE(message_of([] { io::parse_idx(std::string("\0\0\x08\x02\xff\xff\xff\xff\xff\xff\xff\xff", 12), "c.idx"); })
                .find("too large"), std::string::npos);
  EXPECT_NE(message_of([] { io::read_matrix("/tmp/x.csv"); }).find("x.csv"), std::string::npos);
  // Found by the fuzzer: a size line announcing more entries than the file holds, and a
  // zero-row array with a huge column count (a hang before the fix).
  EXPECT_NE(message_of([] { io::read_matrix(kSeeds + "/mtx/regress_oom_huge_array.mtx"); }).find("truncated"),
            std::string::npos);
  EXPECT_NE(message_of([] { io::read_matrix(kSeeds + "/mtx/regress_hang_zero_rows.mtx"); }).find("too large"),
            std::string::npos);
}

}  // namespace
}  // namespace randnla
