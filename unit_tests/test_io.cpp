// The tool's file formats: seeds parse to the right values, bad files throw naming the file.
#include <unistd.h>
#include <zlib.h>

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

/// `raw` as one gzip member (zlib's deflate with the gzip wrapper).
std::string gzip(const std::string& raw) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, raw.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(&out[0]);
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(Io, GzipDecompressedAndBadStreamsRefused) {
  const std::string raw = io::read_file(kSeeds + "/npy/c_f4.npy"), z = gzip(raw);
  EXPECT_EQ(io::gunzip(z, "a.npy.gz", 1 << 20), raw);
  EXPECT_EQ(io::gunzip(z + z, "a.npy.gz", 1 << 20), raw + raw);  // concatenated members
  EXPECT_EQ(io::read_file(kSeeds + "/gzip/c_f4.npy.gz"), raw);   // by its magic, whatever the name
  const auto gz = [&](const std::string& bytes, std::size_t limit = 1 << 20) {
    return message_of([&] { io::gunzip(bytes, "x.gz", limit); });
  };
  EXPECT_NE(gz(z.substr(0, z.size() / 2)).find("truncated gzip data"), std::string::npos);
  EXPECT_NE(gz(z.substr(0, 12)).find("truncated gzip data"), std::string::npos);
  std::string flipped = z;
  flipped[z.size() - 6] ^= 0x5a;  // the CRC-32
  EXPECT_NE(gz(flipped).find("corrupt gzip data"), std::string::npos);
  std::string declared = z;
  declared[z.size() - 1] = '\x7f';  // the declared length: 2 GiB more than it holds
  EXPECT_NE(gz(declared).find("corrupt gzip data"), std::string::npos);
  EXPECT_NE(gz(z + "trailing").find("not gzip data"), std::string::npos);
  // Bomb-like: 64 MiB of zeros in a few kB, refused at the limit without taking more.
  const std::string bomb = gzip(std::string(std::size_t(64) << 20, '\0'));
  EXPECT_LT(bomb.size(), std::size_t(1) << 17);
  const std::string m = gz(bomb, std::size_t(1) << 20);
  EXPECT_NE(m.find("decompresses to more than 1.0 MiB"), std::string::npos) << m;
  EXPECT_NE(m.find("x.gz"), std::string::npos) << m;
  EXPECT_EQ(io::gunzip(bomb, "x.gz", std::size_t(64) << 20).size(), std::size_t(64) << 20);  // exactly at the limit
}

/// A .npy of float64 values 0, 1, 2, ... with `shape`, C or Fortran order.
std::string npy_iota(const std::vector<int>& shape, bool fortran) {
  std::string dims;
  std::size_t count = 1;
  for (int e : shape) dims += std::to_string(e) + ", ", count *= static_cast<std::size_t>(e);
  std::string header = std::string("{'descr': '<f8', 'fortran_order': ") + (fortran ? "True" : "False") + ", 'shape': (" +
                       dims + "), }\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  for (std::size_t e = 0; e < count; ++e) {
    const double v = static_cast<double>(e);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  return out;
}

