// FP32 FMA peak of this machine: 12 independent FMA chains per thread.
// Build and run (256-bit AVX2 and 512-bit AVX-512 variants, 1 and 2 threads):
//   gcc -O2 -mavx512f -mfma -pthread scripts/fma_peak.c -o /tmp/p256
//   gcc -O2 -DWIDE -mavx512f -mfma -pthread scripts/fma_peak.c -o /tmp/p512
//   /tmp/p256 2; /tmp/p512 2
// The figure is the denominator of the "% of peak" columns in BENCHMARKS.md.
#include <immintrin.h>
#include <stdio.h>
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 100000000L
#ifdef WIDE
typedef __m512 V; 
#define FMA _mm512_fmadd_ps
#define SET _mm512_set1_ps
#define LANES 16
#else
typedef __m256 V;
#define FMA _mm256_fmadd_ps
#define SET _mm256_set1_ps
#define LANES 8
#endif
static void* run(void*arg){
  V b=SET(1.0000001f), c=SET(1e-7f);
  V a0=SET(0),a1=SET(1),a2=SET(2),a3=SET(3),a4=SET(4),a5=SET(5),a6=SET(6),a7=SET(7),a8=SET(8),a9=SET(9),a10=SET(10),a11=SET(11);
  for(long n=0;n<N;n++){
    a0=FMA(a0,b,c);a1=FMA(a1,b,c);a2=FMA(a2,b,c);a3=FMA(a3,b,c);a4=FMA(a4,b,c);a5=FMA(a5,b,c);
    a6=FMA(a6,b,c);a7=FMA(a7,b,c);a8=FMA(a8,b,c);a9=FMA(a9,b,c);a10=FMA(a10,b,c);a11=FMA(a11,b,c);
    __asm__ volatile("" : "+v"(a0),"+v"(a1),"+v"(a2),"+v"(a3),"+v"(a4),"+v"(a5));
  }
  float t[LANES]; V s=a0+a1+a2+a3+a4+a5+a6+a7+a8+a9+a10+a11; *(V*)t=s; *(float*)arg=t[0];
  return 0;
}
int main(int argc,char**argv){
  int th=atoi(argv[1]); pthread_t t[8]; float o[8];
  double t0=now();
  for(int i=0;i<th;i++) pthread_create(&t[i],0,run,&o[i]);
  for(int i=0;i<th;i++) pthread_join(t[i],0);
  double dt=now()-t0;
  printf("threads %d lanes %d: %.1f GFLOP/s (%.2fs)\n",th,LANES,(double)th*N*12*LANES*2/dt/1e9,dt);
}
