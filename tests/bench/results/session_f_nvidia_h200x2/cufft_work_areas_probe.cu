// cuFFT work-area sizes of the plans Lattica makes, at given sizes (diagnostic, not project code).
#include <cufft.h>
#include <cstdio>
#include <cstdlib>
static size_t plan(int rank, long long* n, long long* inembed, long long istride, long long idist,
                   long long* onembed, long long ostride, long long odist, cufftType t,
                   long long batch) {
  cufftHandle h;
  size_t work = 0;
  if (cufftCreate(&h) != CUFFT_SUCCESS) {
    printf("create failed\n");
    exit(1);
  }
  cufftSetAutoAllocation(h, 0);
  cufftResult r = cufftMakePlanMany64(h, rank, n, inembed, istride, idist, onembed, ostride, odist,
                                      t, batch, &work);
  if (r != CUFFT_SUCCESS) printf("  plan failed %d\n", (int)r);
  cufftDestroy(h);
  return work;
}
int main() {
  long long single[] = {384, 1024, 1152, 1184};
  for (long long N : single) {
    long long n[3] = {N, N, N};
    double sites = double(N) * N * N;
    long long real = N * N * N, cplx = N * N * (N / 2 + 1);
    size_t f = plan(3, n, nullptr, 1, real, nullptr, 1, cplx, CUFFT_D2Z, 1);
    size_t i = plan(3, n, nullptr, 1, cplx, nullptr, 1, real, CUFFT_Z2D, 1);
    printf("single %lld^3: D2Z work %.2f B/site, Z2D work %.2f B/site\n", N, f / sites, i / sites);
  }
  long long cases[][2] = {{768, 384}, {1344, 1344}, {1376, 1376}, {1408, 1408}};
  for (auto& c : cases) {
    long long L0 = c[0], L = c[1], rows = L0 / 2;
    long long n[2] = {L, L};
    double share = double(rows) * L * L;
    long long real = L * L, cplx = L * (L / 2 + 1);
    size_t f = plan(2, n, nullptr, 1, real, nullptr, 1, cplx, CUFFT_D2Z, rows);
    size_t i = plan(2, n, nullptr, 1, cplx, nullptr, 1, real, CUFFT_Z2D, rows);
    long long lines = (cplx + 1) / 2, len = L0, embed = L0;
    size_t col = plan(1, &len, &embed, lines, 1, &embed, lines, 1, CUFFT_Z2Z, lines);
    printf("2 ranks %lldx%lld^2: rows D2Z %.2f, Z2D %.2f, columns Z2Z %.2f B/site of the share\n",
           L0, L, f / share, i / share, col / share);
  }
  size_t fr = 0, tot = 0;
  cudaMemGetInfo(&fr, &tot);
  printf("free %zu MiB of %zu\n", fr >> 20, tot >> 20);
}
