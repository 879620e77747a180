// Fortran LAPACK/BLAS entry points the portable backend calls on the host (column-major, 32-bit integers).
#pragma once

extern "C" {
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda, int* info);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb);
void sgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info);
void sgesvj_(const char* joba, const char* jobu, const char* jobv, const int* m, const int* n, float* a,
             const int* lda, float* sva, const int* mv, float* v, const int* ldv, float* work, const int* lwork,
             int* info);
void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* info);
}

extern "C" {
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info);
}

namespace randnla {
namespace portable {
namespace lapack {

// geqrf and orgqr by element type, for the families typed over it.
inline void geqrf(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
                  int* info) {
  sgeqrf_(m, n, a, lda, tau, work, lwork, info);
}
inline void geqrf(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
                  int* info) {
  dgeqrf_(m, n, a, lda, tau, work, lwork, info);
}
inline void orgqr(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
                  const int* lwork, int* info) {
  sorgqr_(m, n, k, a, lda, tau, work, lwork, info);
}
inline void orgqr(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
                  const int* lwork, int* info) {
  dorgqr_(m, n, k, a, lda, tau, work, lwork, info);
}

}  // namespace lapack
}  // namespace portable
}  // namespace randnla
