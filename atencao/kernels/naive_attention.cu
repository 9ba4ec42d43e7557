// v0 -- atenção causal ingênua em CUDA C: o ponto de partida do capítulo 13.
//
// O que calcula: para cada cabeça (B*H delas), com Q, K, V de forma (N, d),
//     scores = Q K^T / sqrt(d)          (N, N)  -> escrita na memória global
//     P      = softmax(máscara(scores))  (N, N)  -> escrita por cima de scores
//     O      = P V                       (N, d)
// em três kernels, cada um com UMA thread por elemento (ou por linha), sem
// memória compartilhada e sem tensor cores. É a fórmula do capítulo 5
// traduzida literalmente.
//
// FLOPs: 4·B·H·N²·d (dois produtos de matrizes), o mesmo que o FlashAttention;
//        com máscara causal, metade seria suficiente, mas aqui as posições
//        mascaradas são calculadas e jogadas fora.
// Bytes (float32, b = 4): a matriz N x N vai à memória global e volta várias
//        vezes: escrita (kernel 1); lida três vezes e escrita duas (kernel 2: os
//        laços do máximo, da exponencial e da divisão); lida (kernel 3). São
//        pelo menos 4·B·H·N²·b (as releituras do kernel 2 podem vir do
//        cache). Fora isso, nenhuma thread compartilha o que lê: no kernel 1,
//        cada uma das N² threads lê q_i e k_j (2·d números); no kernel 3, cada
//        uma das N·d threads lê uma linha de P e uma coluna de V (2·N
//        números): 2·N²·d leituras por cabeça em cada um, amortizadas só pelo
//        cache L2.
//        Com B = 4, H = 32, N = 8192: só a matriz ocupa 32 GiB em float32.
//
// Índices: size_t (64 bits), não int. Com B = 4, H = 32, N = 8192 a matriz tem
// 4·32·8192² ≈ 8,6·10⁹ elementos, e um int de 32 bits para em 2³¹ − 1 ≈ 2,1·10⁹:
// `blockIdx.x * blockDim.x + threadIdx.x` e `BH * N * N` em int transbordariam
// em silêncio, e o kernel leria e escreveria fora do lugar.
//
// Acessos (capítulo 13): numa warp, as threads vizinhas do kernel 1 leem k_j
// com passo d, e as do kernel 2 leem e escrevem linhas a N floats umas das
// outras (acessos não agrupados); as do kernel 3 leem V em colunas seguidas.
//
// O que muda nas versões seguintes (em Triton, arquivos .py ao lado):
//   v1 softmax.py    a softmax por linha fundida num só kernel;
//   v2 flash_fwd.py  blocos de consultas, K e V em blocos, softmax online: a
//                    matriz N x N nunca vai à memória global;
//   v3 flash_bwd.py  o passo de volta; v4 decode.py  o KV cache com GQA.
//
// Como compilar e rodar (numa máquina com GPU NVIDIA):
//     nvcc -O2 -o naive_attention naive_attention.cu && ./naive_attention
// O programa gera entradas aleatórias, roda os três kernels e compara com uma
// referência na CPU (a maior diferença deve ficar perto de 1e-6).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                           \
    do {                                                                      \
        cudaError_t err_ = (call);                                            \
        if (err_ != cudaSuccess) {                                            \
            fprintf(stderr, "erro CUDA em %s:%d: %s\n", __FILE__, __LINE__,   \
                    cudaGetErrorString(err_));                                \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

// Kernel 1: uma thread por par (i, j) de uma cabeça bh.
// q, k: (BH, N, d); scores: (BH, N, N).
__global__ void scores_kernel(const float* q, const float* k, float* scores,
                              int BH, int N, int d_k, int causal) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (size_t)BH * N * N) return;
    int j = (int)(idx % N);
    int i = (int)((idx / N) % N);
    size_t bh = idx / ((size_t)N * N);
    const float* qi = q + (bh * N + i) * d_k;
    const float* kj = k + (bh * N + j) * d_k;
    float dot = 0.0f;
    for (int c = 0; c < d_k; c++) dot += qi[c] * kj[c];
    float s = dot * (1.0f / sqrtf((float)d_k));
    if (causal && j > i) s = -INFINITY;  // o futuro é proibido
    scores[idx] = s;  // scores[i][j] da cabeça bh
}

// Kernel 2: uma thread por linha; softmax estável, sobre a própria matriz (in-place).
__global__ void softmax_kernel(float* scores, int BH, int N) {
    size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= (size_t)BH * N) return;
    float* x = scores + row * N;
    float m = -INFINITY;
    for (int j = 0; j < N; j++) m = fmaxf(m, x[j]);
    float sum = 0.0f;
    for (int j = 0; j < N; j++) {
        x[j] = expf(x[j] - m);  // exp(-inf) = 0 nas posições mascaradas
        sum += x[j];
    }
    for (int j = 0; j < N; j++) x[j] /= sum;
}