TEST(Io, NpyTensorsFirstIndexFastest) {
  // Element (i, j, l) of a 2 x 3 x 4 array: C order holds it at 12 i + 4 j + l, Fortran order at
  // i + 2 j + 6 l; the reader keeps both first index fastest (at i + 2 j + 6 l).
  const auto c = io::parse_npy(npy_iota({2, 3, 4}, false), "c.npy", 5);
  const auto f = io::parse_npy(npy_iota({2, 3, 4}, true), "f.npy", 5);
  ASSERT_EQ(c.extents, (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(c.rows, 2);
  EXPECT_EQ(c.cols, 12);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int l = 0; l < 4; ++l) {
        EXPECT_EQ(c.data[static_cast<std::size_t>(i + 2 * j + 6 * l)], static_cast<float>(12 * i + 4 * j + l));
        EXPECT_EQ(f.data[static_cast<std::size_t>(i + 2 * j + 6 * l)], static_cast<float>(i + 2 * j + 6 * l));
      }
  const auto five = io::parse_npy(npy_iota({2, 1, 3, 1, 2}, false), "5.npy", 5);
  EXPECT_EQ(five.cols, 6);
  EXPECT_EQ(five.data[1 + 2 * (2 + 3 * 1)], static_cast<float>(1 * 6 + 2 * 2 + 1));  // (1, 0, 2, 0, 1)
  EXPECT_NE(message_of([] { io::parse_npy(npy_iota({2, 3, 4}, false), "c.npy"); }).find("3-D array; expected a matrix"),
            std::string::npos);
  EXPECT_NE(message_of([] { io::parse_npy(npy_iota({1, 1, 1, 1, 1, 2}, false), "6.npy", 5); }).find("1-D to 5-D"),
            std::string::npos);
}

// The CSR reader stores what the dense reader does: mirrors of a symmetric file, repeated positions
// summed, each row's columns sorted, explicit zeros kept as entries.
TEST(Io, CoordinateMtxAsCsrEqualsTheDenseReading) {
  const std::string file =
      "%%MatrixMarket matrix coordinate real symmetric\n% comment\n4 4 6\n"
      "4 1 2.5\n2 2 -1\n3 1 0.5\n4 1 1.5\n3 3 0\n4 2 7\n";
  const io::DenseMatrix d = io::parse_mtx(file, "s.mtx");
  const io::SparseMatrix s = io::parse_mtx_sparse(file, "s.mtx");
  ASSERT_TRUE(io::is_mtx_coordinate(file));
  ASSERT_EQ(s.rows, 4);
  ASSERT_EQ(s.cols, 4);
  EXPECT_EQ(s.row_ptr, (std::vector<std::int32_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(s.col_idx, (std::vector<std::int32_t>{2, 3, 1, 3, 0, 2, 0, 1}));
  std::vector<float> dense(16, 0.0f);
  for (std::int64_t i = 0; i < s.rows; ++i)
    for (std::int32_t e = s.row_ptr[static_cast<std::size_t>(i)]; e < s.row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      if (e > s.row_ptr[static_cast<std::size_t>(i)]) EXPECT_LT(s.col_idx[static_cast<std::size_t>(e) - 1], s.col_idx[static_cast<std::size_t>(e)]);
      dense[static_cast<std::size_t>(i + 4 * s.col_idx[static_cast<std::size_t>(e)])] += s.values[static_cast<std::size_t>(e)];
    }
  for (std::size_t e = 0; e < dense.size(); ++e) EXPECT_EQ(dense[e], d.data[e]) << "element " << e;
  EXPECT_EQ(d.data[3 + 4 * 0], 4.0f);  // (4, 1): 2.5 + 1.5, summed
  EXPECT_EQ(s.source_type, "Matrix Market coordinate real symmetric");
  EXPECT_FALSE(io::is_mtx_coordinate("%%MatrixMarket matrix array real general\n1 1\n1\n"));
  EXPECT_NE(message_of([] { io::parse_mtx_sparse("%%MatrixMarket matrix array real general\n1 1\n1\n", "a.mtx"); })
                .find("not a coordinate"), std::string::npos);
  EXPECT_NE(message_of([] { io::parse_mtx_sparse("%%MatrixMarket matrix coordinate real general\n3000000000 1 0\n", "h.mtx"); })
                .find("2^31 - 1"), std::string::npos);
  EXPECT_NE(message_of([] { io::parse_mtx_sparse("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "b.mtx"); })
                .find("out of range"), std::string::npos);
}

// scipy.sparse.save_npz files (make_npz_seeds.py): CSR deflated, and CSC stored with unsorted
// indices and a repeated position, both read as A's CSR (sorted, summed); read_matrix densifies;
// broken archives and members are refused naming the file and the member.
TEST(Io, ScipySparseNpzAsCsr) {
  const std::vector<std::int32_t> row_ptr{0, 2, 3, 5}, col_idx{0, 2, 3, 0, 1};
  const std::vector<float> values{1, 2, 3, 4, 5};
  for (const char* file : {"csr.npz", "csc_unsorted.npz"}) {
    const std::string path = kSeeds + "/npz/" + file;
    const auto read = io::read_matrix_or_csr(path);
    ASSERT_TRUE(std::holds_alternative<io::SparseMatrix>(read)) << file;
    const auto& a = std::get<io::SparseMatrix>(read);
    EXPECT_EQ(a.rows, 3) << file;
    EXPECT_EQ(a.cols, 4) << file;
    EXPECT_EQ(a.row_ptr, row_ptr) << file;
    EXPECT_EQ(a.col_idx, col_idx) << file;
    EXPECT_EQ(a.values, values) << file;
    const io::DenseMatrix d = io::read_matrix(path);
    ASSERT_EQ(d.data.size(), 12u) << file;
    EXPECT_EQ(d.data[2 + 3 * 0], 4.0f) << file;  // A(2, 0)
    EXPECT_EQ(d.data[1 + 3 * 3], 3.0f) << file;  // A(1, 3)
    EXPECT_EQ(d.data[1 + 3 * 0], 0.0f) << file;
  }
  const auto problem = [](const std::string& file) {
    return message_of([&] { io::read_matrix_or_csr(kSeeds + "/npz/" + file); });
  };
  EXPECT_NE(problem("coo.npz").find("'coo' matrix"), std::string::npos) << problem("coo.npz");
  EXPECT_NE(problem("bad_index.npz").find("indices.npy[1] = 4"), std::string::npos) << problem("bad_index.npz");
  EXPECT_NE(problem("bad_indptr.npz").find("indptr.npy[2] = 2"), std::string::npos) << problem("bad_indptr.npz");
  EXPECT_NE(problem("no_format.npz").find("holds no format.npy"), std::string::npos) << problem("no_format.npz");
  const std::string whole = io::read_file(kSeeds + "/npz/csr.npz");
  const std::string cut = message_of([&] { io::parse_npz_sparse(whole.substr(0, whole.size() / 2), "cut.npz"); });
  EXPECT_NE(cut.find("'cut.npz'"), std::string::npos) << cut;
  EXPECT_NE(cut.find("zip archive"), std::string::npos) << cut;
  std::string flipped = whole;
  flipped[flipped.find("indices.npy") + 40] ^= 0x55;  // inside the deflated member: its CRC-32 fails
  const std::string crc = message_of([&] { io::parse_npz_sparse(flipped, "crc.npz"); });
  EXPECT_NE(crc.find("'crc.npz': indices.npy: CRC error"), std::string::npos) << crc;
  EXPECT_EQ(crc.find(".npy header"), std::string::npos) << crc;  // refused as corrupt, not parsed
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
