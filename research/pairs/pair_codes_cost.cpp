// What second-order (pair) filters would add to prediction (issue 20, research/defaults/history.md
// "Eleventh round"): per row, order the ρ winners by a fixed unit priority, mix r·ρ pairs to
// cells of a unit-major M × L float table (prefetched), and sum the L values of each cell;
// against the unit filter's ρ reads of an m × L double table. Fashion-MNIST's shapes
// (m = 131072, ρ = 128, L = 10, r = 4, M = 8m); random winners, one thread. A standalone
// loop, not the library: the cost the library's version would have to match or beat.
// Build and run: g++ -O2 -march=native -o /tmp/pair_codes_cost research/pairs/pair_codes_cost.cpp && /tmp/pair_codes_cost
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>
#include <algorithm>
static inline uint64_t mix(uint64_t k){k^=k>>30;k*=0xBF58476D1CE4E5B9ull;k^=k>>27;k*=0x94D049BB133111EBull;return k^(k>>31);}
int main(int argc,char**argv){
  const uint32_t m=131072,rho=128,L=10,r=4; const uint32_t M=8*m; const int n=10000;
  std::mt19937_64 g(1);
  std::vector<double> unit(size_t(m)*L); for(auto&v:unit) v=double(g()%1000)/1000;
  std::vector<float> pair(size_t(M)*L); for(auto&v:pair) v=float(g()%1000)/1000;
  std::vector<uint32_t> prio(m); for(uint32_t i=0;i<m;++i) prio[i]=uint32_t(mix(i)>>32);
  std::vector<uint32_t> W(size_t(n)*rho); for(int i=0;i<n;++i){ std::vector<uint32_t> w(rho); for(auto&x:w) x=g()%m; std::sort(w.begin(),w.end()); std::copy(w.begin(),w.end(),W.begin()+size_t(i)*rho);}
  double sink=0;
  for(int rep=0;rep<3;++rep){
  auto t0=std::chrono::steady_clock::now();
  for(int i=0;i<n;++i){ double s[L]={}; const uint32_t* w=&W[size_t(i)*rho];
    for(uint32_t k=0;k<rho;++k){const double* t=&unit[size_t(w[k])*L]; for(uint32_t l=0;l<L;++l) s[l]+=t[l];}
    sink+=s[0];}
  auto t1=std::chrono::steady_clock::now();
  for(int i=0;i<n;++i){ double s[L]={}; const uint32_t* w0=&W[size_t(i)*rho];
    uint32_t w[rho]; std::copy(w0,w0+rho,w); std::sort(w,w+rho,[&](uint32_t a,uint32_t b){return prio[a]<prio[b];});
    uint32_t cell[rho*r]; uint32_t c=0;
    for(uint32_t k=0;k<rho;++k) for(uint32_t j=1;j<=r;++j){ uint32_t a=w[k],b=w[(k+j)%rho]; uint64_t lo=std::min(a,b),hi=std::max(a,b);
      cell[c]=uint32_t(mix(lo*m+hi)%M); __builtin_prefetch(&pair[size_t(cell[c])*L]); ++c;}
    for(uint32_t q=0;q<c;++q){ const float* t=&pair[size_t(cell[q])*L]; for(uint32_t l=0;l<L;++l) s[l]+=t[l];}
    sink+=s[0];}
  auto t2=std::chrono::steady_clock::now();
  printf("unit filter reads: %.2f us/row; pair codes (sort + %u mixes + reads): %.2f us/row\n",
    std::chrono::duration<double,std::micro>(t1-t0).count()/n, r*rho, std::chrono::duration<double,std::micro>(t2-t1).count()/n);
  }
  return sink==12345.0;
}