// Kernel 3: uma thread por elemento (i, c) da saída: O[i][c] = sum_j P[i][j] V[j][c].
__global__ void mix_kernel(const float* p, const float* v, float* out,
                           int BH, int N, int d_k) {
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (size_t)BH * N * d_k) return;
    int c = (int)(idx % d_k);
    int i = (int)((idx / d_k) % N);
    size_t bh = idx / ((size_t)N * d_k);
    const float* pi = p + (bh * N + i) * N;
    const float* vb = v + bh * N * d_k;
    float acc = 0.0f;
    for (int j = 0; j < N; j++) acc += pi[j] * vb[(size_t)j * d_k + c];
    out[idx] = acc;
}

// Referência na CPU (mesmo algoritmo, em double), para validar antes de medir.
static void attention_cpu(const float* q, const float* k, const float* v, float* out,
                          int BH, int N, int d_k, int causal) {
    double* s = (double*)malloc(sizeof(double) * N);
    for (int bh = 0; bh < BH; bh++)
        for (int i = 0; i < N; i++) {
            double m = -INFINITY, sum = 0.0;
            for (int j = 0; j < N; j++) {
                double dot = 0.0;
                for (int c = 0; c < d_k; c++)
                    dot += (double)q[((size_t)bh * N + i) * d_k + c] * k[((size_t)bh * N + j) * d_k + c];
                s[j] = (causal && j > i) ? -INFINITY : dot / sqrt((double)d_k);
                if (s[j] > m) m = s[j];
            }
            for (int j = 0; j < N; j++) { s[j] = exp(s[j] - m); sum += s[j]; }
            for (int c = 0; c < d_k; c++) {
                double acc = 0.0;
                for (int j = 0; j < N; j++) acc += s[j] / sum * v[((size_t)bh * N + j) * d_k + c];
                out[((size_t)bh * N + i) * d_k + c] = (float)acc;
            }
        }
    free(s);
}

int main(void) {
    // N = 100 de propósito: não é múltiplo de 256, o tamanho do bloco de threads.
    const int B = 2, H = 4, N = 100, d_k = 64, causal = 1;
    const int BH = B * H;
    size_t n_qkv = (size_t)BH * N * d_k, n_s = (size_t)BH * N * N;
    float *q = (float*)malloc(n_qkv * sizeof(float)), *k = (float*)malloc(n_qkv * sizeof(float));
    float *v = (float*)malloc(n_qkv * sizeof(float)), *out = (float*)malloc(n_qkv * sizeof(float));
    float *ref = (float*)malloc(n_qkv * sizeof(float));
    srand(0);
    for (size_t t = 0; t < n_qkv; t++) {
        q[t] = 2.0f * rand() / RAND_MAX - 1.0f;
        k[t] = 2.0f * rand() / RAND_MAX - 1.0f;
        v[t] = 2.0f * rand() / RAND_MAX - 1.0f;
    }
    float *dq, *dk, *dv, *ds, *dout;
    CHECK(cudaMalloc(&dq, n_qkv * sizeof(float)));
    CHECK(cudaMalloc(&dk, n_qkv * sizeof(float)));
    CHECK(cudaMalloc(&dv, n_qkv * sizeof(float)));
    CHECK(cudaMalloc(&dout, n_qkv * sizeof(float)));
    CHECK(cudaMalloc(&ds, n_s * sizeof(float)));  // a matriz N x N, na memória global
    CHECK(cudaMemcpy(dq, q, n_qkv * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dk, k, n_qkv * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dv, v, n_qkv * sizeof(float), cudaMemcpyHostToDevice));

    const int T = 256;  // threads por bloco
    scores_kernel<<<(unsigned)((n_s + T - 1) / T), T>>>(dq, dk, ds, BH, N, d_k, causal);
    softmax_kernel<<<(unsigned)(((size_t)BH * N + T - 1) / T), T>>>(ds, BH, N);
    mix_kernel<<<(unsigned)((n_qkv + T - 1) / T), T>>>(ds, dv, dout, BH, N, d_k);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, n_qkv * sizeof(float), cudaMemcpyDeviceToHost));

    attention_cpu(q, k, v, ref, BH, N, d_k, causal);
    double worst = 0.0;
    for (size_t t = 0; t < n_qkv; t++) worst = fmax(worst, fabs((double)out[t] - ref[t]));
    printf("B=%d H=%d N=%d d_k=%d causal=%d: maior diferença GPU x CPU = %.3g\n",
           B, H, N, d_k, causal, worst);

    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dout); cudaFree(ds);
    free(q); free(k); free(v); free(out); free(ref);
    return worst < 1e-4 ? 0 : 1;
}
